/**
 * The vocabulary of run transitions (docs/semantics.md#the-life-of-a-run): what a change of one run
 * writes (the run, plus the task's launch bookkeeping or verdict fields), what the launcher, the target
 * and a reconciliation can say, and the building blocks every transition shares: a launch booked, a run
 * cancelled before it started, a failed attempt under the retry budget. The transitions themselves are
 * in run-transitions.ts (claim, launch, completion, cancellation) and run-recovery.ts (sweeps,
 * reconciliation, hand-back).
 */
import type { ScheduleType } from "./schedule/schedule-types.js";
import { exponentialBackoffMs } from "./backoff.js";
import type { RunId } from "./ids.js";
import { hashFraction } from "./occurrence.js";
import type { RetryOptions, TaskOptions } from "./options.js";
import { moveRun, movedCopy } from "./run.js";
import type { Run, RunDraft, RunReason } from "./run.js";
import type { JsonValue, TargetKind } from "./target.js";
import type { Task, TaskStatus } from "./task.js";
import type { DurationMs, Instant } from "./time.js";

/** Launch bookkeeping for the task: written only by a recorded launch. */
export interface TaskLaunchPatch {
  readonly lastRunAt: Instant;
  readonly lastRunId: RunId;
  readonly runCountIncrement: 1;
}

/** Verdict fields for the task: written only by completion (status only for a once task's scheduled run). */
export interface TaskVerdictPatch {
  readonly lastError: string | null;
  readonly status?: Extract<TaskStatus, "completed" | "failed" | "cancelled">;
}

export interface RunChange {
  readonly run: Run;
  readonly taskLaunch?: TaskLaunchPatch;
  readonly taskVerdict?: TaskVerdictPatch;
  /** The target should be asked to stop the run (cancel hook). */
  readonly cancelTarget?: boolean;
}

/** The facts about the task that run transitions need. */
export interface RunTaskContext {
  readonly scheduleType: ScheduleType;
  readonly options: TaskOptions;
  /** The task's target kind, for the `run:changed` event's label (docs/operations.md#metrics-and-probes). */
  readonly targetKind: TargetKind;
  /**
   * False when a running run's target cannot be told to stop (a webhook without `cancel_url`): a cancel
   * then ends the run at once, "target not told" (docs/semantics.md#cancellation). @default true
   */
  readonly targetTold?: boolean;
  /**
   * A once task's occurrence: its nominal time (`run_at`), which a manual run that took the occurrence
   * stands for (`takesOccurrence`, docs/semantics.md#task-statuses); null or absent for other schedules.
   * @default null
   */
  readonly onceAt?: Instant | null;
}

/** A task's `RunTaskContext`. */
export function runTaskContext(task: Task): RunTaskContext {
  const told = task.target.kind !== "webhook" || task.target.cancelUrl !== null;
  const context = {
    scheduleType: task.schedule.type,
    options: task.options,
    targetKind: task.target.kind,
    onceAt: task.schedule.type === "once" ? task.schedule.runAt : null,
  };
  return told ? context : { ...context, targetTold: false };
}

/**
 * Whether `run` holds its once task's occurrence, so that its end is the task's end
 * (docs/semantics.md#task-statuses): the scheduled run, or a manual run that took the occurrence (its
 * `scheduled_for` is the task's `run_at`: `takeOnceOccurrence`). A manual run that stands for an
 * occurrence an edit has since moved holds nothing.
 */
export function holdsOnceOccurrence(run: Run, task: RunTaskContext): boolean {
  if (task.scheduleType !== "once") return false;
  if (run.trigger === "scheduled") return true;
  return run.trigger === "manual" && task.onceAt != null && run.scheduledFor === task.onceAt;
}

/**
 * The task after a run change's task patches are written (docs/semantics.md#completion): launch bookkeeping (`last_run_*`,
 * `run_count` moved relatively) and verdict fields only; every other field is left as it was.
 */
export function withTaskPatches(
  task: Task,
  patches: { readonly taskLaunch?: TaskLaunchPatch; readonly taskVerdict?: TaskVerdictPatch },
): Task {
  const launch = patches.taskLaunch;
  const verdict = patches.taskVerdict;
  return {
    ...task,
    ...(launch === undefined
      ? {}
      : {
          lastRunAt: launch.lastRunAt,
          lastRunId: launch.lastRunId,
          runCount: task.runCount + launch.runCountIncrement,
        }),
    ...(verdict === undefined
      ? {}
      : { lastError: verdict.lastError, status: verdict.status ?? task.status }),
  };
}

/** What the launcher said (docs/semantics.md#launch): exactly one of four outcomes. */
export type LaunchOutcome =
  | {
      readonly kind: "launched";
      readonly targetRunId: string | null;
      readonly threadMismatch?: string;
    }
  | { readonly kind: "busy"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }
  | {
      readonly kind: "indeterminate";
      readonly message: string;
      /** When the request was sent: the run may have started from then on (its `launched_at`). */
      readonly sentAt?: Instant;
    };

/** What a launch came to: the outcome to record, and a verdict the target already gave at launch. */
export interface LaunchAnswer {
  readonly outcome: LaunchOutcome;
  readonly completion?: CompletionVerdict;
}

/** A verdict reported by the target or the handler (docs/semantics.md#completion). */
export interface CompletionVerdict {
  readonly status: "succeeded" | "failed" | "cancelled";
  readonly error?: string | null;
  readonly result?: JsonValue | null;
  /** What a failure asks of the task's retry policy (docs/semantics.md#launch); absent: the policy decides. */
  readonly retry?: RetryRequest;
}

/**
 * A failure's word on retrying: `never` ends the run now, whatever attempts are left, with the reason
 * given; `after` queues the next attempt after exactly `delayMs` instead of the back-off (still counted
 * against `max_attempts`).
 */
export type RetryRequest =
  | {
      readonly kind: "never";
      readonly reason: Extract<RunReason, "non_retryable" | "invalid_input">;
    }
  | { readonly kind: "after"; readonly delayMs: DurationMs };

/** What the target said about a run whose launch claim expired (docs/semantics.md#run-statuses). */
export type ReconcileFinding =
  | {
      readonly kind: "found";
      readonly targetRunId: string | null;
      /** When the target says it created the run, if it says. */
      readonly createdAt?: Instant | null;
    }
  | { readonly kind: "absent" }
  | { readonly kind: "unknown" };

/** Exponential backoff with deterministic jitter (up to +50%), capped at `maxDelayMs`. */
export function retryBackoffMs(retry: RetryOptions, failures: number, seed: string): DurationMs {
  const base = exponentialBackoffMs(failures - 1, retry.initialMs, retry.maxDelayMs);
  const spread = Math.floor(base * 0.5 * hashFraction(`${seed}|${failures}`));
  return Math.min(retry.maxDelayMs, base + spread) as DurationMs;
}

/**
 * A launch booked as started at `launchedAt`: `running`, a deadline (the run timeout counts from
 * there), the lateness, and the task's launch bookkeeping.
 */
export function launched(
  run: Run,
  launchedAt: Instant,
  options: TaskOptions,
  fields: { targetRunId: string | null; error: string | null },
): RunChange {
  const latenessMs = Math.max(0, launchedAt - run.fireAt);
  // Filled in on the copy, no object of changes: one launch per fire.
  const next = movedCopy(run, "running");
  next.claimToken = null;
  next.claimExpiresAt = null;
  next.targetRunId = fields.targetRunId;
  next.launchedAt = launchedAt;
  next.deadlineAt = (launchedAt + options.runTimeoutMs) as Instant;
  next.latenessMs = latenessMs;
  next.late = latenessMs > options.lateAfterMs;
  next.error = fields.error;
  return {
    run: next,
    taskLaunch: { lastRunAt: launchedAt, lastRunId: run.id, runCountIncrement: 1 },
    cancelTarget: run.cancelRequestedAt !== null,
  };
}

/** A run that was asked to stop ends `cancelled`, keeping the reason it was asked, with `message`. */
export function cancelledAsAsked(
  run: Run,
  now: Instant,
  task: RunTaskContext,
  message: string,
): RunChange {
  return {
    run: moveRun(run, "cancelled", {
      ...finished(now),
      reason: run.reason ?? "cancel_requested",
      error: message,
    }),
    taskVerdict: verdictFor(run, task, "cancelled", message),
  };
}

/** A run asked to stop that certainly never started: it ends `cancelled` with the reason it was asked. */
export function cancelledBeforeStart(run: Run, now: Instant, task: RunTaskContext): RunChange {
  return cancelledAsAsked(run, now, task, "cancelled before it started");
}

/** The claim let go (the run is no longer launching under it). */
export function releasedClaim(): Partial<Run> {
  return { claimToken: null, claimExpiresAt: null };
}

/** What every run that ends writes (`finished`), written on a transition's own copy. */
export function finish(next: RunDraft, now: Instant): void {
  next.claimToken = null;
  next.claimExpiresAt = null;
  next.finishedAt = now;
  next.deadlineAt = null;
}

/** What every run that ends writes: no claim, no deadline, a finish time. */
export function finished(now: Instant): Partial<Run> {
  // Written out rather than spread from `releasedClaim()`: V8 builds a spread followed by new fields
  // through a slow path (about a microsecond each), and every run ends through here.
  return { claimToken: null, claimExpiresAt: null, finishedAt: now, deadlineAt: null };
}

/**
 * A certain failure of one attempt: counts against the retry budget. With attempts left the run is
 * queued again with backoff (or the delay `request` asks for), keeping its identity and idempotency key;
 * otherwise, or when `request` says never, it ends `failed`.
 */
export function failAttempt(
  run: Run,
  now: Instant,
  task: RunTaskContext,
  reason: Extract<RunReason, "launch_failed" | "target_failed" | "replica_lost" | "run_timeout">,
  message: string,
  request?: RetryRequest,
): RunChange {
  const failures = run.failures + 1;
  const retry = task.options.retry;
  if (request?.kind === "never") {
    return {
      run: moveRun(run, "failed", {
        ...finished(now),
        failures,
        reason: request.reason,
        error: message,
      }),
      taskVerdict: verdictFor(run, task, "failed", message),
    };
  }
  if (failures < retry.maxAttempts && run.cancelRequestedAt === null) {
    const backoff = request?.delayMs ?? retryBackoffMs(retry, failures, run.id);
    return {
      run: moveRun(run, "queued", {
        ...releasedClaim(),
        failures,
        notBefore: (now + backoff) as Instant,
        targetRunId: null,
        deadlineAt: null,
        reason: null,
        error: message,
      }),
    };
  }
  const to = reason === "run_timeout" ? "timed_out" : "failed";
  return {
    run: moveRun(run, to, { ...finished(now), failures, reason, error: message }),
    taskVerdict: verdictFor(run, task, to, message),
  };
}

/** The task's verdict fields after its run ended with `status` (docs/semantics.md#task-statuses). */
export function verdictFor(
  run: Run,
  task: RunTaskContext,
  status: "succeeded" | "failed" | "timed_out" | "cancelled",
  error: string | null,
): TaskVerdictPatch {
  const once = holdsOnceOccurrence(run, task);
  switch (status) {
    case "succeeded":
      return once ? { lastError: null, status: "completed" } : { lastError: null };
    case "failed":
    case "timed_out":
      return once ? { lastError: error, status: "failed" } : { lastError: error };
    case "cancelled":
      return once ? { lastError: error, status: "cancelled" } : { lastError: error };
  }
}
