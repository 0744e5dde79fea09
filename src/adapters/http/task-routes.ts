/**
 * `/v1/tasks` and `/v1/threads/{thread_id}/tasks` (SPEC 7.2): the owner's operations of SPEC 4.3.
 * Over 400 lines because each route declares its documented answers beside its handler: the file is
 * one table of routes, and splitting it would scatter that table.
 */
import type { Instant } from "../../domain/time.js";
import { threadId as toThreadId } from "../../domain/ids.js";
import { taskCreateSchema, taskPatchSchema } from "../../application/task-input.js";
import type { TaskService } from "../../application/task-service.js";
import type { IdempotencyRepository } from "../../application/idempotency-repository.js";
import type { TaskView } from "../../application/views.js";
import {
  backfillResultSchema,
  createdTaskSchema,
  explanationViewSchema,
  previewSchema,
  runPageSchema,
  runViewSchema,
  taskPageSchema,
  taskViewSchema,
} from "../../application/view-schemas.js";
import { idempotencyKeyOf, idempotent } from "./idempotency.js";
import { HttpProblem } from "./problem.js";
import {
  actorOf,
  checkId,
  checkTargetInput,
  etagOf,
  ifMatchVersion,
  pageSizeOf,
  previewCountOf,
} from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { HeaderSpec, ResponseSpec, RouteSpec } from "./route-spec.js";
import {
  backfillBody,
  deleteQuery,
  emptyBody,
  emptyQuery,
  explainQuery,
  pauseBody,
  previewQuery,
  problemSchema,
  resumeBody,
  runIdParams,
  runListQuery,
  taskIdParams,
  taskListQuery,
  threadParams,
  threadTaskQuery,
} from "./schemas.js";

export interface TaskRouteDeps {
  readonly tasks: TaskService;
  readonly idempotency: IdempotencyRepository;
  readonly now: () => Instant;
}

const problem = (description: string): ResponseSpec => ({ description, schema: problemSchema });
const COMMON = {
  401: problem("no or bad bearer token"),
  429: problem("rate limited"),
} as const;
const NOT_FOUND = problem("no such task (or another owner's)");
const INVALID = problem("validation failed or a limit exceeded");
const IDEMPOTENCY: HeaderSpec = {
  name: "Idempotency-Key",
  required: false,
  description: "a repeat with the same key returns the first answer",
};

const withEtag = (task: TaskView) => ({ etag: etagOf(task.version) });

export function taskRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  return [
    defineRoute({
      method: "POST",
      url: "/v1/tasks",
      operationId: "createTask",
      summary: "Create a task",
      tags: ["tasks"],
      auth: true,
      query: emptyQuery,
      body: taskCreateSchema,
      headers: [IDEMPOTENCY],
      responses: {
        201: { description: "created (with warnings such as DST)", schema: createdTaskSchema },
        400: problem("malformed request"),
        ...COMMON,
        404: problem("the bound thread does not exist"),
        409: problem("the first request with this key is in progress"),
        413: problem("body over 1 MiB"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const actor = actorOf(ctx);
        const raw = ctx.request.body;
        const answer = await idempotent(
          deps.idempotency,
          {
            actor,
            route: "POST /v1/tasks",
            key: idempotencyKeyOf(ctx.request.headers),
            body: raw,
            now: now(),
          },
          async () => {
            checkTargetInput(raw);
            const created = await tasks.create(actor, raw, now());
            return { status: 201, body: created };
          },
        );
        const task = (answer.body as { task: TaskView }).task;
        return {
          ...answer,
          headers: { ...answer.headers, ...withEtag(task), location: `/v1/tasks/${task.id}` },
        };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/tasks",
      operationId: "listTasks",
      summary: "List tasks, filtered, by pages (a stable order)",
      tags: ["tasks"],
      auth: true,
      query: taskListQuery,
      responses: {
        200: { description: "a page", schema: taskPageSchema },
        ...COMMON,
        422: INVALID,
      },
      handler: async (ctx) => {
        const q = ctx.query;
        const page = await tasks.list(actorOf(ctx), {
          limit: pageSizeOf(q.limit),
          ...(q.status === undefined ? {} : { status: q.status }),
          ...(q.target_kind === undefined ? {} : { targetKind: q.target_kind }),
          ...(q.thread_id === undefined ? {} : { thread: { threadId: toThreadId(q.thread_id) } }),
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        });
        return { status: 200, body: page };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/threads/:thread_id/tasks",
      operationId: "listThreadTasks",
      summary: "The caller's tasks bound to a thread (an empty list when none)",
      tags: ["tasks"],
      auth: true,
      params: threadParams,
      query: threadTaskQuery,
      responses: {
        200: { description: "a page", schema: taskPageSchema },
        ...COMMON,
        422: INVALID,
      },
      handler: async (ctx) => {
        const thread = ctx.params.thread_id;
        if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(thread)) {
          return { status: 200, body: { items: [], next_cursor: null } };
        }
        const page = await tasks.list(actorOf(ctx), {
          limit: pageSizeOf(ctx.query.limit),
          thread: { threadId: toThreadId(thread) },
          ...(ctx.query.cursor === undefined ? {} : { cursor: ctx.query.cursor }),
        });
        return { status: 200, body: page };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/tasks/:id",
      operationId: "getTask",
      summary: "Read a task (ETag: its version)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      responses: {
        200: { description: "the task", schema: taskViewSchema },
        ...COMMON,
        404: NOT_FOUND,
      },
      handler: async (ctx) => {
        const task = await tasks.get(actorOf(ctx), checkId("task", ctx.params.id));
        return { status: 200, body: task, headers: withEtag(task) };
      },
    }),
    defineRoute({
      method: "PATCH",
      url: "/v1/tasks/:id",
      operationId: "updateTask",
      summary: "Edit a task (If-Match required)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: taskPatchSchema,
      headers: [{ name: "If-Match", required: true, description: 'the ETag read, e.g. "3"' }],
      responses: {
        200: { description: "the edited task", schema: createdTaskSchema },
        400: problem("malformed request or If-Match"),
        ...COMMON,
        404: NOT_FOUND,
        409: problem("stale version"),
        413: problem("body over 1 MiB"),
        422: INVALID,
        428: problem("If-Match missing"),
      },
      handler: async (ctx) => {
        const actor = actorOf(ctx);
        const id = checkId("task", ctx.params.id);
        const version = ifMatchVersion(ctx.request.headers["if-match"]);
        if (version === undefined) {
          throw new HttpProblem(
            "precondition_required",
            "PATCH needs If-Match with the task's ETag (read it with GET first)",
          );
        }
        checkTargetInput(ctx.request.body);
        const updated = await tasks.update(actor, id, ctx.request.body, version, now());
        return { status: 200, body: updated, headers: withEtag(updated.task) };
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/v1/tasks/:id",
      operationId: "deleteTask",
      summary: "Delete a task (If-Match optional; ?force=true cancels an active run)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: deleteQuery,
      headers: [{ name: "If-Match", required: false, description: "the ETag read" }],
      responses: {
        204: { description: "deleted" },
        400: problem("malformed If-Match"),
        ...COMMON,
        404: NOT_FOUND,
        409: problem("a run is launching or running, or a stale version"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const id = checkId("task", ctx.params.id);
        const version = ifMatchVersion(ctx.request.headers["if-match"]);
        await tasks.delete(
          actorOf(ctx),
          id,
          {
            force: ctx.query.force === "true",
            ...(version === undefined || version === null ? {} : { expectedVersion: version }),
          },
          now(),
        );
        return { status: 204 };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/pause",
      operationId: "pauseTask",
      summary: "Pause: no new occurrences; queued runs cancelled",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: pauseBody,
      responses: {
        200: { description: "the paused task", schema: taskViewSchema },
        400: problem("malformed request"),
        ...COMMON,
        404: NOT_FOUND,
        409: problem("not allowed in the task's status"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const task = await tasks.pause(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          { cancelRunning: ctx.body?.cancel_running ?? false },
          now(),
        );
        return { status: 200, body: task, headers: withEtag(task) };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/resume",
      operationId: "resumeTask",
      summary: "Resume; occurrences inside the pause follow `catch_up` (default none)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: resumeBody,
      responses: {
        200: { description: "the resumed task", schema: taskViewSchema },
        400: problem("malformed request"),
        ...COMMON,
        404: NOT_FOUND,
        409: problem("not allowed in the task's status"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const task = await tasks.resume(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          ctx.body?.catch_up === undefined ? {} : { catchUp: ctx.body.catch_up },
          now(),
        );
        return { status: 200, body: task, headers: withEtag(task) };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/v1/tasks/:id/cancel",
      operationId: "cancelTask",
      summary: "Cancel the task (terminal); queued runs cancelled",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: emptyQuery,
      body: emptyBody,
      responses: {
        200: { description: "the cancelled task", schema: taskViewSchema },
        ...COMMON,
        404: NOT_FOUND,
        409: problem("not allowed in the task's status"),
        400: problem("malformed request"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const task = await tasks.cancel(actorOf(ctx), checkId("task", ctx.params.id), now());
        return { status: 200, body: task, headers: withEtag(task) };
      },
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
      method: "GET",
      url: "/v1/tasks/:id/runs",
      operationId: "listTaskRuns",
      summary: "The task's runs, by pages",
      tags: ["runs"],
      auth: true,
      params: taskIdParams,
      query: runListQuery,
      responses: {
        200: { description: "a page", schema: runPageSchema },
        ...COMMON,
        404: NOT_FOUND,
        422: INVALID,
      },
      handler: async (ctx) => {
        const q = ctx.query;
        const page = await tasks.listRuns(actorOf(ctx), checkId("task", ctx.params.id), {
          limit: pageSizeOf(q.limit),
          ...(q.status === undefined ? {} : { status: q.status }),
          ...(q.trigger === undefined ? {} : { trigger: q.trigger }),
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        });
        return { status: 200, body: page };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/tasks/:id/preview",
      operationId: "previewTask",
      summary: "The next fires, with local wall times and DST notes (none once the task has ended)",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: previewQuery,
      responses: {
        200: { description: "the next fires", schema: previewSchema },
        ...COMMON,
        404: NOT_FOUND,
        422: INVALID,
      },
      handler: async (ctx) => {
        const count = previewCountOf(ctx.query.count);
        const fires = await tasks.preview(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          count,
          now(),
        );
        return { status: 200, body: fires };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/tasks/:id/explain",
      operationId: "explainTask",
      summary: "Why the task did or did not fire around an instant",
      tags: ["tasks"],
      auth: true,
      params: taskIdParams,
      query: explainQuery,
      responses: {
        200: { description: "the verdict and its explanation", schema: explanationViewSchema },
        ...COMMON,
        404: NOT_FOUND,
        422: INVALID,
      },
      handler: async (ctx) => ({
        status: 200,
        body: await tasks.explain(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          ctx.query.at,
          now(),
        ),
      }),
    }),
  ];
}

export function runRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  const RUN_NOT_FOUND = problem("no such run (or another owner's)");
  return [
    defineRoute({
      method: "GET",
      url: "/v1/runs/:id",
      operationId: "getRun",
      summary: "Read a run",
      tags: ["runs"],
      auth: true,
      params: runIdParams,
      query: emptyQuery,
      responses: {
        200: { description: "the run", schema: runViewSchema },
        ...COMMON,
        404: RUN_NOT_FOUND,
      },
      handler: async (ctx) => ({
        status: 200,
        body: await tasks.getRun(actorOf(ctx), checkId("run", ctx.params.id)),
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/v1/runs/:id/cancel",
      operationId: "cancelRun",
      summary: "Cancel a run (a launched one is asked to stop)",
      tags: ["runs"],
      auth: true,
      params: runIdParams,
      query: emptyQuery,
      body: emptyBody,
      responses: {
        200: { description: "the run", schema: runViewSchema },
        ...COMMON,
        404: RUN_NOT_FOUND,
        409: problem("the run has ended"),
        400: problem("malformed request"),
        422: INVALID,
      },
      handler: async (ctx) => ({
        status: 200,
        body: await tasks.cancelRun(actorOf(ctx), checkId("run", ctx.params.id), now()),
      }),
    }),
  ];
}
