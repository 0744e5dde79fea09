/**
 * DeerFlow's scheduled-task routes (`serve --deerflow-api SERVER`, docs/targets.md#a-deerflow-compatible-api)
 * over punctual's agent tasks: `/api/scheduled-tasks...` and `/api/threads/{id}/scheduled-tasks` with
 * DeerFlow's bodies, views and FastAPI-style errors (`{"detail": ...}`), calling the TaskService like
 * every other route. Where DeerFlow's behaviour is one of its bugs or contradicts punctual's semantics,
 * punctual's wins; the docs list each deviation. Not in the OpenAPI document (it describes `/v1`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import * as z from "zod";
import type { Actor } from "../../application/access/actor.js";
import type { TaskService } from "../../application/tasks/task-service.js";
import type { TaskView } from "../../application/shapes/view-mappers.js";
import { isPunctualError, NotFoundError, ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import { threadId as toThreadId } from "../../domain/ids.js";
import type { Instant } from "../../domain/time.js";
import {
  createBody,
  DEERFLOW_THREAD_ID,
  DeerflowRefusal,
  isDeerflowTask,
  scheduledTaskRunView,
  scheduledTaskView,
  taskInputOf,
  taskPatchOf,
  updateBody,
} from "./deerflow-views.js";
import type { DeerflowTarget, LastRun } from "./deerflow-views.js";
import { outageAnswer } from "./http-reply.js";
import { problemFromError } from "./problem.js";

export type { DeerflowTarget } from "./deerflow-views.js";

export interface DeerflowRouteDeps {
  readonly tasks: TaskService;
  readonly now: () => Instant;
  readonly target: DeerflowTarget;
  /** The caller authenticated by the app's bearer-token hook. */
  readonly actorOf: (request: FastifyRequest) => Actor | null;
}

const PAGE = 200;
/**
 * The most tasks a list answers (docs/targets.md#a-deerflow-compatible-api): DeerFlow's lists have no
 * paging, so they answer the newest this many, read newest first without walking the rest.
 */
export const DEERFLOW_LIST_MAX = 200;
/** The deepest `offset` of a task's runs: an offset is walked, so it is bounded (a cursor is not). */
export const DEERFLOW_RUNS_OFFSET_MAX = 10_000;
const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(DEERFLOW_RUNS_OFFSET_MAX).default(0),
});
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(DEERFLOW_LIST_MAX).default(DEERFLOW_LIST_MAX),
});

/** Registers the routes under `/api`, with their own error and not-found answers. */
export async function registerDeerflowRoutes(
  app: FastifyInstance,
  deps: DeerflowRouteDeps,
): Promise<void> {
  await app.register(
    (api, _opts, done) => {
      api.setErrorHandler((error: unknown, request, reply) => sendError(error, request, reply));
      api.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: "Not Found" }));
      routes(api, deps);
      done();
    },
    { prefix: "/api" },
  );
}

function routes(api: FastifyInstance, deps: DeerflowRouteDeps): void {
  const { tasks, now, target } = deps;
  const actor = (request: FastifyRequest): Actor => {
    const found = deps.actorOf(request);
    if (found === null) throw new DeerflowRefusal(401, "Authentication required");
    return found;
  };
  const auth = { config: { auth: true } };
  const find = async (request: FastifyRequest, id: string): Promise<TaskView> => {
    const task = await tasks.get(actor(request), id).catch((error: unknown) => {
      throw isPunctualError(error) && error.code === "not_found" ? taskNotFound() : error;
    });
    if (!isDeerflowTask(task, target)) throw taskNotFound();
    return task;
  };
  const view = async (request: FastifyRequest, task: TaskView) =>
    scheduledTaskView(task, await lastRunOf(tasks, actor(request), task));

  api.get("/scheduled-tasks", auth, async (request) => {
    const query = parseWith(listQuery, request.query, "query");
    const mine = await newestTasks(tasks, actor(request), target, query.limit);
    return Promise.all(mine.map((task) => view(request, task)));
  });

  api.post("/scheduled-tasks", auth, async (request) => {
    const body = parseWith(createBody, request.body);
    const created = await tasks
      .create(actor(request), taskInputOf(body, target), now())
      .catch((error: unknown) => {
        throw deerflowTexts(error, body.timezone, body.schedule_spec["run_at"], now());
      });
    return view(request, created.task);
  });

  api.get<{ Params: { id: string } }>("/scheduled-tasks/:id", auth, async (request) =>
    view(request, await find(request, request.params.id)),
  );

  api.patch<{ Params: { id: string } }>("/scheduled-tasks/:id", auth, async (request) => {
    const body = parseWith(updateBody, request.body ?? {});
    const current = await find(request, request.params.id);
    const patch = taskPatchOf(body, current, target);
    if (Object.keys(patch).length === 0) return view(request, current);
    const updated = await tasks
      .update(actor(request), current.id, patch, null, now())
      .catch((error: unknown) => {
        const zone = body.timezone ?? (current.schedule as { timezone?: unknown }).timezone;
        throw deerflowTexts(error, zone, body.schedule_spec?.["run_at"], now());
      });
    return view(request, updated.task);
  });

  api.post<{ Params: { id: string } }>("/scheduled-tasks/:id/pause", auth, async (request) => {
    const current = await find(request, request.params.id);
    return view(request, await tasks.pause(actor(request), current.id, {}, now()));
  });

  // DeerFlow's resume does not skip what fell inside the pause: the latest missed fire runs once.
  api.post<{ Params: { id: string } }>("/scheduled-tasks/:id/resume", auth, async (request) => {
    const current = await find(request, request.params.id);
    const resumed = await tasks.resume(actor(request), current.id, { catchUp: "latest" }, now());
    return view(request, resumed);
  });

  // Deviation: the trigger queues a run and answers 202 at once (no 200/502 on the launch's outcome).
  api.post<{ Params: { id: string } }>(
    "/scheduled-tasks/:id/trigger",
    auth,
    async (request, reply) => {
      const current = await find(request, request.params.id);
      const key = request.headers["idempotency-key"];
      // As DeerFlow's own trigger, a once task's run takes its occurrence: the task no longer fires at
      // `run_at` and ends with the run (docs/targets.md#a-deerflow-compatible-api).
      const run = await tasks.trigger(
        actor(request),
        current.id,
        { takeOccurrence: true, ...(typeof key === "string" ? { idempotencyKey: key } : {}) },
        now(),
      );
      return reply.code(202).send({ id: current.id, triggered: true, run_id: run.id });
    },
  );

  api.delete<{ Params: { id: string } }>("/scheduled-tasks/:id", auth, async (request) => {
    const current = await find(request, request.params.id);
    await tasks.delete(actor(request), current.id, {}, now());
    return { id: current.id, deleted: true };
  });

  api.get<{ Params: { id: string } }>("/scheduled-tasks/:id/runs", auth, async (request) => {
    const query = parseWith(runsQuery, request.query, "query");
    const current = await find(request, request.params.id);
    const runs = await runsFrom(tasks, actor(request), current.id, query.offset + query.limit);
    return runs.slice(query.offset).map(scheduledTaskRunView);
  });

  api.get<{ Params: { thread_id: string } }>(
    "/threads/:thread_id/scheduled-tasks",
    auth,
    async (request) => {
      const thread = request.params.thread_id;
      if (!DEERFLOW_THREAD_ID.test(thread)) {
        throw new DeerflowRefusal(422, [
          fastApiItem(["path", "thread_id"], "String should match pattern '^[A-Za-z0-9_-]{1,64}$'"),
        ]);
      }
      // DeerFlow's owner check: a missing thread, or another owner's, is not found.
      if (!(await tasks.threadUsable(actor(request), target.server, thread))) {
        throw new DeerflowRefusal(404, `Thread ${thread} not found`);
      }
      const query = parseWith(listQuery, request.query, "query");
      const mine = await newestTasks(tasks, actor(request), target, query.limit, thread);
      return Promise.all(mine.map((task) => view(request, task)));
    },
  );
}

/**
 * The caller's newest `count` DeerFlow tasks (bound to `thread` if given), newest first as DeerFlow
 * lists them: read newest first, stopping once `count` are found.
 */
async function newestTasks(
  tasks: TaskService,
  actor: Actor,
  target: DeerflowTarget,
  count: number,
  thread?: string,
): Promise<TaskView[]> {
  const found: TaskView[] = [];
  let cursor: string | undefined;
  do {
    const page = await tasks.list(actor, {
      limit: PAGE,
      targetKind: "agent",
      newestFirst: true,
      ...(thread === undefined ? {} : { thread: { threadId: toThreadId(thread) } }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    found.push(...page.items.filter((task) => isDeerflowTask(task, target)));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && found.length < count);
  return found.slice(0, count);
}

/** The task's newest `count` runs (DeerFlow pages by offset; punctual by cursor). */
async function runsFrom(tasks: TaskService, actor: Actor, id: string, count: number) {
  const runs = [];
  let cursor: string | undefined;
  do {
    const page = await tasks.listRuns(actor, id, {
      // No row past the `count` asked for is read.
      limit: Math.min(PAGE, count - runs.length),
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && runs.length < count);
  return runs.slice(0, count);
}

/** DeerFlow's `last_run_id` is the agent run's id, `last_thread_id` its thread. */
async function lastRunOf(tasks: TaskService, actor: Actor, task: TaskView): Promise<LastRun> {
  if (task.last_run_id === null) return { runId: null, threadId: null };
  try {
    const run = await tasks.getRun(actor, task.last_run_id);
    return { runId: run.target_run_id, threadId: run.thread_id };
  } catch (error) {
    if (isPunctualError(error) && error.code === "not_found")
      return { runId: null, threadId: null };
    throw error;
  }
}

/**
 * DeerFlow's own texts for the refusals its frontend shows (`detail`): an unknown time zone, and a once
 * task not in the future ("must be in the future" when `run_at` has passed, else the minimum delay).
 */
function deerflowTexts(error: unknown, zone: unknown, runAt: unknown, now: Instant): unknown {
  if (!(error instanceof ValidationError)) return error;
  if (error.errors.some((e) => e.field === "schedule.timezone")) {
    return new DeerflowRefusal(422, `Unknown timezone: ${String(zone)}`);
  }
  const once = error.errors.find((e) => e.field === "schedule.run_at");
  if (once !== undefined && /in the future|in the past/.test(once.message)) {
    const at =
      typeof runAt === "string" && /(Z|[+-]\d{2}:?\d{2})$/i.test(runAt) ? Date.parse(runAt) : NaN;
    const delay = /at least (\d+) seconds? in the future/.exec(once.message)?.[1];
    return new DeerflowRefusal(
      422,
      Number.isNaN(at) || at <= now || delay === undefined
        ? "once schedule must be in the future"
        : `once schedule must be at least ${delay} seconds in the future`,
    );
  }
  return error;
}

function taskNotFound(): DeerflowRefusal {
  return new DeerflowRefusal(404, "Scheduled task not found");
}

function fastApiItem(loc: readonly (string | number)[], msg: string, type = "value_error") {
  return { type, loc, msg };
}

function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: "body" | "query" = "body",
): z.output<S> {
  const parsed = schema.safeParse(value ?? (where === "body" ? undefined : {}));
  if (parsed.success) return parsed.data;
  throw new DeerflowRefusal(
    422,
    parsed.error.issues.map((issue) =>
      fastApiItem(
        [where, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))],
        issue.message,
      ),
    ),
  );
}

/** punctual's field names as DeerFlow's clients know them. */
function deerflowField(field: string): string {
  return field
    .replace(/^schedule\.?/, "schedule_spec.")
    .replace(/^target\.input.*/, "prompt")
    .replace(/^context\.thread_id$/, "thread_id")
    .replace(/\.$/, "");
}

function detailOfValidation(errors: readonly FieldError[]): string {
  return errors.map((e) => `${deerflowField(e.field)}: ${e.message}`).join("; ");
}

/** Every error as FastAPI answers: `{"detail": "..."}` (or its list of validation items). */
function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof DeerflowRefusal) {
    return reply.code(error.status).send({ detail: error.detail });
  }
  if (error instanceof ValidationError) {
    return reply.code(422).send({ detail: detailOfValidation(error.errors) });
  }
  if (error instanceof NotFoundError) {
    return reply.code(404).send({
      detail: error.resource === "thread" ? "Thread not found" : "Scheduled task not found",
    });
  }
  const outage = outageAnswer(error, request);
  if (outage !== null) {
    // The platform's own error shape, with the 503 and Retry-After /v1 answers.
    return reply.code(503).headers(outage.headers).send({ detail: outage.detail });
  }
  const problem = problemFromError(error);
  if (problem === null) {
    request.log.error({ err: error }, "unexpected error answering a DeerFlow-compatible request");
    return reply.code(500).send({ detail: "Internal Server Error" });
  }
  if (problem.status === 400) {
    // FastAPI answers a body it cannot read with 422.
    return reply
      .code(422)
      .send({ detail: [fastApiItem(["body"], problem.detail, "json_invalid")] });
  }
  const detail = problem.status === 401 ? "Authentication required" : problem.detail;
  return reply.code(problem.status).send({ detail });
}
