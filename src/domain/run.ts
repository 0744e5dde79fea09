/**
 * The run: the durable record of one occurrence (docs/semantics.md#the-life-of-a-run, docs/semantics.md#run-statuses).
 *
 * States and moves (anything else is refused with IllegalTransitionError):
 *   queued    -> launching (claim) | cancelled | skipped (queue_timeout)
 *              | failed (no_handler: no live replica serves its handler)
 *   launching -> running (launched, indeterminate, reconciled) | queued (busy, retry, reconciled absent)
 *              | failed (launch_failed) | cancelled (cancel requested and nothing started)
 *              | succeeded/failed/cancelled (a verdict that overtakes the record of its launch)
 *   running   -> succeeded | failed | timed_out | cancelled | queued (retry of a failed attempt)
 *   failed | timed_out | cancelled -> queued only by a redrive (`redriveMove`), kept out of the moves
 *              every other transition may make, so a sweep or retry reaching an ended run stays refused
 *   born terminal: skipped (overlap, coalesced, buffer_full, excluded), missed (down, paused, window)
 */
import { IllegalTransitionError } from "./errors.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "./ids.js";
import type { JsonValue } from "./target.js";
import type { Instant } from "./time.js";

export const RUN_STATUSES = [
  "queued",
  "launching",
  "running",
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "skipped",
  "missed",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const ACTIVE_RUN_STATUSES = ["queued", "launching", "running"] as const;
/** Statuses that hold a task's or a thread's single launch slot (partial unique indexes). */
export const SLOT_RUN_STATUSES = ["launching", "running"] as const;
export const TERMINAL_RUN_STATUSES = [
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "skipped",
  "missed",
] as const;

/** The ended statuses a redrive may put back in the queue (docs/semantics.md#redrive). */
export const REDRIVABLE_RUN_STATUSES = ["failed", "timed_out", "cancelled"] as const;

export const RUN_TRIGGERS = ["scheduled", "manual", "backfill"] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/**
 * Why a run is `skipped`, `missed`, `failed`, `cancelled` or `timed_out`. docs/semantics.md explains each
 * (a test keeps the two lists equal).
 */
export const RUN_REASONS = [
  "overlap",
  "coalesced",
  "buffer_full",
  "down",
  "paused",
  "window",
  "queue_timeout",
  "launch_failed",
  "target_failed",
  "replica_lost",
  "run_timeout",
  "cancel_requested",
  "superseded",
  "task_paused",
  "task_cancelled",
  "task_deleted",
  "target_cancelled",
  "excluded",
  "non_retryable",
  "invalid_input",
  "quota",
  "no_handler",
] as const;
export type RunReason = (typeof RUN_REASONS)[number];

export interface Run {
  readonly id: RunId;
  readonly taskId: TaskId;
  readonly owner: OwnerId;
  readonly trigger: RunTrigger;
  /** The nominal instant (manual: the request instant). */
  readonly scheduledFor: Instant;
  /** `scheduled_for` plus jitter. */
  readonly fireAt: Instant;
  readonly status: RunStatus;
  readonly reason: RunReason | null;
  /** For a `missed` range (or a `skipped` one, reason `excluded`): how many nominal times it covers, and the last one. */
  readonly missedCount: number | null;
  readonly missedUntil: Instant | null;
  /** Claims made. */
  readonly attempt: number;
  /** Failed attempts, for the retry budget. */
  readonly failures: number;
  readonly notBefore: Instant;
  readonly threadScope: string;
  readonly threadId: ThreadId;
  /** Copied from the task's overlap policy at admission: holds the task's single slot. */
  readonly exclusive: boolean;
  readonly claimToken: FencingToken | null;
  readonly claimExpiresAt: Instant | null;
  /** The replica that holds (or last held) the claim. */
  readonly claimedBy: string | null;
  readonly targetRunId: string | null;
  readonly idempotencyKey: string;
  readonly queuedAt: Instant;
  readonly launchedAt: Instant | null;
  readonly deadlineAt: Instant | null;
  readonly finishedAt: Instant | null;
  readonly latenessMs: number | null;
  readonly late: boolean;
  readonly cancelRequestedAt: Instant | null;
  readonly error: string | null;
  readonly result: JsonValue | null;
  /**
   * Admitted from an occurrence moved off an excluded date (docs/schedules.md#moved-occurrences):
   * `scheduledFor` is the nominal time it came from and `fireAt` the moved instant. Stored only when
   * true (a nullable column, NULL for every other run).
   */
  readonly moved: boolean;
}

export function isActiveRunStatus(status: RunStatus): boolean {
  return (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(status);
}

export function isTerminalRunStatus(status: RunStatus): boolean {
  return (TERMINAL_RUN_STATUSES as readonly RunStatus[]).includes(status);
}

export function holdsSlot(status: RunStatus): boolean {
  return (SLOT_RUN_STATUSES as readonly RunStatus[]).includes(status);
}

const MOVES: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ["launching", "cancelled", "skipped", "failed"],
  launching: ["running", "queued", "succeeded", "failed", "cancelled"],
  running: ["succeeded", "failed", "timed_out", "cancelled", "queued"],
  succeeded: [],
  failed: [],
  timed_out: [],
  cancelled: [],
  skipped: [],
  missed: [],
};

/** Whether the state machine allows `from -> to`. */
export function canMove(from: RunStatus, to: RunStatus): boolean {
  return MOVES[from].includes(to);
}

/** A run's fields, writable: a transition's own fresh copy (`copyRun`), filled in before it is returned. */
export type RunDraft = { -readonly [K in keyof Run]: Run[K] };

/**
 * A fresh copy of `run`, its fields written one by one in `Run`'s order, so that every run a transition
 * makes has one shape whichever builder made the original (a row mapping, an admission, another
 * transition) and the code reading runs stays monomorphic. A spread (`{ ...run, ...changes }`) copied the
 * original's shape and went through V8's slow path for the changes: about a microsecond per copy, three
 * or four copies a fire (docs/benchmarks.md). Only `Run`'s fields are copied.
 */
export function copyRun(run: Run): RunDraft {
  return {
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
    result: run.result,
    moved: run.moved,
  };
}

/**
 * A copy of `run` moved to `to`, for the caller to fill in (`copyRun`); throws IllegalTransitionError
 * for a move the machine forbids.
 */
export function movedCopy(run: Run, to: RunStatus): RunDraft {
  if (!canMove(run.status, to)) throw new IllegalTransitionError("run", run.status, to);
  const next = copyRun(run);
  next.status = to;
  return next;
}

/** Returns `run` moved to `to` with `changes`; throws IllegalTransitionError for a move the machine forbids. */
export function moveRun(run: Run, to: RunStatus, changes?: Partial<Run>): Run {
  const next = movedCopy(run, to);
  if (changes !== undefined) Object.assign(next, changes);
  next.status = to;
  return next;
}

/**
 * The one way out of an ended run: a redrive (docs/semantics.md#redrive) moves a `failed`, `timed_out`
 * or `cancelled` run back to `queued` with `changes`. Kept apart from the moves `moveRun` allows, so no
 * other transition can take this edge by accident.
 * @throws IllegalTransitionError from any other status
 */
export function redriveMove(run: Run, changes: Partial<Run>): Run {
  if (!(REDRIVABLE_RUN_STATUSES as readonly RunStatus[]).includes(run.status)) {
    throw new IllegalTransitionError("run", run.status, "queued");
  }
  const next = Object.assign(copyRun(run), changes);
  next.status = "queued";
  return next;
}
