/**
 * `/v1/schedules/preview`: the next fires of a schedule before any task has it, for the dashboard's live
 * preview while a user types. It parses the schedule exactly as task creation does and writes nothing.
 */
import type { TaskService } from "../../application/tasks/task-service.js";
import type { Instant } from "../../domain/time.js";
import { actorOf, previewCountOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { previewQuery, problemSchema, schedulePreviewBody } from "./schemas.js";
import { previewSchema } from "../../application/shapes/view-schemas.js";

export interface ScheduleRouteDeps {
  readonly tasks: TaskService;
  readonly now: () => Instant;
}

export function scheduleRoutes(deps: ScheduleRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "POST",
      url: "/v1/schedules/preview",
      operationId: "previewSchedule",
      summary: "The next fires of a schedule not saved yet (as a task's preview); writes nothing",
      tags: ["tasks"],
      auth: true,
      query: previewQuery,
      body: schedulePreviewBody,
      responses: {
        200: { description: "the next fires", schema: previewSchema },
        400: { description: "malformed request", schema: problemSchema },
        401: { description: "no or bad bearer token", schema: problemSchema },
        429: { description: "rate limited", schema: problemSchema },
        422: {
          description: "the schedule is invalid (errors[] names each field)",
          schema: problemSchema,
        },
      },
      handler: async (ctx) => {
        const actor = actorOf(ctx);
        const count = previewCountOf(ctx.query.count);
        const fires = await deps.tasks.previewSchedule(actor, ctx.body.schedule, count, deps.now());
        return { status: 200, body: fires };
      },
    }),
  ];
}
