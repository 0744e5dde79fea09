/**
 * `POST /v1/tasks/batch` (docs/api.md): bulk create, all or none in one transaction
 * (docs/semantics.md#bulk-create); a refusal names the item (`tasks[17].schedule.cron`).
 */
import { batchField } from "../../application/tasks/create-task-batch.js";
import { taskBatchCreateSchema } from "../../application/shapes/task-input.js";
import { createdTaskBatchSchema } from "../../application/shapes/view-schemas.js";
import { LimitExceededError } from "../../domain/errors.js";
import { idempotencyKeyOf, idempotent } from "./idempotency.js";
import { checkTaskInputSize as checkTargetInput } from "../../application/policy/limits.js";
import { actorOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { emptyQuery } from "./schemas.js";
import { COMMON, IDEMPOTENCY, INVALID, problem, restoreTaskSecrets } from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

/** `tasks.17.schedule.cron` (zod's path) as the batch names it: `tasks[17].schedule.cron`. */
export function batchBodyField(field: string): string {
  const item = /^tasks\.(\d+)(?:\.(.*))?$/.exec(field);
  return item === null ? field : batchField(Number(item[1]), item[2] ?? "");
}

/** Each item's `target.input` within its limit, the refusal naming the item. */
function checkItemInputs(items: readonly unknown[]): void {
  for (const [index, item] of items.entries()) {
    try {
      checkTargetInput(item);
    } catch (error) {
      if (!(error instanceof LimitExceededError)) throw error;
      throw new LimitExceededError(
        error.limit,
        error.max,
        `${batchField(index)}: ${error.message}`,
      );
    }
  }
}

/** The items as sent (the service parses each, as `create` parses its body); the schema checked the list. */
function rawItems(body: unknown): readonly unknown[] {
  const items: unknown =
    typeof body === "object" && body !== null && "tasks" in body ? body.tasks : undefined;
  return Array.isArray(items) ? items : [];
}

export function taskBatchRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  return [
    defineRoute({
      method: "POST",
      url: "/v1/tasks/batch",
      operationId: "createTasks",
      summary: "Create up to 1,000 tasks at once, all or none",
      tags: ["tasks"],
      auth: true,
      query: emptyQuery,
      body: taskBatchCreateSchema,
      bodyField: batchBodyField,
      headers: [IDEMPOTENCY],
      responses: {
        201: { description: "every task created, in input order", schema: createdTaskBatchSchema },
        400: problem("malformed request"),
        ...COMMON,
        409: problem("the first request with this key is in progress"),
        413: problem("body over 1 MiB"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const actor = actorOf(ctx);
        const raw: unknown = ctx.request.body;
        return idempotent(
          deps.idempotency,
          {
            actor,
            route: "POST /v1/tasks/batch",
            key: idempotencyKeyOf(ctx.request.headers),
            body: raw,
            now: now(),
          },
          async () => {
            const items = rawItems(raw);
            checkItemInputs(items);
            const created = await tasks.createMany(actor, items, now());
            return { status: 201, body: { tasks: created } };
          },
          restoreTaskSecrets(tasks, actor),
        );
      },
    }),
  ];
}
