/**
 * `/v1/runs` (docs/api.md): runs across tasks; read a run, cancel it (docs/semantics.md#the-life-of-a-run)
 * and redrive it (docs/semantics.md#redrive).
 */
import { runSearchOf } from "../../application/runs/find-runs.js";
import { runPageSchema, runViewSchema } from "../../application/shapes/view-schemas.js";
import { actorOf, checkId, pageSizeOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { emptyBody, emptyQuery, runIdParams, runSearchQuery } from "./schemas.js";
import { COMMON, INVALID, problem } from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

export function runRoutes(deps: TaskRouteDeps): RouteSpec[] {
  const { tasks, now } = deps;
  const RUN_NOT_FOUND = problem("no such run (or another owner's)");
  return [
    defineRoute({
      method: "GET",
      url: "/v1/runs",
      operationId: "listRuns",
      summary: "Runs across the caller's tasks, newest first, by pages and filters",
      tags: ["runs"],
      auth: true,
      query: runSearchQuery,
      responses: {
        200: { description: "a page", schema: runPageSchema },
        ...COMMON,
        400: problem("malformed request"),
        422: INVALID,
      },
      handler: async (ctx) => {
        const { late, limit, ...filters } = ctx.query;
        const search = runSearchOf({
          ...filters,
          limit: pageSizeOf(limit),
          ...(late === undefined ? {} : { late: late === "true" }),
        });
        return { status: 200, body: await tasks.searchRuns(actorOf(ctx), search) };
      },
    }),
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
    defineRoute({
      method: "POST",
      url: "/v1/runs/:id/retry",
      operationId: "retryRun",
      summary:
        "Redrive a failed, timed-out or cancelled run: back in the queue as its next attempt",
      tags: ["runs"],
      auth: true,
      params: runIdParams,
      query: emptyQuery,
      body: emptyBody,
      responses: {
        202: { description: "the run, queued again", schema: runViewSchema },
        ...COMMON,
        404: RUN_NOT_FOUND,
        409: problem(
          "the run is not failed, timed_out or cancelled (the detail says why), or its task's overlap policy is skip and it has an active run",
        ),
        400: problem("malformed request"),
        422: INVALID,
      },
      handler: async (ctx) => ({
        status: 202,
        body: await tasks.redriveRun(actorOf(ctx), checkId("run", ctx.params.id), now()),
      }),
    }),
  ];
}
