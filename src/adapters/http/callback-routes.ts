/**
 * The two callback routes (docs/semantics.md#completion, docs/api.md, docs/security.md): no bearer token, each authenticated by the per-run secret
 * in its URL (`callback-tokens.ts`). A wrong token, an unknown run and a run of another kind all answer
 * the same 404, so the routes reveal nothing about runs to a caller without the secret.
 *
 * - `POST /v1/runs/{id}/complete?token=`: a webhook receiver that answered 202 reports the verdict.
 * - `POST /v1/hooks/agent/{server}?run=&token=`: an agent server's run webhook (the finished Run object).
 *   Polling the server stays the source of truth; this only makes completion prompt.
 *
 * The server name, the run and the token are checked before any of the body is read (`beforeBody`), so a
 * stranger's 16 MiB post costs a lookup, not a parse (docs/security.md#callback-routes).
 */
import type { FastifyRequest } from "fastify";
import { checkResultSize, checkStorableText } from "../../application/policy/limits.js";
import { parseWith } from "../../application/shapes/task-input.js";
import * as z from "zod";
import type { RunObservation } from "../../domain/ports/run-launcher.js";
import type { ClaimedRun } from "../../domain/ports/run-repository.js";
import type { RunChange, CompletionVerdict } from "../../domain/run-change.js";
import { IllegalTransitionError, NotFoundError, ValidationError } from "../../domain/errors.js";
import type { RunId } from "../../domain/ids.js";
import { runId as toRunId } from "../../domain/ids.js";
import type { JsonValue } from "../../domain/target.js";
import type { Instant } from "../../domain/time.js";
import { callbackTokenMatches } from "../callbacks/callback-tokens.js";
import type { CallbackPurpose } from "../callbacks/callback-tokens.js";
import { checkId } from "./route-helpers.js";
import { validSecrets } from "../../domain/task-secret.js";
import { defineRoute } from "./route-spec.js";
import type { ResponseSpec, RouteSpec } from "./route-spec.js";
import { problemSchema, runIdParams } from "./schemas.js";

/** What the callbacks need from the dispatch service. */
export interface CallbackDispatch {
  runWithTask(runId: RunId): Promise<ClaimedRun | null>;
  recordCompletion(
    runId: RunId,
    verdict: CompletionVerdict,
    now: Instant,
  ): Promise<RunChange | null>;
  recordTargetVerdict(
    runId: RunId,
    targetRunId: string,
    verdict: CompletionVerdict,
    now: Instant,
  ): Promise<RunChange | null>;
}

export interface CallbackRouteDeps {
  readonly dispatch: CallbackDispatch;
  readonly now: () => Instant;
  /** What an agent server's run webhook body says about the run. */
  readonly readAgentRun: (body: unknown) => RunObservation;
  /** Called after a verdict was recorded (wakes the coordinator: a slot may be free). */
  readonly recorded?: () => void;
}

/** The body an agent server's webhook may carry: the whole Run with the thread's final values. */
export const AGENT_HOOK_BODY_LIMIT = 16 * 1024 * 1024;

const problem = (description: string): ResponseSpec => ({ description, schema: problemSchema });
const NOT_FOUND = problem("no such run, or the token does not open it");

const completeQuery = z.strictObject({
  token: z.string().min(1).max(200).meta({ description: "the run's completion token" }),
});
const completeBody = z.strictObject({
  status: z.enum(["succeeded", "failed"]),
  result: z.unknown().optional(),
  error: z.string().max(10_000).nullable().optional(),
});
const hookParams = z.object({ server: z.string() });
const hookQuery = z.strictObject({
  run: z.string().min(1).max(128).meta({ description: "punctual's run id" }),
  token: z.string().min(1).max(200).meta({ description: "the run's hook token" }),
});
const hookBody = z.record(z.string(), z.unknown()).meta({
  description: "the agent server's Run object with its terminal `status` (and `error`)",
});
const callbackAnswer = z.object({
  id: z.string(),
  status: z.string(),
  recorded: z.boolean().meta({ description: "false when the run had already ended" }),
});

/** Reads a request's path or query with `schema` before its body is read (422 naming the field). */
function urlPart<T>(schema: z.ZodType<T>, value: unknown, where: "path" | "query"): T {
  return parseWith(schema, value, "", where);
}

export function callbackRoutes(deps: CallbackRouteDeps): RouteSpec[] {
  /** The run each request's URL opened, before its body was read (`beforeBody`). */
  const openedBy = new WeakMap<FastifyRequest, ClaimedRun>();
  /** The run the token opens, or the one 404 every failure answers. */
  const opened = async (
    id: string,
    purpose: CallbackPurpose,
    token: string,
    accepts: (item: ClaimedRun) => boolean,
  ): Promise<ClaimedRun> => {
    const runId = toRunId(checkId("run", id));
    const item = await deps.dispatch.runWithTask(runId);
    if (
      item === null ||
      !accepts(item) ||
      // During a rotation's grace, a token made under the replaced secret still opens its run.
      !validSecrets(item.task, deps.now()).some((secret) =>
        callbackTokenMatches(secret, purpose, runId, token),
      )
    ) {
      throw new NotFoundError("run", runId);
    }
    return item;
  };
  const answer = (item: ClaimedRun, change: RunChange | null) => {
    const recorded = change !== null && change.run.status !== item.run.status;
    if (recorded) deps.recorded?.();
    return {
      status: 200,
      body: { id: item.run.id, status: change?.run.status ?? item.run.status, recorded },
    };
  };
  return [
    defineRoute({
      method: "POST",
      url: "/v1/runs/:id/complete",
      operationId: "completeRun",
      summary: "Report a webhook run's verdict (the receiver answered 202)",
      tags: ["callbacks"],
      auth: false,
      callback: true,
      params: runIdParams,
      query: completeQuery,
      body: completeBody,
      beforeBody: async (request) => {
        const { id } = urlPart(runIdParams, request.params, "path");
        const { token } = urlPart(completeQuery, request.query, "query");
        openedBy.set(
          request,
          await opened(id, "complete", token, ({ task }) => task.target.kind === "webhook"),
        );
      },
      responses: {
        200: {
          description: "the verdict was taken (or the run had already ended)",
          schema: callbackAnswer,
        },
        404: NOT_FOUND,
        409: problem("the run has not been launched"),
        413: problem("the body exceeds 1 MiB"),
        415: problem("the body is not application/json"),
        422: problem("validation failed, or the result exceeds 64 KiB or nests deeper than 64"),
        429: problem("too many callbacks, or failed attempts, from this address"),
      },
      handler: async (ctx) => {
        const item =
          openedBy.get(ctx.request) ??
          (await opened(
            ctx.params.id,
            "complete",
            ctx.query.token,
            ({ task }) => task.target.kind === "webhook",
          ));
        const result = ctx.body.result ?? null;
        checkResultSize(result);
        checkStorableText(ctx.body.error ?? null, "error");
        if (item.run.status === "queued") {
          // Not launched (or queued again after a failed attempt): nothing of it can have finished.
          throw new IllegalTransitionError("run", "queued", ctx.body.status);
        }
        const change = await deps.dispatch.recordCompletion(
          item.run.id,
          {
            status: ctx.body.status,
            result: result as JsonValue,
            error: ctx.body.error ?? null,
          },
          deps.now(),
        );
        return answer(item, change);
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/hooks/agent/:server",
      operationId: "agentRunHook",
      summary: "An agent server's run webhook (the finished run)",
      tags: ["callbacks"],
      auth: false,
      callback: true,
      params: hookParams,
      query: hookQuery,
      body: hookBody,
      beforeBody: async (request) => {
        const { server } = urlPart(hookParams, request.params, "path");
        const { run, token } = urlPart(hookQuery, request.query, "query");
        openedBy.set(
          request,
          await opened(
            run,
            "agent-hook",
            token,
            ({ task }) => task.target.kind === "agent" && task.target.server === server,
          ),
        );
      },
      bodyLimit: AGENT_HOOK_BODY_LIMIT,
      acceptsTextJson: true,
      responses: {
        200: {
          description: "the verdict was taken, or the run is still active",
          schema: callbackAnswer,
        },
        404: NOT_FOUND,
        422: problem("the body is not a finished run of this server, or nests deeper than 64"),
        429: problem("too many callbacks, or failed attempts, from this address"),
      },
      handler: async (ctx) => {
        const item =
          openedBy.get(ctx.request) ??
          (await opened(
            ctx.query.run,
            "agent-hook",
            ctx.query.token,
            ({ task }) => task.target.kind === "agent" && task.target.server === ctx.params.server,
          ));
        const targetRunId = ctx.body["run_id"];
        if (typeof targetRunId !== "string" || targetRunId === "") {
          throw ValidationError.of("run_id", "the body must name the agent server's run_id");
        }
        // A run the server says punctual launched for another run is not this run's verdict.
        const metadata = ctx.body["metadata"];
        const launchedFor =
          typeof metadata === "object" && metadata !== null
            ? (metadata as Record<string, unknown>)["punctual_run_id"]
            : undefined;
        if (typeof launchedFor === "string" && launchedFor !== item.run.id) {
          return answer(item, null);
        }
        // An uncertain launch learns its server run only from proof: a run tagged with this attempt
        // (an earlier attempt's run carries the same punctual run id), docs/targets.md#uncertain-launches.
        const attempt =
          typeof metadata === "object" && metadata !== null
            ? (metadata as Record<string, unknown>)["punctual_attempt"]
            : undefined;
        if (item.run.targetRunId === null && attempt !== item.run.attempt) {
          return answer(item, null);
        }
        const seen = deps.readAgentRun(ctx.body);
        if (seen.kind !== "finished") return answer(item, null);
        const change = await deps.dispatch.recordTargetVerdict(
          item.run.id,
          targetRunId,
          seen.verdict,
          deps.now(),
        );
        return answer(item, change);
      },
    }),
  ];
}
