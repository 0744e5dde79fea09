/**
 * LangGraph's crons API (`serve --langgraph-api SERVER`, docs/targets.md#langgraph-crons) under
 * `/langgraph/SERVER`: the routes the official SDK's `client.crons` calls, with its bodies and its `Cron`
 * answers, over punctual's agent tasks, calling the TaskService like every other route (it owns the
 * rules: owners, validation, quotas). The token comes in `x-api-key` (what the SDK sends) or
 * `Authorization: Bearer`. Errors are `{"detail": "..."}`, as LangGraph's servers answer. Not in the
 * OpenAPI document (it describes `/v1`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Actor } from "../../application/access/actor.js";
import type { TaskService } from "../../application/tasks/task-service.js";
import type { TaskView } from "../../application/shapes/view-mappers.js";
import { isPunctualError, NotFoundError, ValidationError } from "../../domain/errors.js";
import { threadId as toThreadId } from "../../domain/ids.js";
import type { Instant } from "../../domain/time.js";
import {
  cronCountBody,
  cronCreateBody,
  cronSearchBody,
  cronTaskInputOf,
  cronTaskPatchOf,
  cronUpdateBody,
  cronView,
  isCronTask,
  LangGraphRefusal,
  matchesCron,
  searchAnswer,
} from "./langgraph-crons-views.js";
import type { LangGraphTarget } from "./langgraph-crons-views.js";
import { outageAnswer } from "./http-reply.js";
import { problemFromError } from "./problem.js";

export type { LangGraphTarget } from "./langgraph-crons-views.js";

export interface LangGraphCronRouteDeps {
  readonly tasks: TaskService;
  readonly now: () => Instant;
  readonly target: LangGraphTarget;
  /** The caller authenticated by the app's token hook. */
  readonly actorOf: (request: FastifyRequest) => Actor | null;
}

const PAGE = 200;

/** The prefix the routes of `server` are served under. */
export function langGraphPrefix(server: string): string {
  return `/langgraph/${encodeURIComponent(server)}`;
}

/** Registers the crons routes under the server's prefix, with their own error answers. */
export async function registerLangGraphCronRoutes(
  app: FastifyInstance,
  deps: LangGraphCronRouteDeps,
): Promise<void> {
  await app.register(
    (api, _opts, done) => {
      api.setErrorHandler((error: unknown, request, reply) => sendError(error, request, reply));
      routes(api, deps);
      done();
    },
    { prefix: langGraphPrefix(deps.target.server) },
  );
}

function routes(api: FastifyInstance, deps: LangGraphCronRouteDeps): void {
  const { tasks, now, target } = deps;
  const config = { config: { auth: true, apiKey: true } };
  const actor = (request: FastifyRequest): Actor => {
    const found = deps.actorOf(request);
    if (found === null) throw new LangGraphRefusal(401, "Authentication required");
    return found;
  };
  const find = async (request: FastifyRequest, id: string): Promise<TaskView> => {
    const task = await tasks.get(actor(request), id).catch((error: unknown) => {
      throw isPunctualError(error) && error.code === "not_found" ? cronNotFound(id) : error;
    });
    if (!isCronTask(task, target)) throw cronNotFound(id);
    return task;
  };
  const create = async (request: FastifyRequest, thread: string | null) => {
    const body = parseWith(cronCreateBody, request.body);
    const input = cronTaskInputOf(body, target, thread);
    const who = actor(request);
    const created = await tasks.create(who, input, now()).catch((error: unknown) => {
      throw thread !== null && isThreadNotFound(error)
        ? new LangGraphRefusal(404, `Thread ${thread} not found`)
        : error;
    });
    // LangGraph creates a cron disabled in one call; punctual pauses it right after.
    const task =
      body.enabled === false ? await tasks.pause(who, created.task.id, {}, now()) : created.task;
    return cronView(task);
  };

  api.post<{ Params: { thread_id: string } }>(
    "/threads/:thread_id/runs/crons",
    config,
    async (request) => create(request, request.params.thread_id),
  );

  api.post("/runs/crons", config, async (request) => create(request, null));

  api.post("/runs/crons/search", config, async (request) => {
    const search = parseWith(cronSearchBody, request.body ?? {});
    const crons = await allCrons(tasks, actor(request), target, search.thread_id ?? undefined);
    const found = crons.map(cronView).filter((cron) => matchesCron(cron, search));
    return searchAnswer(found, search, new Date(now()).toISOString());
  });

  api.post("/runs/crons/count", config, async (request) => {
    const filter = parseWith(cronCountBody, request.body ?? {});
    const crons = await allCrons(tasks, actor(request), target, filter.thread_id ?? undefined);
    return crons.map(cronView).filter((cron) => matchesCron(cron, filter)).length;
  });

  api.patch<{ Params: { cron_id: string } }>("/runs/crons/:cron_id", config, async (request) => {
    const body = parseWith(cronUpdateBody, request.body ?? {});
    const who = actor(request);
    let task = await find(request, request.params.cron_id);
    const patch = cronTaskPatchOf(body, task);
    if (Object.keys(patch).length > 0) {
      task = (await tasks.update(who, task.id, patch, null, now())).task;
    }
    if (body.enabled === false && task.status === "enabled") {
      task = await tasks.pause(who, task.id, {}, now());
    } else if (body.enabled === true && task.status === "paused") {
      // A cron turned back on fires from now on, as LangGraph's does (what fell in the pause is skipped).
      task = await tasks.resume(who, task.id, { catchUp: "none" }, now());
    }
    return cronView(task);
  });

  // A cron with a run in progress goes once that run has ended (LangGraph deletes the cron, not the run).
  api.delete<{ Params: { cron_id: string } }>(
    "/runs/crons/:cron_id",
    config,
    async (request, reply) => {
      const task = await find(request, request.params.cron_id);
      await tasks.delete(actor(request), task.id, { afterRun: true }, now());
      return reply.code(204).send();
    },
  );
}

/** The caller's crons on the server (bound to `thread` if given). */
async function allCrons(
  tasks: TaskService,
  actor: Actor,
  target: LangGraphTarget,
  thread?: string,
): Promise<TaskView[]> {
  const found: TaskView[] = [];
  let cursor: string | undefined;
  do {
    const page = await tasks.list(actor, {
      limit: PAGE,
      targetKind: "agent",
      ...(thread === undefined
        ? {}
        : { thread: { threadScope: `agent:${target.server}`, threadId: toThreadId(thread) } }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    found.push(...page.items.filter((task) => isCronTask(task, target)));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

function cronNotFound(id: string): LangGraphRefusal {
  return new LangGraphRefusal(404, `Cron ${id} not found`);
}

function isThreadNotFound(error: unknown): boolean {
  return error instanceof NotFoundError && error.resource === "thread";
}

function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues
    .map((issue) => `${issue.path.map(String).join(".") || "body"}: ${issue.message}`)
    .join("; ");
  throw new LangGraphRefusal(422, detail);
}

/** punctual's field names as a cron's client knows them. */
function cronField(field: string): string {
  return field
    .replace(/^schedule\.cron.*/, "schedule")
    .replace(/^schedule\.end_at$/, "end_time")
    .replace(/^schedule\.timezone$/, "timezone")
    .replace(/^target\.assistant_id$/, "assistant_id")
    .replace(/^target\./, "")
    .replace(/^context\.thread_id$/, "thread_id");
}

/** Every error as `{"detail": "..."}`, with the status punctual's own API would answer. */
function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof LangGraphRefusal) {
    return reply.code(error.status).send({ detail: error.detail });
  }
  if (error instanceof ValidationError) {
    const detail = error.errors.map((e) => `${cronField(e.field)}: ${e.message}`).join("; ");
    return reply.code(422).send({ detail });
  }
  const outage = outageAnswer(error, request);
  if (outage !== null) {
    // The platform's own error shape, with the 503 and Retry-After /v1 answers.
    return reply.code(503).headers(outage.headers).send({ detail: outage.detail });
  }
  const problem = problemFromError(error);
  if (problem === null) {
    request.log.error({ err: error }, "unexpected error answering a LangGraph crons request");
    return reply.code(500).send({ detail: "Internal Server Error" });
  }
  if (problem.status === 401) return reply.code(401).send({ detail: "Authentication required" });
  const headers = problem.status === 429 ? retryAfterOf(error) : {};
  return reply.code(problem.status).headers(headers).send({ detail: problem.detail });
}

function retryAfterOf(error: unknown): Record<string, string> {
  const headers = (error as { extra?: { headers?: Record<string, string> } }).extra?.headers;
  return headers ?? {};
}
