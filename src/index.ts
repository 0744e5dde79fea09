/**
 * punctual: a durable scheduler for TypeScript and Node.js. This module is the package's public API.
 *
 * @example
 * ```ts
 * import { createScheduler, sqlite } from "punctual";
 * const scheduler = createScheduler({ store: sqlite("punctual.db"), handlers: { sendReminder } });
 * await scheduler.start();
 * await scheduler.tasks.create({
 *   title: "Weekday reminder",
 *   schedule: { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
 *   target: { kind: "handler", name: "sendReminder", input: { to: "team" } },
 * });
 * await scheduler.stop();
 * ```
 */
export { createScheduler } from "./composition.js";
export type { CreateSchedulerOptions, Scheduler } from "./composition.js";
export type {
  DeclaredScheduleStep,
  DeclaredSchedulesPlan,
  PruneMode,
  ScheduleDeclaration,
} from "./application/tasks/declared-schedules.js";
export type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";
export { sqlite } from "./adapters/storage/sqlite/sqlite.js";
export { postgres } from "./adapters/storage/postgres/postgres-store.js";
export type { StoreFactory } from "./domain/ports/store.js";
export { buildPolicy } from "./application/policy/policy-options.js";
export type { PolicyOptions } from "./application/policy/policy-options.js";
export type { Handler, HandlerContext } from "./adapters/launchers/handler/handler-definition.js";
export { defineHandler } from "./adapters/launchers/handler/handler-definition.js";
export type {
  HandlerDefinition,
  HandlerInputsOf,
  HandlersOption,
} from "./adapters/launchers/handler/handler-definition.js";
export { NonRetryableError, RetryableError } from "./adapters/launchers/handler/handler-errors.js";
export type {
  HandlerInputMap,
  HandlerTargetInput,
  TargetInput,
  TaskCreateInput,
  TaskPatchInput,
  TaskUpsertInput,
} from "./application/shapes/handler-input-types.js";
export type {
  SchedulerTasks,
  SchedulerRuns,
  SchedulerCalendars,
  TaskListQuery,
  RunListQuery,
  PauseOptions,
  ResumeOptions,
} from "./application/scheduler-api.js";
export type { RunSearchQuery } from "./application/runs/find-runs.js";
export type {
  SchedulerEventMap,
  SchedulerEventName,
  SchedulerEventListener,
  OccurrenceEvent,
} from "./application/events/library-notifications.js";
export { DEFAULT_LIMITS } from "./application/policy/limits.js";
export type { Limits } from "./application/policy/limits.js";
export type { Logger } from "./application/events/logger.js";
export type { JsonValue } from "./domain/target.js";
export type {
  TaskView,
  RunView,
  CalendarView,
  PutCalendarView,
  PageView,
  OccurrenceView,
  ExplanationView,
} from "./application/shapes/view-mappers.js";
export type { CreatedTask, UpsertedTask } from "./application/tasks/task-service.js";
export type { MetricsOptions, SchedulerMetrics } from "./adapters/metrics/scheduler-metrics.js";
export type { QueueStats } from "./domain/ports/run-repository.js";
export type { CoordinatorOptions } from "./runtime/coordinator-options.js";
export type { RunWatcherOptions } from "./runtime/run-watcher.js";
export { parseAgentServers } from "./adapters/launchers/agent/agent-servers.js";
export type { AgentServerConfig } from "./adapters/launchers/agent/agent-servers.js";
export type {
  RunLauncher,
  LaunchRequest,
  LaunchedRun,
  RunObservation,
} from "./domain/ports/run-launcher.js";
export type { ThreadLookup } from "./domain/ports/thread-lookup.js";
export {
  ERROR_CODES,
  PunctualError,
  ValidationError,
  LimitExceededError,
  NotFoundError,
  StaleVersionError,
  ActiveRunError,
  TaskNotMutableError,
  IllegalTransitionError,
  LeaseLostError,
  ThreadBusyError,
  LaunchFailedError,
  LaunchIndeterminateError,
  TargetUnavailableError,
  CalendarInUseError,
  CalendarChangedError,
  KeyTakenError,
  isPunctualError,
} from "./domain/errors.js";
export type { ErrorCode, FieldError } from "./domain/errors.js";
export type { CalendarItemInput } from "./domain/schedule/schedule-spec.js";
export type { HolidaysInput } from "./application/shapes/schedule-input.js";
export { nextOccurrences } from "./domain/schedule/next-occurrences.js";
export type {
  NextOccurrencesOptions,
  NextOccurrencesSchedule,
} from "./domain/schedule/next-occurrences.js";
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_REJECTIONS,
} from "./adapters/launchers/webhook/verify-webhook.js";
export type {
  VerifiedWebhook,
  VerifyWebhookOptions,
  WebhookRejection,
  WebhookRequestParts,
} from "./adapters/launchers/webhook/verify-webhook.js";
export type { WebhookSignature } from "./domain/target.js";
