/**
 * The operator's thresholds as the library and the CLI take them (seconds, docs/library.md), checked and
 * turned into the domain's `SchedulePolicy` (milliseconds).
 */
import { shareLimitsOwners } from "../domain/claim.js";
import type { OwnerShare } from "../domain/claim.js";
import type { QuotaOptions } from "./quotas.js";
import { DEFAULT_POLICY } from "../domain/options.js";
import type { SchedulePolicy } from "../domain/options.js";
import type { DurationMs } from "../domain/time.js";

/** Operator thresholds (docs/semantics.md#words, docs/semantics.md#the-life-of-an-occurrence). */
export interface PolicyOptions {
  /** Runs launching or running across all tasks and replicas at most. @default 16 */
  readonly maxConcurrentRuns?: number;
  /** A launch claim's lease: how long a live replica may take to record a launch. @default 60 */
  readonly leaseSeconds?: number;
  /** A once task must be at least this far in the future. @default 0 (1 in `createServer`) */
  readonly minOnceDelaySeconds?: number;
  /**
   * How long a replica may stay silent (no heartbeat) before it is lost: its launch claims are
   * reconciled and its handler runs fail `replica_lost` (docs/operations.md#replica-liveness-what-silent-means). @default 10
   */
  readonly livenessTimeoutSeconds?: number;
  /**
   * Launching or running runs one owner may hold at most (docs/semantics.md#fair-share), even when no
   * other owner is waiting. @default the whole budget (`maxConcurrentRuns`; `punctual serve`: half of it)
   */
  readonly maxActiveRunsPerOwner?: number;
  /** Owners with their own maximum, by owner name (over `maxActiveRunsPerOwner`). @default none */
  readonly maxActiveRunsByOwner?: Readonly<Record<string, number>>;
  /**
   * The longest `options.run_timeout` a task may be created or edited with (docs/operations.md#thresholds);
   * a stored task over it keeps working. @default 86,400 (24 hours)
   */
  readonly maxRunTimeoutSeconds?: number;
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
  const livenessSeconds = positive(
    options.livenessTimeoutSeconds,
    DEFAULT_POLICY.livenessMs / 1000,
    "livenessTimeoutSeconds",
  );
  if (livenessSeconds <= 0) throw new RangeError("livenessTimeoutSeconds must be positive");
  const ownerCap = (value: number, name: string): number => {
    if (!Number.isInteger(value) || value < 1)
      throw new RangeError(`${name} must be a positive integer`);
    return value;
  };
  const perOwner = ownerCap(
    options.maxActiveRunsPerOwner ?? maxConcurrentRuns,
    "maxActiveRunsPerOwner",
  );
  const overrides = new Map<string, number>();
  for (const [owner, cap] of Object.entries(options.maxActiveRunsByOwner ?? {})) {
    overrides.set(owner, ownerCap(cap, `maxActiveRunsByOwner.${owner}`));
  }
  const ownerShare: OwnerShare = { maxActiveRuns: perOwner, overrides };
  return {
    ...DEFAULT_POLICY,
    maxConcurrentRuns,
    leaseMs: (positive(options.leaseSeconds, DEFAULT_POLICY.leaseMs / 1000, "leaseSeconds") *
      1000) as DurationMs,
    livenessMs: (livenessSeconds * 1000) as DurationMs,
    minOnceDelayMs: (positive(options.minOnceDelaySeconds, 0, "minOnceDelaySeconds") *
      1000) as DurationMs,
    // No share at all when nobody is capped below the budget: the claim then counts nothing per owner.
    ...(shareLimitsOwners(ownerShare, maxConcurrentRuns) ? { ownerShare } : {}),
  };
}
