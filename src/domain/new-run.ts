/**
 * Turns decisions into run rows to insert. The writer mints each row's id; a `threadId` of null means a
 * fresh thread, whose id the writer sets to the run's own id (so reconciliation knows where to look).
 */
import type { Decision } from "./admission.js";
import { threadId } from "./ids.js";
import type { OwnerId, RunId, TaskId, ThreadId } from "./ids.js";
import { idempotencyKeyFor } from "./occurrence.js";
import type { Run } from "./run.js";
import type { Instant } from "./time.js";

/** A run row before the writer gives it an id. */
export type NewRun = Omit<Run, "id" | "threadId"> & { readonly threadId: ThreadId | null };

/** What differs between new rows; everything else starts unclaimed. */
type NewRunFields = Pick<
  NewRun,
  | "taskId"
  | "owner"
  | "queuedAt"
  | "trigger"
  | "scheduledFor"
  | "fireAt"
  | "status"
  | "reason"
  | "missedCount"
  | "missedUntil"
  | "notBefore"
  | "threadScope"
  | "threadId"
  | "exclusive"
  | "idempotencyKey"
  | "finishedAt"
  | "moved"
>;

/**
 * The row, written as one literal: V8 builds `{ ...base, ...more than a dozen fields }` through a slow
 * path, measured at 6-20 microseconds a run (5% of a replay's profile) against 0.05 for this.
 */
function unclaimedRow(fields: NewRunFields): NewRun {
  return {
    taskId: fields.taskId,
    owner: fields.owner,
    trigger: fields.trigger,
    scheduledFor: fields.scheduledFor,
    fireAt: fields.fireAt,
    status: fields.status,
    reason: fields.reason,
    missedCount: fields.missedCount,
    missedUntil: fields.missedUntil,
    attempt: 0,
    failures: 0,
    notBefore: fields.notBefore,
    threadScope: fields.threadScope,
    threadId: fields.threadId,
    exclusive: fields.exclusive,
    claimToken: null,
    claimExpiresAt: null,
    claimedBy: null,
    targetRunId: null,
    idempotencyKey: fields.idempotencyKey,
    queuedAt: fields.queuedAt,
    launchedAt: null,
    deadlineAt: null,
    finishedAt: fields.finishedAt,
    latenessMs: null,
    late: false,
    cancelRequestedAt: null,
    error: null,
    result: null,
    moved: fields.moved,
  };
}

/** The run row a decision writes (docs/semantics.md#the-life-of-a-run). */
export function newRunFromDecision(
  task: { readonly id: TaskId; readonly owner: OwnerId; readonly threadScope: string },
  decision: Decision,
  now: Instant,
): NewRun {
  switch (decision.kind) {
    case "queue":
      return unclaimedRow({
        taskId: task.id,
        owner: task.owner,
        queuedAt: now,
        trigger: decision.trigger,
        scheduledFor: decision.scheduledFor,
        fireAt: decision.fireAt,
        status: "queued",
        reason: null,
        missedCount: null,
        missedUntil: null,
        notBefore: decision.notBefore,
        threadScope: decision.threadScope,
        threadId: decision.threadId,
        exclusive: decision.exclusive,
        idempotencyKey: decision.idempotencyKey,
        finishedAt: null,
        moved: decision.moved,
      });
    case "skip":
      return terminalRecord(task, now, {
        scheduledFor: decision.scheduledFor,
        fireAt: decision.fireAt,
        status: "skipped",
        reason: decision.reason,
        missedCount: null,
        missedUntil: null,
      });
    case "miss":
      return terminalRecord(task, now, {
        scheduledFor: decision.from,
        fireAt: decision.from,
        status: "missed",
        reason: decision.reason,
        missedCount: decision.count,
        missedUntil: decision.until,
      });
    case "exclude":
      // A range like `missed`: `missed_count` and `missed_until` say how many and the last one.
      return terminalRecord(task, now, {
        scheduledFor: decision.from,
        fireAt: decision.from,
        status: "skipped",
        reason: decision.reason,
        missedCount: decision.count,
        missedUntil: decision.until,
      });
  }
}

function terminalRecord(
  task: { readonly id: TaskId; readonly owner: OwnerId; readonly threadScope: string },
  now: Instant,
  fields: Pick<Run, "scheduledFor" | "fireAt" | "reason" | "missedCount" | "missedUntil"> & {
    status: "skipped" | "missed";
  },
): NewRun {
  return unclaimedRow({
    taskId: task.id,
    owner: task.owner,
    queuedAt: now,
    trigger: "scheduled",
    scheduledFor: fields.scheduledFor,
    fireAt: fields.fireAt,
    status: fields.status,
    reason: fields.reason,
    missedCount: fields.missedCount,
    missedUntil: fields.missedUntil,
    notBefore: fields.fireAt,
    threadScope: task.threadScope,
    threadId: null,
    exclusive: false,
    idempotencyKey: idempotencyKeyFor(task.id, "scheduled", fields.scheduledFor),
    finishedAt: now,
    moved: false,
  });
}

/**
 * The run `newRun` becomes once the writer gave it `id`: a fresh thread (`threadId` null) is named after
 * the run. Written as one literal, column by column: `{ ...newRun, id }` adds a field after a spread,
 * which V8 builds through a slow path (about 3 us a row against 0.1).
 */
export function newRunWithId(newRun: NewRun, id: RunId): Run {
  return {
    id,
    taskId: newRun.taskId,
    owner: newRun.owner,
    trigger: newRun.trigger,
    scheduledFor: newRun.scheduledFor,
    fireAt: newRun.fireAt,
    status: newRun.status,
    reason: newRun.reason,
    missedCount: newRun.missedCount,
    missedUntil: newRun.missedUntil,
    attempt: newRun.attempt,
    failures: newRun.failures,
    notBefore: newRun.notBefore,
    threadScope: newRun.threadScope,
    threadId: newRun.threadId ?? threadId(id),
    exclusive: newRun.exclusive,
    claimToken: newRun.claimToken,
    claimExpiresAt: newRun.claimExpiresAt,
    claimedBy: newRun.claimedBy,
    targetRunId: newRun.targetRunId,
    idempotencyKey: newRun.idempotencyKey,
    queuedAt: newRun.queuedAt,
    launchedAt: newRun.launchedAt,
    deadlineAt: newRun.deadlineAt,
    finishedAt: newRun.finishedAt,
    latenessMs: newRun.latenessMs,
    late: newRun.late,
    cancelRequestedAt: newRun.cancelRequestedAt,
    error: newRun.error,
    result: newRun.result,
    moved: newRun.moved,
  };
}
