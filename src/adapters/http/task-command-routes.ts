/**
 * The task commands (docs/api.md): pause, resume and cancel (each answers with the task and its ETag),
 * trigger and backfill (each answers 202 with the runs it queued).
 */
import {
  backfillResultSchema,
  rotatedSecretSchema,
  runViewSchema,
  taskViewSchema,
} from "../../application/shapes/view-schemas.js";
import type { z } from "zod";
import type { Actor } from "../../application/access/actor.js";
import { pauseOptionsOf, resumeOptionsOf } from "../../application/scheduler-api.js";
import type { TaskView } from "../../application/shapes/view-mappers.js";
import { idempotencyKeyOf, idempotent } from "./idempotency.js";
import { actorOf, checkId } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import {
  backfillBody,
  emptyBody,
  emptyQuery,
  pauseBody,
  resumeBody,
  rotateSecretBody,
  taskIdParams,
} from "./schemas.js";
import { COMMON, IDEMPOTENCY, INVALID, NOT_FOUND, problem, withEtag } from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

export function taskCommandRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  return [
    statusCommand({
      verb: "pause",
      summary: "Pause: no new occurrences; queued runs cancelled",
      body: pauseBody,
      answer: "the paused task",
      run: (actor, id, body) => tasks.pause(actor, id, pauseOptionsOf(body ?? {}), now()),
    }),
    statusCommand({
      verb: "resume",
      summary: "Resume; occurrences inside the pause follow `catch_up` (default none)",
      body: resumeBody,
      answer: "the resumed task",
      run: (actor, id, body) => tasks.resume(actor, id, resumeOptionsOf(body ?? {}), now()),
    }),
    statusCommand({
      verb: "cancel",
      summary: "Cancel the task (terminal); queued runs cancelled",
      body: emptyBody,
      answer: "the cancelled task",
      run: (actor, id) => tasks.cancel(actor, id, now()),
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/trigger",
      operationId: "triggerTask",
      summary: "Run now: queues a manual run and answers at once (202)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: emptyBody,
      headers: [IDEMPOTENCY],
      responses: {
        202: { description: "the queued run", schema: runViewSchema },
        ...COMMON,
        404: NOT_FOUND,
        409: problem("an active run under overlap skip, or the key's first request in progress"),
        422: problem("bad Idempotency-Key, the key used for another request, or a body field"),
        400: problem("malformed request"),
      },
      handler: async (ctx) => {
        const actor = actorOf(ctx);
        const id = checkId("task", ctx.params.id);
        const key = idempotencyKeyOf(ctx.request.headers);
        return idempotent(
          deps.idempotency,
          { actor, route: `POST /v1/tasks/${id}/trigger`, key, body: ctx.request.body, now: now() },
          async () => ({
            status: 202,
            body: await tasks.trigger(
              actor,
              id,
              key === undefined ? {} : { idempotencyKey: key },
              now(),
            ),
          }),
        );
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/backfill",
      operationId: "backfillTask",
      summary: "Replay nominal times in [from, to) as backfill runs (at most 1,000)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: backfillBody,
      responses: {
        202: { description: "the queued runs", schema: backfillResultSchema },
        400: problem("malformed request"),
        ...COMMON,
        404: NOT_FOUND,
        422: INVALID,
      },
      handler: async (ctx) => ({
        status: 202,
        body: await tasks.backfill(actorOf(ctx), checkId("task", ctx.params.id), ctx.body, now()),
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/rotate-secret",
      operationId: "rotateTaskSecret",
      summary:
        "A new signing secret, shown once; the old one stays valid for `grace` (default 24 h)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: rotateSecretBody,
      responses: {
        200: { description: "the task and its new secret", schema: rotatedSecretSchema },
        400: problem("malformed request"),
        ...COMMON,
        404: NOT_FOUND,
        422: INVALID,
      },
      handler: async (ctx) => {
        const rotated = await tasks.rotateSecret(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          ctx.body ?? {},
          now(),
        );
        // Shown once: never cached by a proxy or the browser (docs/security.md#rotating-a-tasks-signing-secret).
        return {
          status: 200,
          body: rotated,
          headers: { ...withEtag(rotated.task), "cache-control": "no-store" },
        };
      },
    }),
  ];
}

/** A command that moves the task's status: answers with the task and its ETag. */
function statusCommand<B>(spec: {
  readonly verb: "pause" | "resume" | "cancel";
  readonly summary: string;
  readonly body: z.ZodType<B>;
  /** What the 200 answer holds. */
  readonly answer: string;
  readonly run: (actor: Actor, id: string, body: B) => Promise<TaskView>;
}): RouteSpec {
  return defineRoute({
    method: "POST",
    url: `/v1/tasks/:id/${spec.verb}`,
    operationId: `${spec.verb}Task`,
    summary: spec.summary,
    tags: ["tasks"],
    auth: true,
    params: taskIdParams,
    query: emptyQuery,
    body: spec.body,
    responses: {
      200: { description: spec.answer, schema: taskViewSchema },
      400: problem("malformed request"),
      ...COMMON,
      404: NOT_FOUND,
      409: problem("not allowed in the task's status"),
      422: INVALID,
    },
    handler: async (ctx) => {
      const task = await spec.run(actorOf(ctx), checkId("task", ctx.params.id), ctx.body);
      return { status: 200, body: task, headers: withEtag(task) };
    },
  });
}
