/** `/v1/runs/{id}` (docs/api.md): read a run, and cancel it (docs/semantics.md#the-life-of-a-run). */
import { runViewSchema } from "../../application/view-schemas.js";
import { actorOf, checkId } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { emptyBody, emptyQuery, runIdParams } from "./schemas.js";
import { COMMON, INVALID, problem } from "./task-route-shared.js";
import type { TaskRouteDeps } from "./task-route-shared.js";

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
