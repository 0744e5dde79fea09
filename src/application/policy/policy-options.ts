/**
 * The operator's thresholds as the library and the CLI take them (seconds, docs/library.md), checked and
 * turned into the domain's `SchedulePolicy` (milliseconds).
 */
import { shareForBudget } from "../../domain/claim.js";
import type { OwnerShare } from "../../domain/claim.js";
import type { QuotaOptions } from "./quotas.js";
import type { FieldError } from "../../domain/errors.js";
import { optionKeys, refuseUnknownOptions, unknownOptions } from "./known-options.js";
import { DEFAULT_POLICY } from "../../domain/options.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { DurationMs } from "../../domain/time.js";

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
   * other owner is waiting: a number, or `{ fractionOfBudget }` (in (0, 1]) for that part of the budget
   * in force, at least 1, which follows the budget when it changes.
   * @default the whole budget in force (`punctual serve` and `worker`: half of it)
   */
  readonly maxActiveRunsPerOwner?: number | { readonly fractionOfBudget: number };
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

/** Every key `policy` takes. */
export const POLICY_KEYS = optionKeys<PolicyOptions>()([
  "maxConcurrentRuns",
  "leaseSeconds",
  "minOnceDelaySeconds",
  "livenessTimeoutSeconds",
  "maxActiveRunsPerOwner",
  "maxActiveRunsByOwner",
  "maxRunTimeoutSeconds",
  "quotas",
]);

const QUOTA_KEYS = optionKeys<QuotaOptions>()([
  "tasksPerOwner",
  "minPeriodMs",
  "runsPerMinute",
  "backfillRunsPerHour",
  "calendarsPerOwner",
  "calendarItemsPerOwner",
  "overrides",
]);

/**
 * The policy for `options`.
 * @throws validation_failed when a key is unknown (`policy.max_concurrent_runs`: did you mean
 * maxConcurrentRuns?), RangeError when a threshold is out of range
 */
export function buildPolicy(options: PolicyOptions = {}): SchedulePolicy {
  refuseUnknownOptions(unknownPolicyOptions(options));
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
  const overrides = new Map<string, number>();
  for (const [owner, cap] of Object.entries(options.maxActiveRunsByOwner ?? {})) {
    overrides.set(owner, ownerCap(cap, `maxActiveRunsByOwner.${owner}`));
  }
  const perOwner = options.maxActiveRunsPerOwner;
  const ownerShare =
    perOwner === undefined && overrides.size === 0
      ? null
      : ownerShareOf(perOwner, overrides, maxConcurrentRuns);
  return {
    ...DEFAULT_POLICY,
    maxConcurrentRuns,
    leaseMs: (positive(options.leaseSeconds, DEFAULT_POLICY.leaseMs / 1000, "leaseSeconds") *
      1000) as DurationMs,
    livenessMs: (livenessSeconds * 1000) as DurationMs,
    minOnceDelayMs: (positive(options.minOnceDelaySeconds, 0, "minOnceDelaySeconds") *
      1000) as DurationMs,
    // No share when none was asked for: every owner may take the whole budget in force.
    ...(ownerShare === null ? {} : { ownerShare }),
  };
}

/** `policy` under the global budget in force (`budget`): a share given as a fraction follows it. */
export function withBudget(policy: SchedulePolicy, budget: number): SchedulePolicy {
  const share = policy.ownerShare;
  return {
    ...policy,
    maxConcurrentRuns: budget,
    ...(share === undefined ? {} : { ownerShare: shareForBudget(share, budget) }),
  };
}

/**
 * The owners' share as given: a number stays that number; otherwise it is a part of the budget in force
 * (the whole of it when only overrides were given), so it follows the budget the fleet stores
 * (docs/operations.md#sizing-the-budget).
 */
function ownerShareOf(
  perOwner: PolicyOptions["maxActiveRunsPerOwner"],
  overrides: ReadonlyMap<string, number>,
  budget: number,
): OwnerShare {
  if (typeof perOwner === "number") {
    return { maxActiveRuns: ownerCap(perOwner, "maxActiveRunsPerOwner"), overrides };
  }
  const fractionOfBudget =
    perOwner === undefined
      ? 1
      : shareFraction((perOwner as { fractionOfBudget?: unknown } | null)?.fractionOfBudget);
  return shareForBudget({ maxActiveRuns: budget, overrides, fractionOfBudget }, budget);
}

function ownerCap(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** A share given as a part of the budget; anything else given (a string, null) is refused. */
function shareFraction(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new RangeError(
      "maxActiveRunsPerOwner must be a positive integer or { fractionOfBudget } in (0, 1]",
    );
  }
  return value;
}

/** The unknown keys of a policy, its quotas and their overrides, as field errors. */
export function unknownPolicyOptions(options: PolicyOptions): FieldError[] {
  const quotas: unknown = options.quotas;
  const overrides = (quotas as { overrides?: unknown } | undefined)?.overrides;
  return [
    ...unknownOptions(options, POLICY_KEYS, "policy"),
    ...unknownOptions(quotas, QUOTA_KEYS, "policy.quotas"),
    ...Object.entries(typeof overrides === "object" && overrides !== null ? overrides : {}).flatMap(
      ([owner, quota]) =>
        unknownOptions(
          quota,
          QUOTA_KEYS.filter((k) => k !== "overrides"),
          `policy.quotas.overrides.${owner}`,
        ),
    ),
  ];
}
