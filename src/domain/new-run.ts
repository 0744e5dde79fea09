/**
 * Turns decisions into run rows to insert. The writer mints each row's id; a `threadId` of null means a
 * fresh thread, whose id the writer sets to the run's own id (so reconciliation knows where to look).
 */
import type { Decision } from "./admission.js";
import type { OwnerId, TaskId, ThreadId } from "./ids.js";
import { idempotencyKeyFor } from "./occurrence.js";
import type { Run } from "./run.js";
import type { Instant } from "./time.js";

/** A run row before the writer gives it an id. */
export type NewRun = Omit<Run, "id" | "threadId"> & { readonly threadId: ThreadId | null };

const UNCLAIMED = {
  attempt: 0,
  failures: 0,
  claimToken: null,
  claimExpiresAt: null,
  claimedBy: null,
  targetRunId: null,
  launchedAt: null,
  deadlineAt: null,
  latenessMs: null,
  late: false,
  cancelRequestedAt: null,
  error: null,
  result: null,
} as const;

/** The run row a decision writes (SPEC 5.1). */
export function newRunFromDecision(
  task: { readonly id: TaskId; readonly owner: OwnerId; readonly threadScope: string },
  decision: Decision,
  now: Instant,
): NewRun {
  const base = { ...UNCLAIMED, taskId: task.id, owner: task.owner, queuedAt: now };
  switch (decision.kind) {
    case "queue":
      return {
        ...base,
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
      };
    case "skip":
      return terminalRecord(base, task.threadScope, {
        scheduledFor: decision.scheduledFor,
        fireAt: decision.fireAt,
        status: "skipped",
        reason: decision.reason,
        now,
      });
    case "miss":
      return {
        ...terminalRecord(base, task.threadScope, {
          scheduledFor: decision.from,
          fireAt: decision.from,
          status: "missed",
          reason: decision.reason,
          now,
        }),
        missedCount: decision.count,
        missedUntil: decision.until,
      };
  }
}

function terminalRecord(
  base: typeof UNCLAIMED & { taskId: TaskId; owner: OwnerId; queuedAt: Instant },
  threadScope: string,
  fields: Pick<Run, "scheduledFor" | "fireAt"> & {
    status: "skipped" | "missed";
    reason: Run["reason"];
    now: Instant;
  },
): NewRun {
  return {
    ...base,
    trigger: "scheduled",
    scheduledFor: fields.scheduledFor,
    fireAt: fields.fireAt,
    status: fields.status,
    reason: fields.reason,
    missedCount: null,
    missedUntil: null,
    notBefore: fields.fireAt,
    threadScope,
    threadId: null,
    exclusive: false,
    idempotencyKey: idempotencyKeyFor(base.taskId, "scheduled", fields.scheduledFor),
    finishedAt: fields.now,
  };
}
