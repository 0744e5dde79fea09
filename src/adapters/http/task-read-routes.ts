/**
 * What a task shows of itself (docs/api.md): its runs by pages, its next fires, and why it did or did
 * not fire around an instant.
 */
import {
  explanationViewSchema,
  previewSchema,
  runPageSchema,
} from "../../application/shapes/view-schemas.js";
import { runQueryOf } from "../../application/scheduler-api.js";
import { actorOf, checkId, pageSizeOf, previewCountOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { explainQuery, previewQuery, runListQuery, taskIdParams } from "./schemas.js";
import { COMMON, INVALID, NOT_FOUND } from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

export function taskReadRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  return [
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
        const query = { ...ctx.query, limit: pageSizeOf(ctx.query.limit) };
        const page = await tasks.listRuns(
          actorOf(ctx),
          checkId("task", ctx.params.id),
          runQueryOf(query),
        );
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
