/**
 * `/v1/tasks` and `/v1/threads/{thread_id}/tasks` (docs/api.md): the owner's operations of docs/semantics.md#task-operations, in
 * the order the API document lists them. This file holds the task records (create, list, read, edit,
 * delete); the commands are in task-command-routes.ts, the task's runs, preview and explanation in
 * task-read-routes.ts.
 */
import {
  createdTaskSchema,
  taskPageSchema,
  taskViewSchema,
  upsertedTaskSchema,
} from "../../application/shapes/view-schemas.js";
import { ValidationError } from "../../domain/errors.js";
import { taskQueryOf } from "../../application/scheduler-api.js";
import { taskCreateSchema, taskPatchSchema } from "../../application/shapes/task-input.js";
import type { TaskView } from "../../application/shapes/view-mappers.js";
import { idempotencyKeyOf, idempotent } from "./idempotency.js";
import { HttpProblem } from "./problem.js";
import { actorOf, checkId, ifMatchVersion, pageSizeOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import {
  deleteQuery,
  emptyQuery,
  taskIdParams,
  taskKeyParams,
  taskListQuery,
  threadParams,
  threadTaskQuery,
  upsertQuery,
} from "./schemas.js";
import { taskBatchRoutes } from "./task-batch-routes.js";
import { taskCommandRoutes } from "./task-command-routes.js";
import { taskReadRoutes } from "./task-read-routes.js";
import {
  COMMON,
  IDEMPOTENCY,
  INVALID,
  NOT_FOUND,
  problem,
  restoreTaskSecrets,
  withEtag,
} from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

export function taskRoutes(deps: TaskRouteDeps): RouteSpec[] {
  return [
    ...taskRecordRoutes(deps),
    ...taskBatchRoutes(deps),
    ...taskCommandRoutes(deps),
    ...taskReadRoutes(deps),
  ];
}

function taskRecordRoutes(deps: TaskRouteDeps): RouteSpec[] {
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
            const created = await tasks.create(actor, raw, now());
            return { status: 201, body: created };
          },
          restoreTaskSecrets(tasks, actor),
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
        const query = { ...ctx.query, limit: pageSizeOf(ctx.query.limit) };
        const page = await tasks.list(actorOf(ctx), taskQueryOf(query));
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
        const query = { ...ctx.query, thread_id: thread, limit: pageSizeOf(ctx.query.limit) };
        const page = await tasks.list(actorOf(ctx), taskQueryOf(query));
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
        const updated = await tasks.update(actor, id, ctx.request.body, version, now());
        return { status: 200, body: updated, headers: withEtag(updated.task) };
      },
    }),
    defineRoute({
      method: "PUT",
      url: "/v1/tasks/by-key/:key",
      operationId: "upsertTask",
      summary: "Create or replace the task with this key (If-Match optional)",
      tags: ["tasks"],
      auth: true,
      params: taskKeyParams,
      query: upsertQuery,
      body: taskCreateSchema,
      headers: [
        { name: "If-Match", required: false, description: "the ETag read: refuse a stale write" },
      ],
      responses: {
        200: {
          description: "updated, or identical (`changed` empty, no new version)",
          schema: upsertedTaskSchema,
        },
        201: { description: "created", schema: upsertedTaskSchema },
        400: problem("malformed request or If-Match"),
        ...COMMON,
        404: problem("the bound thread does not exist"),
        409: problem("stale version"),
        413: problem("body over 1 MiB"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const key = ctx.params.key;
        const body = ctx.request.body as Record<string, unknown>;
        if (body.key !== undefined && body.key !== null && body.key !== key) {
          throw ValidationError.of("key", "must be the key the path names (or left out)");
        }
        const version = ifMatchVersion(ctx.request.headers["if-match"]);
        const input = { ...body, key };
        const dryRun = ctx.query.dry_run === "true";
        const upserted = await tasks.upsert(actorOf(ctx), input, version ?? null, now(), {
          dryRun,
        });
        const headers = { ...withEtag(upserted.task), location: `/v1/tasks/${upserted.task.id}` };
        return { status: upserted.created ? 201 : 200, body: upserted, headers };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/tasks/by-key/:key",
      operationId: "getTaskByKey",
      summary: "Read the task with this key (ETag: its version)",
      tags: ["tasks"],
      auth: true,
      params: taskKeyParams,
      query: emptyQuery,
      responses: {
        200: { description: "the task", schema: taskViewSchema },
        ...COMMON,
        404: NOT_FOUND,
      },
      handler: async (ctx) => {
        const task = await tasks.getByKey(actorOf(ctx), ctx.params.key);
        return { status: 200, body: task, headers: withEtag(task) };
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/v1/tasks/:id",
      operationId: "deleteTask",
      summary:
        "Delete a task (If-Match optional; ?force=true cancels an active run, ?after_run=true lets it finish)",
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
            afterRun: ctx.query.after_run === "true",
            ...(version === undefined || version === null ? {} : { expectedVersion: version }),
          },
          now(),
        );
        return { status: 204 };
      },
    }),
  ];
}
