/**
 * `/v1/calendars` and `/v1/calendars/{name}` (docs/schedules.md#calendars): an owner's named calendars,
 * the days a schedule's `exclude` names as `{calendar: NAME}`. A put refreshes the tasks that name the
 * calendar.
 */
import type { TaskService } from "../../application/tasks/task-service.js";
import {
  calendarListSchema,
  calendarPutResultSchema,
  calendarViewSchema,
} from "../../application/shapes/view-schemas.js";
import type { Instant } from "../../domain/time.js";
import { calendarQueryOf } from "../../application/scheduler-api.js";
import { actorOf, pageSizeOf } from "./route-helpers.js";
import { defineRoute } from "./route-spec.js";
import type { RouteSpec } from "./route-spec.js";
import { calendarListQuery, calendarNameParams, calendarPutBody, emptyQuery } from "./schemas.js";
import { COMMON, problem } from "./task-route-shared.js";

export interface CalendarRouteDeps {
  readonly tasks: TaskService;
  readonly now: () => Instant;
}

const NOT_FOUND = problem("no calendar of that name (for this owner)");

export function calendarRoutes(deps: CalendarRouteDeps): RouteSpec[] {
  const calendars = deps.tasks.calendars;
  return [
    defineRoute({
      method: "GET",
      url: "/v1/calendars",
      operationId: "listCalendars",
      summary: "The owner's calendars, by name, by pages",
      tags: ["calendars"],
      auth: true,
      query: calendarListQuery,
      responses: {
        200: { description: "a page of calendars", schema: calendarListSchema },
        422: problem("a page size outside 1..200 (`page_size`), or a cursor of another listing"),
        ...COMMON,
      },
      handler: async (ctx) => {
        const query = calendarQueryOf({ ...ctx.query, limit: pageSizeOf(ctx.query.limit) });
        return { status: 200, body: await calendars.list(actorOf(ctx), query) };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/v1/calendars/:name",
      operationId: "getCalendar",
      summary: "Read a calendar",
      tags: ["calendars"],
      auth: true,
      params: calendarNameParams,
      query: emptyQuery,
      responses: {
        200: { description: "the calendar", schema: calendarViewSchema },
        404: NOT_FOUND,
        ...COMMON,
      },
      handler: async (ctx) => ({
        status: 200,
        body: await calendars.get(actorOf(ctx), ctx.params.name),
      }),
    }),
    defineRoute({
      method: "PUT",
      url: "/v1/calendars/:name",
      operationId: "putCalendar",
      summary:
        "Create a calendar or replace its items; the tasks naming it take them for the occurrences not decided yet",
      tags: ["calendars"],
      auth: true,
      params: calendarNameParams,
      query: emptyQuery,
      body: calendarPutBody,
      responses: {
        200: { description: "replaced", schema: calendarPutResultSchema },
        201: { description: "created", schema: calendarPutResultSchema },
        400: problem("malformed request"),
        422: problem(
          "an invalid item (errors[] names each), or over a calendar quota (`calendars_per_owner`, `calendar_items_per_owner`)",
        ),
        ...COMMON,
      },
      handler: async (ctx) => {
        const result = await calendars.put(actorOf(ctx), ctx.params.name, ctx.body, deps.now());
        return { status: result.created ? 201 : 200, body: result.calendar };
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/v1/calendars/:name",
      operationId: "deleteCalendar",
      summary: "Delete a calendar no task names",
      tags: ["calendars"],
      auth: true,
      params: calendarNameParams,
      query: emptyQuery,
      responses: {
        204: { description: "deleted" },
        404: NOT_FOUND,
        409: problem("a task's exclude names the calendar (`task_id` names one): calendar_in_use"),
        ...COMMON,
      },
      handler: async (ctx) => {
        await calendars.delete(actorOf(ctx), ctx.params.name);
        return { status: 204 };
      },
    }),
  ];
}
