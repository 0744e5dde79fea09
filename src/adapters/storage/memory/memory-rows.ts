/**
 * The rows of the memory store: what goes in is copied column by column and deeply frozen, so neither a
 * caller nor the store can change a row behind the other's back. JSON columns travel through JSON (the
 * schedule through its codec), as they do in the SQL stores, so a value that would not survive a database
 * does not survive here either.
 */
import type { RunId } from "../../../domain/ids.js";
import { threadId as toThreadId } from "../../../domain/ids.js";
import type { NewRun } from "../../../domain/new-run.js";
import type { Run } from "../../../domain/run.js";
import { decodeSchedule, encodeSchedule } from "../../../domain/schedule-codec.js";
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
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The stored, frozen copy of `task`: exactly the task table's columns. */
export function taskRow(task: Task): Task {
  return deepFreeze({
    id: task.id,
    owner: task.owner,
    title: task.title,
    description: task.description,
    schedule: Object.isFrozen(task.schedule)
      ? task.schedule
      : decodeSchedule(jsonColumn(encodeSchedule(task.schedule))),
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
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    deletedAt: task.deletedAt,
  });
}

/** The stored, frozen copy of `run`: exactly the run table's columns. */
export function runRow(run: Run): Run {
  return deepFreeze({
    id: run.id,
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
    threadId: run.threadId,
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
  });
}

/** The row a `NewRun` becomes under `id`; a run with no thread gets a fresh one named after itself. */
export function newRunRow(newRun: NewRun, id: RunId): Run {
  const threadId = newRun.threadId ?? toThreadId(id);
  return runRow({ ...newRun, id, threadId });
}
