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
} from "./application/declared-schedules.js";
export type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";
export { sqlite } from "./adapters/storage/sqlite/sqlite.js";
export { postgres } from "./adapters/storage/postgres/postgres-store.js";
export type { StoreFactory } from "./application/store.js";
export { buildPolicy } from "./application/policy-options.js";
export type { PolicyOptions } from "./application/policy-options.js";
export type { Handler, HandlerContext } from "./adapters/launchers/handler/handler-launcher.js";
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
} from "./application/typed-input.js";
export type {
  SchedulerTasks,
  SchedulerRuns,
  SchedulerCalendars,
  TaskListQuery,
  RunListQuery,
  PauseOptions,
  ResumeOptions,
} from "./application/scheduler-api.js";
export type { RunSearchQuery } from "./application/run-operations.js";
export type {
  SchedulerEventMap,
  SchedulerEventName,
  SchedulerEventListener,
  OccurrenceEvent,
} from "./application/library-events.js";
export { DEFAULT_LIMITS } from "./application/limits.js";
export type { Limits } from "./application/limits.js";
export type { Logger } from "./application/logger.js";
export type { JsonValue } from "./domain/target.js";
export type {
  TaskView,
  RunView,
  CalendarView,
  PutCalendarView,
  PageView,
  OccurrenceView,
  ExplanationView,
} from "./application/views.js";
export type { CreatedTask, UpsertedTask } from "./application/task-service.js";
export type { MetricsOptions, SchedulerMetrics } from "./adapters/metrics/scheduler-metrics.js";
export type { QueueStats } from "./domain/ports.js";
export type { CoordinatorOptions } from "./runtime/coordinator-options.js";
export type { RunWatcherOptions } from "./runtime/run-watcher.js";
export { parseAgentServers } from "./adapters/launchers/agent/agent-servers.js";
export type { AgentServerConfig } from "./adapters/launchers/agent/agent-servers.js";
export type {
  RunLauncher,
  ThreadLookup,
  LaunchRequest,
  LaunchedRun,
  RunObservation,
} from "./domain/ports.js";
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
