/**
 * The operator's thresholds as the library and the CLI take them (seconds, docs/library.md), checked and
 * turned into the domain's `SchedulePolicy` (milliseconds).
 */
import type { QuotaOptions } from "./quotas.js";
import { DEFAULT_POLICY } from "../domain/options.js";
import type { SchedulePolicy } from "../domain/options.js";
import type { DurationMs } from "../domain/time.js";

/** Operator thresholds (docs/semantics.md#words, docs/semantics.md#the-life-of-an-occurrence). */
export interface PolicyOptions {
  /** Runs launching or running across all tasks and replicas at most. @default 16 */
  readonly maxConcurrentRuns?: number;
  /** A launch claim's lease, and the silence after which a replica is lost. @default 60 */
  readonly leaseSeconds?: number;
  /** A once task must be at least this far in the future. @default 0 (1 in `createServer`) */
  readonly minOnceDelaySeconds?: number;
  /**
   * How long a replica may stay silent before it is lost (docs/operations.md#thresholds). Checked here;
   * the replica liveness that applies it is not in this build yet, so the lease still decides.
   */
  readonly livenessTimeoutSeconds?: number;
  /**
   * Per-owner quotas and their overrides by owner (docs/operations.md#quotas); any value left out is
   * the default (10,000 tasks, 1 s least period, 6,000 runs per minute, 10,000 backfilled runs per hour).
   * @default no quota in the library (one owner is the rule); `serve` and `worker` pass `{}`: the defaults
   */
  readonly quotas?: QuotaOptions;
}

/** The policy for `options`. @throws RangeError when a threshold is out of range */
export function buildPolicy(options: PolicyOptions = {}): SchedulePolicy {
  const positive = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative number`);
    return value;
  };
  const maxConcurrentRuns = positive(
    options.maxConcurrentRuns,
    DEFAULT_POLICY.maxConcurrentRuns,
    "maxConcurrentRuns",
  );
  if (!Number.isInteger(maxConcurrentRuns) || maxConcurrentRuns < 1) {
    throw new RangeError("maxConcurrentRuns must be a positive integer");
  }
  positive(options.livenessTimeoutSeconds, 0, "livenessTimeoutSeconds");
  return {
    ...DEFAULT_POLICY,
    maxConcurrentRuns,
    leaseMs: (positive(options.leaseSeconds, DEFAULT_POLICY.leaseMs / 1000, "leaseSeconds") *
      1000) as DurationMs,
    minOnceDelayMs: (positive(options.minOnceDelaySeconds, 0, "minOnceDelaySeconds") *
      1000) as DurationMs,
  };
}
