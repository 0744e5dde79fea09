/**
 * The task aggregate (docs/semantics.md#tasks): its fields and statuses. There is no `running` status: whether a task has an
 * active run is read from its runs. Transitions live in task-commands.ts.
 */
import type { OwnerId, RunId, TaskId } from "./ids.js";
import type { TaskOptions } from "./options.js";
import type { ScheduleSpec } from "./schedule/schedule-spec.js";
import type { ExecutionContext, Target } from "./target.js";
import type { TaskDefect } from "./task-defect.js";
import type { Instant } from "./time.js";

export const TASK_STATUSES = ["enabled", "paused", "completed", "failed", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

export function isTerminalTaskStatus(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(status);
}

/** Limits on task fields (docs/semantics.md#tasks, docs/security.md). */
export const TASK_LIMITS = Object.freeze({
  titleMax: 200,
  descriptionMax: 10_000,
  metadataKeysMax: 32,
  metadataKeyMax: 64,
  metadataValueMax: 1024,
  inputBytesMax: 256 * 1024,
  resultBytesMax: 64 * 1024,
  idempotencyKeyMax: 200,
  backfillMax: 1000,
  batchMax: 1000,
  previewMax: 100,
  keyMax: 200,
  groupMax: 200,
});

/**
 * A task key or a declared group (docs/semantics.md#task-keys): 1..200 letters, digits, `.`, `_`, `:`
 * or `-`, but not `.` or `..` alone, which no URL can name (a client resolves them as path segments:
 * docs/security.md#bounded-work).
 */
export const TASK_KEY_PATTERN = /^(?!\.\.?$)[A-Za-z0-9._:-]{1,200}$/;

/** The group declared schedules are stored in when the declaration names none (docs/library.md#declared-schedules). */
export const DEFAULT_SCHEDULES_GROUP = "default";

/** The fields a user owns; `version` counts changes to these only. */
export interface TaskUserFields {
  readonly title: string;
  readonly description: string | null;
  readonly schedule: ScheduleSpec;
  readonly target: Target;
  readonly context: ExecutionContext;
  readonly options: TaskOptions;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Schedule fields, written only by admission (and by the service on create, edit and resume). */
export interface TaskScheduleFields {
  readonly status: TaskStatus;
  /** The next nominal time not yet decided; null when the schedule has ended or the task is terminal. */
  readonly nextRunAt: Instant | null;
  /** Every nominal time at or before this instant has its decision. */
  readonly decidedThrough: Instant;
  /** Scheduled occurrences admitted as runs, for `max_runs`. */
  readonly admittedCount: number;
}

/** Launch bookkeeping, written only when a launch is recorded. */
export interface TaskLaunchFields {
  readonly lastRunAt: Instant | null;
  readonly lastRunId: RunId | null;
  readonly runCount: number;
}

/** A replaced signing secret, still honoured until `until`. */
export interface RetiringSecret {
  readonly secret: string;
  readonly until: Instant;
}

export interface Task extends TaskUserFields, TaskScheduleFields, TaskLaunchFields {
  readonly id: TaskId;
  readonly owner: OwnerId;
  /** The owner's name for the task, unique among the owner's tasks (docs/semantics.md#task-keys); set at create. */
  readonly key: string | null;
  /** The declared-schedules group the task belongs to (docs/library.md#declared-schedules), or null. */
  readonly group: string | null;
  /** Written by completion (and by admission when a once task's occurrence is skipped or missed). */
  readonly lastError: string | null;
  readonly version: number;
  /** The secret webhook requests are signed with (docs/semantics.md#launch). */
  readonly webhookSecret: string;
  /**
   * The secret a rotation replaced (docs/security.md#rotating-a-tasks-signing-secret): requests are
   * signed with it too, and callbacks accept it, until `until`. @default null
   */
  readonly retiringSecret?: RetiringSecret | null;
  readonly createdAt: Instant;
  readonly updatedAt: Instant;
  /** Set by delete: the task is gone from the API; its rows go when no run of it is active. */
  readonly deletedAt: Instant | null;
  /**
   * What of the stored row no longer parses (docs/operations.md#a-task-that-does-not-parse), or null.
   * Set by the store when it reads the row; the fields it names hold stand-ins.
   */
  readonly defect: TaskDefect | null;
}

/**
 * `task` with the schedule fields `fields` (an admission's: its `lastError` only when it set one), as one
 * literal with every field in the order the stores read tasks in. A spread of a task followed by fields
 * made V8 build a slow (dictionary) object, read field by field on every launch of its run
 * (docs/benchmarks.md). Only `Task`'s fields are copied.
 */
export function withScheduleFields(
  task: Task,
  fields: TaskScheduleFields & { readonly lastError?: string },
): Task {
  const next: { -readonly [K in keyof Task]: Task[K] } = {
    id: task.id,
    owner: task.owner,
    title: task.title,
    description: task.description,
    schedule: task.schedule,
    target: task.target,
    context: task.context,
    options: task.options,
    metadata: task.metadata,
    status: fields.status,
    nextRunAt: fields.nextRunAt,
    decidedThrough: fields.decidedThrough,
    admittedCount: fields.admittedCount,
    lastRunAt: task.lastRunAt,
    lastRunId: task.lastRunId,
    runCount: task.runCount,
    lastError: fields.lastError ?? task.lastError,
    version: task.version,
    webhookSecret: task.webhookSecret,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    deletedAt: task.deletedAt,
    key: task.key,
    group: task.group,
    defect: task.defect,
  };
  if ("retiringSecret" in task) next.retiringSecret = task.retiringSecret;
  return next;
}
