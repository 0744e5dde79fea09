/**
 * The rows of the memory store: what goes in is copied column by column and deeply frozen, so neither a
 * caller nor the store can change a row behind the other's back. JSON columns travel through JSON (the
 * schedule through its codec), as they do in the SQL stores, so a value that would not survive a database
 * does not survive here either.
 */
import type { RunId, ThreadId } from "../../../domain/ids.js";
import { threadId as toThreadId } from "../../../domain/ids.js";
import type { NewRun } from "../../../domain/new-run.js";
import type { Run } from "../../../domain/run.js";
import {
  decodeSchedule,
  encodeSchedule,
  resolveCalendars,
} from "../../../domain/schedule-codec.js";
import type { ScheduleSpec } from "../../../domain/schedule/schedule-spec.js";
import type { Task } from "../../../domain/task.js";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * A JSON column: written as JSON text and read back. A frozen value already came out of a row (domain
 * transitions pass unchanged sub-objects along), so it is shared instead of copied again.
 */
function jsonColumn<T>(value: T): T {
  if (Object.isFrozen(value)) return value;
  return deepFreeze(JSON.parse(JSON.stringify(value)) as T);
}

/**
 * The schedule as a row holds it: through the codec, which keeps a calendar as a reference (name and
 * version), resolved here to the very items list the written task held, so every row naming one
 * version shares one list (the SQL stores keep it once in `calendar_versions`).
 */
function scheduleColumn(spec: ScheduleSpec): ScheduleSpec {
  const decoded = decodeSchedule(jsonColumn(encodeSchedule(spec)));
  return resolveCalendars(decoded, (name, version) => {
    if (spec.type === "once") return undefined;
    for (const exclusion of spec.exclude) {
      if (
        exclusion.kind === "calendar" &&
        exclusion.name === name &&
        exclusion.version === version
      ) {
        return exclusion.items;
      }
    }
    return undefined;
  });
}

/** The stored, frozen copy of `task`: exactly the task table's columns. */
export function taskRow(task: Task): Task {
  // The JSON columns are frozen deeply by `jsonColumn`; the other columns are primitives.
  return Object.freeze({
    id: task.id,
    owner: task.owner,
    title: task.title,
    description: task.description,
    schedule: Object.isFrozen(task.schedule)
      ? task.schedule
      : deepFreeze(scheduleColumn(task.schedule)),
    target: jsonColumn(task.target),
    context: jsonColumn(task.context),
    options: jsonColumn(task.options),
    metadata: jsonColumn(task.metadata),
    status: task.status,
    nextRunAt: task.nextRunAt,
    decidedThrough: task.decidedThrough,
    admittedCount: task.admittedCount,
    lastRunAt: task.lastRunAt,
    lastRunId: task.lastRunId,
    runCount: task.runCount,
    lastError: task.lastError,
    version: task.version,
    webhookSecret: task.webhookSecret,
    ...(task.retiringSecret == null ? {} : { retiringSecret: task.retiringSecret }),
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    deletedAt: task.deletedAt,
    key: task.key,
    group: task.group,
    defect: task.defect === null ? null : jsonColumn(task.defect),
  });
}

/** The stored, frozen copy of `run`: exactly the run table's columns. */
export function runRow(run: Run): Run {
  return rowOf(run, run.id, run.threadId);
}

/** The row a `NewRun` becomes under `id`; a run with no thread gets a fresh one named after itself. */
export function newRunRow(newRun: NewRun, id: RunId): Run {
  return rowOf(newRun, id, newRun.threadId ?? toThreadId(id));
}

/**
 * Copies column by column into one literal: `{ ...newRun, id }` would cost V8 microseconds per row (a
 * spread that adds a field takes a slow path), and a replay writes a row several times per fire.
 */
function rowOf(run: Omit<Run, "id" | "threadId">, id: RunId, threadId: ThreadId): Run {
  // Every column but `result` is a primitive: freezing the row and the result freezes it all.
  return Object.freeze({
    id,
    taskId: run.taskId,
    owner: run.owner,
    trigger: run.trigger,
    scheduledFor: run.scheduledFor,
    fireAt: run.fireAt,
    status: run.status,
    reason: run.reason,
    missedCount: run.missedCount,
    missedUntil: run.missedUntil,
    attempt: run.attempt,
    failures: run.failures,
    notBefore: run.notBefore,
    threadScope: run.threadScope,
    threadId,
    exclusive: run.exclusive,
    claimToken: run.claimToken,
    claimExpiresAt: run.claimExpiresAt,
    claimedBy: run.claimedBy,
    targetRunId: run.targetRunId,
    idempotencyKey: run.idempotencyKey,
    queuedAt: run.queuedAt,
    launchedAt: run.launchedAt,
    deadlineAt: run.deadlineAt,
    finishedAt: run.finishedAt,
    latenessMs: run.latenessMs,
    late: run.late,
    cancelRequestedAt: run.cancelRequestedAt,
    error: run.error,
    result: run.result === null ? null : jsonColumn(run.result),
    moved: run.moved,
  });
}
