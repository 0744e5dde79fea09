/**
 * The one mapping between domain objects and SQLite rows: snake_case columns, INTEGER epoch-ms instants,
 * 0/1 booleans and JSON text (the schedule through its codec). Reading a row is a parse at the edge, so
 * the brands are applied here and nowhere else.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "../../../domain/ids.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import type { Run, RunReason, RunStatus, RunTrigger } from "../../../domain/run.js";
import { idempotencyKeyFor } from "../../../domain/occurrence.js";
import { encodeSchedule } from "../../../domain/schedule-codec.js";
import type { JsonValue } from "../../../domain/target.js";
import { threadScopeOf } from "../../../domain/target.js";
import type { Task, TaskStatus } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import { decodeTaskFields, decodeTaskOptions, onceAtOf } from "../shared/stored-task-fields.js";
import type { DecodedDefinition, TaskDefinition } from "../shared/task-definition-cache.js";

/** A row of `tasks`, as SQLite returns it and as the named parameters of its writes. */
export interface TaskRow {
  /**
   * Read only (`TASK_SELECT`): the items of the calendar versions the schedule references,
   * `[[name, version, itemsText], ...]` as JSON text (`CALENDAR_ITEMS_COLUMN`).
   */
  readonly calendars?: string | null;
  /**
   * Read only (`TASK_SELECT`): the definition row's stamp, which every write of it moves (migration 20,
   * docs/storage.md#the-claim-reads-narrow-rows).
   */
  readonly stamp?: number;
  readonly id: string;
  readonly owner: string;
  readonly title: string;
  readonly description: string | null;
  readonly schedule: string;
  readonly schedule_type: string;
  readonly target: string;
  readonly target_kind: string;
  readonly handler_name: string | null;
  readonly context: string;
  readonly thread_scope: string;
  readonly thread_id: string | null;
  readonly options: string;
  readonly metadata: string;
  readonly status: string;
  readonly next_run_at: number | null;
  readonly decided_through: number;
  readonly admitted_count: number;
  readonly last_run_at: number | null;
  readonly last_run_id: string | null;
  readonly last_error: string | null;
  readonly run_count: number;
  readonly version: number;
  readonly webhook_secret: string;
  readonly retiring_secret: string | null;
  readonly retiring_until: number | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly deleted_at: number | null;
  readonly task_key: string | null;
  readonly task_group: string | null;
  readonly defect_at: number | null;
}

/** A row of `runs`. */
export interface RunRow {
  readonly id: string;
  readonly task_id: string;
  readonly owner: string;
  readonly trigger: string;
  readonly scheduled_for: number;
  readonly fire_at: number;
  readonly status: string;
  readonly reason: string | null;
  readonly missed_count: number | null;
  readonly missed_until: number | null;
  readonly attempt: number;
  readonly failures: number;
  readonly not_before: number;
  readonly thread_scope: string;
  readonly thread_id: string;
  readonly exclusive: number;
  readonly claim_token: string | null;
  readonly claim_expires_at: number | null;
  readonly claimed_by: string | null;
  readonly target_run_id: string | null;
  readonly idempotency_key: string;
  readonly queued_at: number;
  readonly launched_at: number | null;
  readonly deadline_at: number | null;
  readonly finished_at: number | null;
  readonly lateness_ms: number | null;
  readonly late: number;
  readonly cancel_requested_at: number | null;
  readonly error: string | null;
  readonly result: string | null;
  /** 1 for a run from a moved occurrence, else NULL (migration 19, docs/schedules.md#moved-occurrences). */
  readonly moved: number | null;
}

/** Column names, in table order; `trigger` and `exclusive` are SQLite keywords and always quoted. */
export const TASK_COLUMNS: readonly (keyof TaskRow)[] = [
  "id",
  "owner",
  "title",
  "description",
  "schedule",
  "schedule_type",
  "target",
  "target_kind",
  "handler_name",
  "context",
  "thread_scope",
  "thread_id",
  "options",
  "metadata",
  "status",
  "next_run_at",
  "decided_through",
  "admitted_count",
  "last_run_at",
  "last_run_id",
  "last_error",
  "run_count",
  "version",
  "webhook_secret",
  "retiring_secret",
  "retiring_until",
  "created_at",
  "updated_at",
  "deleted_at",
  "task_key",
  "task_group",
  "defect_at",
];

export const RUN_COLUMNS: readonly (keyof RunRow)[] = [
  "id",
  "task_id",
  "owner",
  "trigger",
  "scheduled_for",
  "fire_at",
  "status",
  "reason",
  "missed_count",
  "missed_until",
  "attempt",
  "failures",
  "not_before",
  "thread_scope",
  "thread_id",
  "exclusive",
  "claim_token",
  "claim_expires_at",
  "claimed_by",
  "target_run_id",
  "idempotency_key",
  "queued_at",
  "launched_at",
  "deadline_at",
  "finished_at",
  "lateness_ms",
  "late",
  "cancel_requested_at",
  "error",
  "result",
  "moved",
];

/**
 * The columns of a task row that live in `task_state` (what a fire changes: docs/storage.md#task-state-on-sqlite),
 * keyed there by `task_id`; the others are the definition, in `tasks`.
 */
export const TASK_STATE_COLUMNS: readonly (keyof TaskRow)[] = [
  "status",
  "next_run_at",
  "decided_through",
  "admitted_count",
  "last_run_at",
  "last_run_id",
  "last_error",
  "run_count",
  "defect_at",
];

export const TASK_DEFINITION_COLUMNS: readonly (keyof TaskRow)[] = TASK_COLUMNS.filter(
  (name) => !TASK_STATE_COLUMNS.includes(name),
);

const KEYWORDS: ReadonlySet<string> = new Set(["trigger", "exclusive"]);

/** A column name as SQL text, quoted when it is a keyword. */
export function column(name: string): string {
  return KEYWORDS.has(name) ? `"${name}"` : name;
}

/** `a, b, "trigger", ...`, optionally qualified by a table alias. */
export function columnList(columns: readonly string[], alias?: string): string {
  const prefix = alias === undefined ? "" : `${alias}.`;
  return columns.map((name) => `${prefix}${column(name)}`).join(", ");
}

function at(ms: number): Instant {
  return instant(ms);
}

function atOrNull(ms: number | null): Instant | null {
  return ms === null ? null : instant(ms);
}

function flag(value: number): boolean {
  return value === 1;
}

/**
 * What a task row holds besides its definition: its `task_state` columns and its `version` (the
 * definition cache's key with the stamp: docs/storage.md#the-claim-reads-narrow-rows).
 */
export type TaskStateRow = Pick<
  TaskRow,
  | "status"
  | "next_run_at"
  | "decided_through"
  | "admitted_count"
  | "last_run_at"
  | "last_run_id"
  | "last_error"
  | "run_count"
  | "defect_at"
  | "version"
>;

/** A task row as read; `secrets` opens its signing secrets (docs/security.md#secrets-at-rest). */
export function taskFromRow(row: TaskRow, secrets: SecretSealer): Task {
  return taskWithState(taskDefinitionFromRow(row, secrets), row);
}

/** The definition columns of a task row as read (`TASK_SELECT`), decoded. */
export function taskDefinitionFromRow(row: TaskRow, secrets: SecretSealer): DecodedDefinition {
  const createdAt = at(row.created_at);
  const fields = decodeTaskFields(
    {
      schedule: row.schedule,
      target: row.target,
      context: row.context,
      options: row.options,
      metadata: row.metadata,
      calendars: row.calendars,
    },
    createdAt,
  );
  // Every field in one literal, never a spread: a spread into a literal of this size makes V8 build a
  // slow (dictionary) object.
  const definition: Mutable<TaskDefinition> = {
    id: row.id as TaskId,
    owner: row.owner as OwnerId,
    title: row.title,
    description: row.description,
    schedule: fields.schedule,
    target: fields.target,
    context: fields.context,
    options: fields.options,
    metadata: fields.metadata,
    webhookSecret: secrets.open(row.webhook_secret),
    createdAt,
    updatedAt: at(row.updated_at),
    deletedAt: atOrNull(row.deleted_at),
    key: row.task_key,
    group: row.task_group,
  };
  if (row.retiring_secret !== null && row.retiring_until !== null) {
    definition.retiringSecret = {
      secret: secrets.open(row.retiring_secret),
      until: at(row.retiring_until),
    };
  }
  return { definition, defects: fields.defects };
}

/** The whole task: `decoded`'s definition with the state of `row`. */
export function taskWithState(decoded: DecodedDefinition, row: TaskStateRow): Task {
  const { definition, defects } = decoded;
  const task: Mutable<Task> = {
    id: definition.id,
    owner: definition.owner,
    title: definition.title,
    description: definition.description,
    schedule: definition.schedule,
    target: definition.target,
    context: definition.context,
    options: definition.options,
    metadata: definition.metadata,
    status: row.status as TaskStatus,
    nextRunAt: atOrNull(row.next_run_at),
    decidedThrough: at(row.decided_through),
    admittedCount: row.admitted_count,
    lastRunAt: atOrNull(row.last_run_at),
    lastRunId: row.last_run_id as RunId | null,
    runCount: row.run_count,
    lastError: row.last_error,
    version: row.version,
    webhookSecret: definition.webhookSecret,
    createdAt: definition.createdAt,
    updatedAt: definition.updatedAt,
    deletedAt: definition.deletedAt,
    key: definition.key,
    group: definition.group,
    defect: defects.length === 0 ? null : { fields: defects, detectedAt: atOrNull(row.defect_at) },
  };
  if (definition.retiringSecret !== undefined) task.retiringSecret = definition.retiringSecret;
  return task;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What a batch of run changes reads of a task: its id, what run transitions need, and a once task's
 * `run_at` (`once_at`, read out of its schedule: null for other schedules).
 */
export interface TaskContextRow {
  readonly id: string;
  readonly schedule_type: string;
  readonly options: string;
  readonly target_kind: string;
  readonly once_at: number | null;
  /** 1 when the target cannot be told to stop (a webhook without `cancelUrl`), else 0. */
  readonly untold: number;
}

export const TASK_CONTEXT_COLUMNS: readonly (keyof TaskContextRow)[] = [
  "id",
  "schedule_type",
  "options",
  "target_kind",
  "once_at",
  "untold",
];

/** The select list of `TASK_CONTEXT_COLUMNS`. */
export const TASK_CONTEXT_SELECT =
  "id, schedule_type, options, target_kind, " +
  "CASE WHEN schedule_type = 'once' THEN json_extract(schedule, '$.runAt') END AS once_at, " +
  // What a cancel of a running run depends on (`RunTaskContext.targetTold`, as `runTaskContext` says it).
  "(target_kind = 'webhook' AND json_extract(target, '$.cancelUrl') IS NULL) AS untold";

export function runTaskContextFromRow(row: TaskContextRow): RunTaskContext {
  return {
    scheduleType: row.schedule_type as RunTaskContext["scheduleType"],
    options: decodeTaskOptions(row.options),
    targetKind: row.target_kind as RunTaskContext["targetKind"],
    onceAt: onceAtOf(row.once_at),
    ...(row.untold === 1 ? { targetTold: false } : {}),
  };
}

/** A task as a row; `secrets` seals its signing secrets. */
export function taskToRow(task: Task, secrets: SecretSealer): TaskRow {
  const target = task.target;
  return {
    id: task.id,
    owner: task.owner,
    title: task.title,
    description: task.description,
    schedule: JSON.stringify(encodeSchedule(task.schedule)),
    schedule_type: task.schedule.type,
    target: JSON.stringify(target),
    target_kind: target.kind,
    handler_name: target.kind === "handler" ? target.name : null,
    context: JSON.stringify(task.context),
    thread_scope: threadScopeOf(target, task.owner),
    thread_id: task.context.mode === "reuse_thread" ? task.context.threadId : null,
    options: JSON.stringify(task.options),
    metadata: JSON.stringify(task.metadata),
    status: task.status,
    next_run_at: task.nextRunAt,
    decided_through: task.decidedThrough,
    admitted_count: task.admittedCount,
    last_run_at: task.lastRunAt,
    last_run_id: task.lastRunId,
    last_error: task.lastError,
    run_count: task.runCount,
    version: task.version,
    webhook_secret: secrets.seal(task.webhookSecret),
    retiring_secret: task.retiringSecret == null ? null : secrets.seal(task.retiringSecret.secret),
    retiring_until: task.retiringSecret?.until ?? null,
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    deleted_at: task.deletedAt,
    task_key: task.key,
    task_group: task.group,
    defect_at: task.defect?.detectedAt ?? null,
  };
}

export function runFromRow(row: RunRow): Run {
  return {
    id: row.id as RunId,
    taskId: row.task_id as TaskId,
    owner: row.owner as OwnerId,
    trigger: row.trigger as RunTrigger,
    scheduledFor: at(row.scheduled_for),
    fireAt: at(row.fire_at),
    status: row.status as RunStatus,
    reason: row.reason as RunReason | null,
    missedCount: row.missed_count,
    missedUntil: atOrNull(row.missed_until),
    attempt: row.attempt,
    failures: row.failures,
    notBefore: at(row.not_before),
    threadScope: row.thread_scope,
    threadId: row.thread_id as ThreadId,
    exclusive: flag(row.exclusive),
    claimToken: row.claim_token as FencingToken | null,
    claimExpiresAt: atOrNull(row.claim_expires_at),
    claimedBy: row.claimed_by,
    targetRunId: row.target_run_id,
    idempotencyKey: idempotencyKeyOf(row),
    queuedAt: at(row.queued_at),
    launchedAt: atOrNull(row.launched_at),
    deadlineAt: atOrNull(row.deadline_at),
    finishedAt: atOrNull(row.finished_at),
    latenessMs: row.lateness_ms,
    late: flag(row.late),
    cancelRequestedAt: atOrNull(row.cancel_requested_at),
    error: row.error,
    result: row.result === null ? null : (JSON.parse(row.result) as JsonValue),
    moved: row.moved === 1,
  };
}

/**
 * The idempotency key as stored: empty for a scheduled or backfilled run whose key is the one derived from
 * its task, trigger and instant, which is then derived on read (about 60 bytes of every run's row, so of
 * the pages its insert, claim and verdict write: docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal).
 * A manual run's client key is always stored (`runs_manual_key_uq`). The column is `NOT NULL` on SQLite,
 * so the derived key is stored `''` rather than NULL (no migration: runs written before keep their keys,
 * and read them as stored); only a run that is not manual is ever derived.
 */
export function storedIdempotencyKey(run: Run): string {
  return run.trigger !== "manual" &&
    run.idempotencyKey === idempotencyKeyFor(run.taskId, run.trigger, run.scheduledFor)
    ? ""
    : run.idempotencyKey;
}

/** The idempotency key of a run row: the stored one, else the one derived (`storedIdempotencyKey`). */
function idempotencyKeyOf(row: RunRow): string {
  if (row.idempotency_key !== "" || row.trigger === "manual") return row.idempotency_key;
  return idempotencyKeyFor(row.task_id as TaskId, row.trigger as RunTrigger, at(row.scheduled_for));
}

export function runToRow(run: Run): RunRow {
  return {
    id: run.id,
    task_id: run.taskId,
    owner: run.owner,
    trigger: run.trigger,
    scheduled_for: run.scheduledFor,
    fire_at: run.fireAt,
    status: run.status,
    reason: run.reason,
    missed_count: run.missedCount,
    missed_until: run.missedUntil,
    attempt: run.attempt,
    failures: run.failures,
    not_before: run.notBefore,
    thread_scope: run.threadScope,
    thread_id: run.threadId,
    exclusive: run.exclusive ? 1 : 0,
    claim_token: run.claimToken,
    claim_expires_at: run.claimExpiresAt,
    claimed_by: run.claimedBy,
    target_run_id: run.targetRunId,
    idempotency_key: storedIdempotencyKey(run),
    queued_at: run.queuedAt,
    launched_at: run.launchedAt,
    deadline_at: run.deadlineAt,
    finished_at: run.finishedAt,
    lateness_ms: run.latenessMs,
    late: run.late ? 1 : 0,
    cancel_requested_at: run.cancelRequestedAt,
    error: run.error,
    result: run.result === null ? null : JSON.stringify(run.result),
    moved: run.moved ? 1 : null,
  };
}

/**
 * A run's column values in `RUN_COLUMNS` order, for a statement with positional parameters: the run
 * insert binds 30 values per admitted occurrence, and binding them by name cost a property lookup each
 * (about 30% more per insert, measured alone). `runToRow` stays the one mapping: a test keeps the two equal.
 */
export function runValues(run: Run): unknown[] {
  return [
    run.id,
    run.taskId,
    run.owner,
    run.trigger,
    run.scheduledFor,
    run.fireAt,
    run.status,
    run.reason,
    run.missedCount,
    run.missedUntil,
    run.attempt,
    run.failures,
    run.notBefore,
    run.threadScope,
    run.threadId,
    run.exclusive ? 1 : 0,
    run.claimToken,
    run.claimExpiresAt,
    run.claimedBy,
    run.targetRunId,
    storedIdempotencyKey(run),
    run.queuedAt,
    run.launchedAt,
    run.deadlineAt,
    run.finishedAt,
    run.latenessMs,
    run.late ? 1 : 0,
    run.cancelRequestedAt,
    run.error,
    run.result === null ? null : JSON.stringify(run.result),
    run.moved ? 1 : null,
  ];
}
