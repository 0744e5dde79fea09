/**
 * The edge between rows and the domain: the columns of `tasks`, `task_state` and `runs`, a domain object as one row of
 * wire values (epoch ms for timestamps, JSON text for `jsonb`), and a row read back as a domain object.
 * Rows are checked field by field; a malformed row is a TypeError naming the column.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import { fencingToken, ownerId, runId, taskId, threadId } from "../../../domain/ids.js";
import { RUN_REASONS, RUN_STATUSES, RUN_TRIGGERS } from "../../../domain/run.js";
import type { Run } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import { encodeSchedule } from "../../../domain/schedule-codec.js";
import { idempotencyKeyFor } from "../../../domain/occurrence.js";
import { decodeTaskFields, decodeTaskOptions, onceAtOf } from "../shared/stored-task-fields.js";
import type { StoredColumn } from "../shared/stored-task-fields.js";
import { TASK_STATUSES } from "../../../domain/task.js";
import type { Task } from "../../../domain/task.js";
import type { DecodedDefinition, TaskDefinition } from "../shared/task-definition-cache.js";
import { threadScopeOf } from "../../../domain/target.js";
import type { JsonValue } from "../../../domain/target.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Column } from "./postgres-sql.js";
import { timestampToMs, unnestSource, unnestValue } from "./postgres-sql.js";

/** The columns of `tasks`: the definition, written by owner commands only. */
export const TASK_DEFINITION_COLUMNS: readonly Column[] = [
  { name: "id", type: "text" },
  { name: "owner", type: "text" },
  { name: "title", type: "text" },
  { name: "description", type: "text" },
  { name: "schedule", type: "jsonb" },
  { name: "schedule_type", type: "text" },
  { name: "target", type: "jsonb" },
  { name: "target_kind", type: "text" },
  { name: "handler_name", type: "text" },
  { name: "context", type: "jsonb" },
  { name: "thread_scope", type: "text" },
  { name: "thread_id", type: "text" },
  { name: "options", type: "jsonb" },
  { name: "metadata", type: "jsonb" },
  { name: "webhook_secret", type: "text" },
  { name: "retiring_secret", type: "text" },
  { name: "retiring_until", type: "ts" },
  { name: "created_at", type: "ts" },
  { name: "updated_at", type: "ts" },
  { name: "deleted_at", type: "ts" },
  { name: "task_key", type: "text" },
  { name: "task_group", type: "text" },
];

/**
 * The columns of `task_state` a statement writes (its generated `due_at` aside), keyed by `task_id`: what a
 * fire changes, and the version that fences the verdict (docs/storage.md#tasks-and-task_state).
 */
export const TASK_STATE_COLUMNS: readonly Column[] = [
  { name: "task_id", type: "text" },
  { name: "version", type: "int4" },
  { name: "status", type: "text" },
  { name: "next_run_at", type: "ts" },
  { name: "decided_through", type: "ts" },
  { name: "admitted_count", type: "int8" },
  { name: "run_count", type: "int8" },
  { name: "defect_at", type: "ts" },
  { name: "last_run_at", type: "ts" },
  { name: "last_run_id", type: "text" },
  { name: "last_error", type: "text" },
];

/** A whole task's columns as read (`taskSelectList`): the definition's, then the state's but its key. */
export const TASK_COLUMNS: readonly Column[] = [
  ...TASK_DEFINITION_COLUMNS,
  ...TASK_STATE_COLUMNS.slice(1),
];

const STATE_COLUMN_NAMES = new Set(TASK_STATE_COLUMNS.map((c) => c.name));

export const RUN_COLUMNS: readonly Column[] = [
  { name: "id", type: "text" },
  { name: "task_id", type: "text" },
  { name: "owner", type: "text" },
  { name: "trigger", type: "text" },
  { name: "scheduled_for", type: "ts" },
  { name: "fire_at", type: "ts" },
  { name: "status", type: "text" },
  { name: "reason", type: "text" },
  { name: "missed_count", type: "int4" },
  { name: "missed_until", type: "ts" },
  { name: "attempt", type: "int4" },
  { name: "failures", type: "int4" },
  { name: "not_before", type: "ts" },
  { name: "thread_scope", type: "text" },
  { name: "thread_id", type: "text" },
  { name: "exclusive", type: "bool" },
  { name: "claim_token", type: "text" },
  { name: "claim_expires_at", type: "ts" },
  { name: "claimed_by", type: "text" },
  { name: "target_run_id", type: "text" },
  { name: "idempotency_key", type: "text" },
  { name: "queued_at", type: "ts" },
  { name: "launched_at", type: "ts" },
  { name: "deadline_at", type: "ts" },
  { name: "finished_at", type: "ts" },
  { name: "lateness_ms", type: "int8" },
  { name: "late", type: "bool" },
  { name: "cancel_requested_at", type: "ts" },
  { name: "error", type: "text" },
  { name: "result", type: "jsonb" },
  // Last and NULL but for a run from a moved occurrence (migration 29, docs/schedules.md#moved-occurrences).
  { name: "moved", type: "bool" },
];

/** The task's definition as one row of wire values, in `TASK_DEFINITION_COLUMNS` order; `secrets` seals its signing secrets. */
export function taskDefinitionValues(task: Task, secrets: SecretSealer): unknown[] {
  const context = task.context;
  return [
    task.id,
    task.owner,
    task.title,
    task.description,
    json(encodeSchedule(task.schedule)),
    task.schedule.type,
    json(task.target),
    task.target.kind,
    task.target.kind === "handler" ? task.target.name : null,
    json(context),
    threadScopeOf(task.target, task.owner),
    context.mode === "reuse_thread" ? context.threadId : null,
    json(task.options),
    json(task.metadata),
    secrets.seal(task.webhookSecret),
    task.retiringSecret == null ? null : secrets.seal(task.retiringSecret.secret),
    task.retiringSecret?.until ?? null,
    task.createdAt,
    task.updatedAt,
    task.deletedAt,
    task.key,
    task.group,
  ];
}

/**
 * The task's state as one row of wire values, in `TASK_STATE_COLUMNS` order. A deleted task is never due:
 * its `next_run_at` is stored NULL (no read returns a deleted task), so `due_at` is NULL too.
 */
export function taskStateValues(task: Task): unknown[] {
  return [
    task.id,
    task.version,
    task.status,
    task.deletedAt === null ? task.nextRunAt : null,
    task.decidedThrough,
    task.admittedCount,
    task.runCount,
    task.defect?.detectedAt ?? null,
    task.lastRunAt,
    task.lastRunId,
    task.lastError,
  ];
}

/** The whole task as one row of wire values, in `TASK_COLUMNS` order: what `taskWrite` takes. */
export function taskValues(task: Task, secrets: SecretSealer): unknown[] {
  return [...taskDefinitionValues(task, secrets), ...taskStateValues(task).slice(1)];
}

/**
 * One statement writing whole tasks, their rows in `TASK_COLUMNS` arrays (`columnArrays(TASK_COLUMNS,
 * rows.map(taskValues))`, the ids first): `insert` adds each task's `tasks` and `task_state` rows and ends
 * with `tail` (over `inserted`, the ids of the state rows written), `rewrite` sets every column of both
 * (docs/storage.md#tasks-and-task_state).
 */
export function taskWrite(
  kind: "insert" | "rewrite",
  tasks: string,
  state: string,
  tail = "SELECT count(*)::int4 AS inserted FROM inserted",
): string {
  const source = `WITH u AS MATERIALIZED (SELECT * FROM ${unnestSource(TASK_COLUMNS)})`;
  const stateColumns = TASK_STATE_COLUMNS.slice(1);
  if (kind === "insert") {
    const names = (columns: readonly Column[]) => columns.map((c) => c.name).join(", ");
    const values = (columns: readonly Column[]) => columns.map(unnestValue).join(", ");
    return (
      `${source}, d AS (INSERT INTO ${tasks} (${names(TASK_DEFINITION_COLUMNS)})` +
      ` SELECT ${values(TASK_DEFINITION_COLUMNS)} FROM u)` +
      `, inserted AS (INSERT INTO ${state} (task_id, ${names(stateColumns)})` +
      ` SELECT u.id, ${values(stateColumns)} FROM u RETURNING task_id) ${tail}`
    );
  }
  const sets = (columns: readonly Column[]) =>
    columns.map((c) => `${c.name} = ${unnestValue(c)}`).join(", ");
  return (
    `${source}, d AS (UPDATE ${tasks} AS t SET ${sets(TASK_DEFINITION_COLUMNS.slice(1))} FROM u` +
    ` WHERE t.id = u.id AND t.id = ANY($1::text[]))` +
    ` UPDATE ${state} AS t SET ${sets(stateColumns)} FROM u` +
    ` WHERE t.task_id = u.id AND t.task_id = ANY($1::text[])`
  );
}

/** The run as one row of wire values, in `RUN_COLUMNS` order. */
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
    run.exclusive,
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
    run.late,
    run.cancelRequestedAt,
    run.error,
    run.result === null ? null : json(run.result),
    run.moved ? true : null,
  ];
}

/**
 * The task columns to select from `def` (its `tasks` row) and `state` (its `task_state` row), as
 * `taskSource` joins them, each named `prefix` + its name: instants as epoch milliseconds, and the JSON
 * columns as their text, which `taskFromRow` decodes through the stored-fields memo (a task row is read by
 * admission and again by its claim; see stored-task-fields.ts).
 */
export function taskSelectList(def: string, state: string, prefix = ""): string {
  return TASK_COLUMNS.map((c) => {
    const column = `${STATE_COLUMN_NAMES.has(c.name) ? state : def}.${c.name}`;
    if (c.type === "ts") return `${timestampToMs(column)} AS ${prefix}${c.name}`;
    if (c.type === "jsonb") return `${column}::text AS ${prefix}${c.name}`;
    return `${column} AS ${prefix}${c.name}`;
  }).join(", ");
}

/**
 * The column `calendars` of a task read (after `taskSelectList`): the items of each calendar version
 * the schedule of `def` references, joined from `calendar_versions` by primary key in the same
 * statement (`[[name, version, itemsText], ...]` as JSON text, or null when it names none). A task whose
 * schedule has no `exclude` array costs nothing more. `versions` is the qualified table.
 */
export function calendarItemsColumn(versions: string, def: string): string {
  // Only a schedule with an `exclude` array can name a calendar: for the others (most tasks) the
  // subquery is not run (about 0.6 ms per 250 tasks of a due read, docs/benchmarks.md).
  return (
    `CASE WHEN jsonb_typeof(${def}.schedule->'exclude') = 'array' THEN` +
    ` (SELECT json_agg(json_build_array(cv.name, cv.version, cv.items))::text` +
    ` FROM (SELECT DISTINCT e.v->>'name' AS name, (e.v->>'version')::int4 AS version` +
    ` FROM jsonb_array_elements(${def}.schedule->'exclude') AS e(v)` +
    ` WHERE e.v->>'kind' = 'calendar' AND NOT e.v ? 'itemsJson' AND NOT e.v ? 'items') AS r` +
    ` JOIN ${versions} AS cv ON cv.owner = ${def}.owner AND cv.name = r.name` +
    ` AND cv.version = r.version) END AS calendars`
  );
}

/** A JSON column as read: its text (`taskSelectList`), or its value where a statement returned jsonb. */
function stored(row: Row, column: string): StoredColumn {
  const value = row[column];
  return typeof value === "string" ? value : () => present(row, column);
}

export type { DecodedDefinition, TaskDefinition } from "../shared/task-definition-cache.js";

/** The `task_state` columns as one statement names them: `prefix` + the column's name, made once. */
export interface TaskStateNames {
  readonly version: string;
  readonly status: string;
  readonly nextRunAt: string;
  readonly decidedThrough: string;
  readonly admittedCount: string;
  readonly runCount: string;
  readonly defectAt: string;
  readonly lastRunAt: string;
  readonly lastRunId: string;
  readonly lastError: string;
}

export function taskStateNames(prefix: string): TaskStateNames {
  return {
    version: `${prefix}version`,
    status: `${prefix}status`,
    nextRunAt: `${prefix}next_run_at`,
    decidedThrough: `${prefix}decided_through`,
    admittedCount: `${prefix}admitted_count`,
    runCount: `${prefix}run_count`,
    defectAt: `${prefix}defect_at`,
    lastRunAt: `${prefix}last_run_at`,
    lastRunId: `${prefix}last_run_id`,
    lastError: `${prefix}last_error`,
  };
}

const UNPREFIXED_STATE = taskStateNames("");

/** A task read with `taskSelectList`; `secrets` opens its signing secrets. */
export function taskFromRow(value: unknown, secrets: SecretSealer): Task {
  const row = record(value);
  const decoded = taskDefinitionFromRow(row, secrets);
  return taskWithState(decoded, row, UNPREFIXED_STATE);
}

/** The definition columns of a task row read with `taskSelectList` (unprefixed), decoded. */
export function taskDefinitionFromRow(value: unknown, secrets: SecretSealer): DecodedDefinition {
  const row = record(value);
  const createdAt = instantOf(row, "created_at");
  const fields = decodeTaskFields(
    {
      schedule: stored(row, "schedule"),
      target: stored(row, "target"),
      context: stored(row, "context"),
      options: stored(row, "options"),
      metadata: stored(row, "metadata"),
      // Present where the read joined the calendar versions (`calendarItemsColumn`).
      calendars: "calendars" in row ? (textOrNull(row, "calendars") ?? null) : undefined,
    },
    createdAt,
  );
  const retiring = textOrNull(row, "retiring_secret");
  const retiringUntil = instantOrNull(row, "retiring_until");
  // Object literals with every field, never spread: a spread into a literal of this size made V8 build
  // a slow (dictionary) object, measured at about 70 us a task against under 1 us.
  const definition: Mutable<TaskDefinition> = {
    id: taskId(text(row, "id")),
    owner: ownerId(text(row, "owner")),
    title: text(row, "title"),
    description: textOrNull(row, "description"),
    schedule: fields.schedule,
    target: fields.target,
    context: fields.context,
    options: fields.options,
    metadata: fields.metadata,
    webhookSecret: secrets.open(text(row, "webhook_secret")),
    createdAt,
    updatedAt: instantOf(row, "updated_at"),
    deletedAt: instantOrNull(row, "deleted_at"),
    key: textOrNull(row, "task_key"),
    group: textOrNull(row, "task_group"),
  };
  if (retiring !== null && retiringUntil !== null) {
    definition.retiringSecret = { secret: secrets.open(retiring), until: retiringUntil };
  }
  return { definition, defects: fields.defects };
}

/** The whole task: `decoded`'s definition with the `task_state` columns of `value`, as `names` names them. */
export function taskWithState(
  decoded: DecodedDefinition,
  value: unknown,
  names: TaskStateNames,
): Task {
  const row = record(value);
  const { definition, defects } = decoded;
  const lastRunId = row[names.lastRunId];
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
    status: oneOf(TASK_STATUSES, row, names.status),
    nextRunAt: instantOrNull(row, names.nextRunAt),
    decidedThrough: instantOf(row, names.decidedThrough),
    admittedCount: integer(row, names.admittedCount),
    lastRunAt: instantOrNull(row, names.lastRunAt),
    lastRunId: lastRunId === null ? null : runId(text(row, names.lastRunId)),
    runCount: integer(row, names.runCount),
    lastError: textOrNull(row, names.lastError),
    version: integer(row, names.version),
    webhookSecret: definition.webhookSecret,
    createdAt: definition.createdAt,
    updatedAt: definition.updatedAt,
    deletedAt: definition.deletedAt,
    key: definition.key,
    group: definition.group,
    defect:
      defects.length === 0
        ? null
        : { fields: defects, detectedAt: instantOrNull(row, names.defectAt) },
  };
  if (definition.retiringSecret !== undefined) task.retiringSecret = definition.retiringSecret;
  return task;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What run transitions need of a task, read as `id, schedule_type, options, target_kind, once_at` (a
 * once task's `run_at` out of its schedule, as text; null for other schedules).
 */
export function runTaskContextFromRow(value: unknown): RunTaskContext {
  const row = record(value);
  return {
    scheduleType: oneOf(SCHEDULE_TYPES, row, "schedule_type"),
    options: decodeTaskOptions(stored(row, "options")),
    targetKind: oneOf(TARGET_KINDS, row, "target_kind"),
    onceAt: onceAtOf(row["once_at"]),
    ...(row["untold"] === true ? { targetTold: false } : {}),
  };
}

/**
 * The `untold` column a narrow task read selects beside `runTaskContextFromRow`'s (task alias `k`): true
 * when the target cannot be told to stop (a webhook without `cancelUrl`), what a cancel depends on.
 */
export function untoldColumn(k: string): string {
  return `(${k}.target_kind = 'webhook' AND ${k}.target->>'cancelUrl' IS NULL) AS untold`;
}

const TARGET_KINDS = ["agent", "webhook", "handler"] as const;

const SCHEDULE_TYPES = ["cron", "once", "interval", "rrule"] as const;

/**
 * The idempotency key as stored: NULL for a scheduled or backfilled run whose key is the one derived from
 * its task, trigger and instant (about 70 bytes of every run's row and of its insert's WAL, migration 28);
 * a manual run's client key is always stored (`runs_manual_key_uq`).
 */
function storedIdempotencyKey(run: Run): string | null {
  return run.trigger !== "manual" &&
    run.idempotencyKey === idempotencyKeyFor(run.taskId, run.trigger, run.scheduledFor)
    ? null
    : run.idempotencyKey;
}

/** The idempotency key of a run row: the stored one, else the one derived (`storedIdempotencyKey`). */
function idempotencyKeyOf(row: Record<string, unknown>): string {
  const stored = textOrNull(row, "idempotency_key");
  if (stored !== null) return stored;
  return idempotencyKeyFor(
    taskId(text(row, "task_id")),
    oneOf(RUN_TRIGGERS, row, "trigger"),
    instantOf(row, "scheduled_for"),
  );
}

/** A run read with `selectList(RUN_COLUMNS, ...)`. */
export function runFromRow(value: unknown): Run {
  const row = record(value);
  const reason = row["reason"] === null ? null : oneOf(RUN_REASONS, row, "reason");
  return {
    id: runId(text(row, "id")),
    taskId: taskId(text(row, "task_id")),
    owner: ownerId(text(row, "owner")),
    trigger: oneOf(RUN_TRIGGERS, row, "trigger"),
    scheduledFor: instantOf(row, "scheduled_for"),
    fireAt: instantOf(row, "fire_at"),
    status: oneOf(RUN_STATUSES, row, "status"),
    reason,
    missedCount: integerOrNull(row, "missed_count"),
    missedUntil: instantOrNull(row, "missed_until"),
    attempt: integer(row, "attempt"),
    failures: integer(row, "failures"),
    notBefore: instantOf(row, "not_before"),
    threadScope: text(row, "thread_scope"),
    threadId: threadId(text(row, "thread_id")),
    exclusive: bool(row, "exclusive"),
    claimToken: mapNull(textOrNull(row, "claim_token"), fencingToken),
    claimExpiresAt: instantOrNull(row, "claim_expires_at"),
    claimedBy: textOrNull(row, "claimed_by"),
    targetRunId: textOrNull(row, "target_run_id"),
    idempotencyKey: idempotencyKeyOf(row),
    queuedAt: instantOf(row, "queued_at"),
    launchedAt: instantOrNull(row, "launched_at"),
    deadlineAt: instantOrNull(row, "deadline_at"),
    finishedAt: instantOrNull(row, "finished_at"),
    latenessMs: integerOrNull(row, "lateness_ms"),
    late: bool(row, "late"),
    cancelRequestedAt: instantOrNull(row, "cancel_requested_at"),
    error: textOrNull(row, "error"),
    result: (row["result"] ?? null) as JsonValue | null,
    moved: row["moved"] === true,
  };
}

type Row = Readonly<Record<string, unknown>>;

export function record(value: unknown): Row {
  if (typeof value !== "object" || value === null) throw new TypeError("expected a row");
  return value as Row;
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

function present(row: Row, column: string): unknown {
  const value = row[column];
  if (value === undefined || value === null) throw malformed(column, "a value");
  return value;
}

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== "string") throw malformed(column, "text");
  return value;
}

function textOrNull(row: Row, column: string): string | null {
  return row[column] === null ? null : text(row, column);
}

function bool(row: Row, column: string): boolean {
  const value = row[column];
  if (typeof value !== "boolean") throw malformed(column, "a boolean");
  return value;
}

/** An integer column: `int4` arrives as a number, `int8` as a string (node-postgres) or a bigint. */
export function integer(row: Row, column: string): number {
  const value = row[column];
  const number =
    typeof value === "number"
      ? value
      : typeof value === "string" || typeof value === "bigint"
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(number)) throw malformed(column, "an integer");
  return number;
}

function integerOrNull(row: Row, column: string): number | null {
  return row[column] === null ? null : integer(row, column);
}

export function instantOf(row: Row, column: string): Instant {
  return instant(integer(row, column));
}

export function instantOrNull(row: Row, column: string): Instant | null {
  const value = row[column];
  return value === null || value === undefined ? null : instantOf(row, column);
}

function oneOf<T extends string>(list: readonly T[], row: Row, column: string): T {
  const value = row[column];
  // A loop, not `find`: no closure made for each column of each row read.
  for (const item of list) if (item === value) return item;
  throw malformed(column, `one of ${list.join(", ")}`);
}

function mapNull<T, U>(value: T | null, map: (value: T) => U): U | null {
  return value === null ? null : map(value);
}

function malformed(column: string, expected: string): TypeError {
  return new TypeError(`malformed row: column ${column} is not ${expected}`);
}
