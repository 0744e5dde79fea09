/**
 * Per-task options and the operator's policy (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch, docs/semantics.md#completion), with their documented defaults. Closed
 * value sets are `as const` lists that also feed validation, SQL CHECKs and the docs.
 */
import type { OwnerShare } from "./claim.js";
import type { DurationMs } from "./time.js";

/** What happens when an occurrence comes due while the task already has an active run (docs/semantics.md#the-life-of-an-occurrence). */
export const OVERLAP_POLICIES = [
  "skip",
  "buffer_one",
  "buffer_all",
  "cancel_other",
  "allow_all",
] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** What admission does with overdue occurrences (docs/semantics.md#the-life-of-an-occurrence). */
export const CATCH_UP_POLICIES = ["latest", "all", "none"] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

/** At most this many runs queued per task under `buffer_all` (docs/semantics.md#the-life-of-an-occurrence). */
export const BUFFER_ALL_LIMIT = 1000;
/** At most this many overdue occurrences queued per admission under catch-up `all` (docs/semantics.md#the-life-of-an-occurrence). */
export const CATCH_UP_ALL_LIMIT = 100;

export interface RetryOptions {
  /** Attempts allowed before a run ends `failed` (1 = no retry). @default 1 */
  readonly maxAttempts: number;
  /** Backoff before the first retry; doubles each time. @default 10 s */
  readonly initialMs: DurationMs;
  /** Upper bound of one backoff. @default 10 min */
  readonly maxDelayMs: DurationMs;
}

export interface CatchUpOptions {
  /** Overdue occurrences whose `fire_at` is older than `now - window` are missed. @default 1 h */
  readonly windowMs: DurationMs;
  /** @default "latest" */
  readonly policy: CatchUpPolicy;
}

/** Per-task choices; every field has a default (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch, docs/semantics.md#completion). */
export interface TaskOptions {
  /** @default "skip" */
  readonly overlap: OverlapPolicy;
  readonly catchUp: CatchUpOptions;
  /** A run launched more than this after `fire_at` is late; beyond it an occurrence is overdue. @default 60 s */
  readonly lateAfterMs: DurationMs;
  readonly retry: RetryOptions;
  /** Counted from `launched_at`; then the run ends `timed_out`. @default 1 h */
  readonly runTimeoutMs: DurationMs;
  /** A queued run older than this ends `skipped`, reason `queue_timeout`. @default 24 h */
  readonly queueTimeoutMs: DurationMs;
}

export const DEFAULT_TASK_OPTIONS: TaskOptions = Object.freeze({
  overlap: "skip",
  catchUp: Object.freeze({ windowMs: 3_600_000 as DurationMs, policy: "latest" }),
  lateAfterMs: 60_000 as DurationMs,
  retry: Object.freeze({
    maxAttempts: 1,
    initialMs: 10_000 as DurationMs,
    maxDelayMs: 600_000 as DurationMs,
  }),
  runTimeoutMs: 3_600_000 as DurationMs,
  queueTimeoutMs: 86_400_000 as DurationMs,
});

/** The operator's thresholds (docs/semantics.md#words): one value per deployment, not per task. */
export interface SchedulePolicy {
  /** At most this many runs launching or running across all tasks and replicas. @default 16 */
  readonly maxConcurrentRuns: number;
  /** A launch claim's lease: how long a live replica may take to record a launch. @default 60 s */
  readonly leaseMs: DurationMs;
  /**
   * The silence (no heartbeat) after which a replica is lost: its launch claims are reconciled and its
   * handler runs end `failed`, `replica_lost` (docs/operations.md#replica-liveness-what-silent-means). @default 10 s
   */
  readonly livenessMs: DurationMs;
  /** A once task must be at least this far in the future at create or edit. @default 0 (server: 1 s) */
  readonly minOnceDelayMs: DurationMs;
  /** Back-off before a busy thread is tried again. @default 5 s */
  readonly busyBackoffMs: DurationMs;
  /** Options a task gets for every field it leaves out. */
  readonly defaultOptions: TaskOptions;
  /**
   * Each owner's share of the budget (`max_active_runs_per_owner`, docs/semantics.md#fair-share).
   * @default none: every owner may hold the whole budget
   */
  readonly ownerShare?: OwnerShare;
}

export const DEFAULT_POLICY: SchedulePolicy = Object.freeze({
  maxConcurrentRuns: 16,
  leaseMs: 60_000 as DurationMs,
  livenessMs: 10_000 as DurationMs,
  minOnceDelayMs: 0 as DurationMs,
  busyBackoffMs: 5_000 as DurationMs,
  defaultOptions: DEFAULT_TASK_OPTIONS,
});

/** Whether runs admitted under `overlap` occupy the task's single launching/running slot. */
export function isExclusive(overlap: OverlapPolicy): boolean {
  return overlap !== "allow_all";
}
