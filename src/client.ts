/**
 * `punctual/client`: a typed client of punctual's HTTP API, for programs that talk to a running
 * `punctual serve` instead of embedding the scheduler. Its sub-clients mirror the library's
 * `scheduler.tasks`, `scheduler.runs` and `scheduler.calendars`, with the same snake_case inputs and
 * answers, typed from the schemas the server validates and documents with. It needs only `fetch`
 * (Node 20, browsers, Deno).
 *
 * @example
 * ```ts
 * import { PunctualClient, PunctualApiError } from "punctual/client";
 * const client = new PunctualClient({ baseUrl: "http://127.0.0.1:8080", token: process.env.PUNCTUAL_TOKEN });
 * const { task } = await client.tasks.create(
 *   {
 *     title: "Weekday reminder",
 *     schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
 *     target: { kind: "handler", name: "log" },
 *   },
 *   { idempotency_key: "weekday-reminder" },
 * );
 * await client.tasks.update(task.id, { title: "Weekday standup" }, { version: task.version });
 * for await (const page of client.tasks.runPages(task.id)) console.log(page.items.length);
 * ```
 */
export { PunctualClient } from "./client/punctual-client.js";
export { PunctualApiError, PunctualConnectionError } from "./client/client-errors.js";
export type { CallOptions, ClientOptions, Replayable } from "./client/http-transport.js";
export type { PageQuery } from "./client/pages.js";
export type {
  TaskClient,
  IdempotentCallOptions,
  RunListQuery,
  TaskListQuery,
} from "./client/task-client.js";
export type { RunClient, RunSearchFilters } from "./client/run-client.js";
export type { ScheduleClient } from "./client/schedule-client.js";
export type { CalendarClient } from "./client/calendar-client.js";
export type { CreatedTask } from "./application/tasks/task-service.js";
export type {
  BackfillInput,
  PauseInput,
  ResumeInput,
  RotateSecretInput,
  RunListFilters,
  TaskListFilters,
} from "./application/shapes/command-input.js";
export type { TaskCreateInput, TaskPatchInput } from "./application/shapes/task-input.js";
export type {
  BackfillResultView,
  ContextView,
  DstNoteView,
  OptionsView,
  PreviewView,
  RotatedSecretView,
  ScheduleView,
  TargetView,
} from "./application/shapes/view-schemas.js";
export type {
  CalendarView,
  ExplanationView,
  OccurrenceView,
  PageView,
  PutCalendarView,
  RunView,
  TaskView,
} from "./application/shapes/view-mappers.js";
export type { ExclusionHitView } from "./application/shapes/view-schemas.js";
export type { ScheduleInput } from "./domain/schedule/schedule-input.js";
export type { CalendarItemInput, ExclusionInput } from "./domain/schedule/schedule-spec.js";
export type { HolidaysInput } from "./application/shapes/schedule-input.js";
export type { FieldError } from "./domain/errors.js";
