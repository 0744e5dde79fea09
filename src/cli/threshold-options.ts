/**
 * The operator's thresholds as `serve` and `worker` both take them, by flag or environment variable
 * (docs/operations.md#thresholds): one table here, so that the two commands cannot drift apart. Each
 * entry parses its text (a usage error names the flag) into the scheduler's options.
 */
import type { Command } from "commander";
import { parseDuration } from "../domain/schedule/iso-text.js";
import type { PolicyOptions } from "../application/policy/policy-options.js";
import type { OwnerQuotas, QuotaOptions } from "../application/policy/quotas.js";
import type { CoordinatorOptions } from "../runtime/coordinator-options.js";
import type { RateLimitOptions } from "../adapters/http/rate-limit.js";
import type { ProcessIo } from "./process-io.js";

/** The thresholds' flags as commander hands them over (camelCase of the flag). */
export interface ThresholdFlags {
  readonly maxConcurrentRuns?: string;
  readonly leaseSeconds?: string;
  readonly retention?: string;
  readonly tick?: string;
  readonly sweepPeriod?: string;
  readonly shutdownGrace?: string;
  readonly livenessTimeout?: string;
  readonly rateLimit?: string;
  readonly maxActiveRunsPerOwner?: string;
  readonly ownerMaxActiveRuns?: string;
  readonly maxRunTimeout?: string;
  readonly maxTasksPerOwner?: string;
  readonly minPeriod?: string;
  readonly runsPerMinute?: string;
  readonly backfillRunsPerHour?: string;
  readonly maxCalendarsPerOwner?: string;
  readonly maxCalendarItemsPerOwner?: string;
  readonly quotaOverrides?: string;
}

/** What the flags come to. */
export interface Thresholds {
  readonly policy: PolicyOptions;
  readonly coordinator: CoordinatorOptions;
  /** `serve` only: the per-token rate limit; false turns it off. */
  readonly rateLimit?: RateLimitOptions | false;
  /** How long a stop drains before the process exits regardless. */
  readonly shutdownGraceMs: number;
}

/** The shutdown grace when no flag or variable sets it. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

type Usage = (message: string) => Error;

/** A duration in ms: `500ms`, `5s`, `1h30m`, a whole number of seconds, or ISO-8601 (`PT0.5S`, `PT5M`). */
export function milliseconds(flag: string, text: string, minMs: number, usage: Usage): number {
  const parsed = parseDuration(text, minMs, { wholeSeconds: false });
  if (!parsed.ok) throw usage(`--${flag}: ${parsed.problem}`);
  return parsed.value;
}

function integer(flag: string, text: string, min: number, usage: Usage): number {
  if (!/^\d+$/.test(text) || Number(text) < min) {
    const what = min === 1 ? "a positive integer" : `an integer of at least ${min}`;
    throw usage(`--${flag} must be ${what}, not "${text}"`);
  }
  return Number(text);
}

/** `BURST/PER_SECOND` (`100/20`), `BURST` (20 per second), or `off`. */
function rateLimit(text: string, usage: Usage): RateLimitOptions | false {
  if (text === "off") return false;
  const match = /^(\d+)(?:\/(\d+(?:\.\d+)?))?$/.exec(text);
  if (match === null || Number(match[1]) < 1 || (match[2] !== undefined && Number(match[2]) <= 0)) {
    throw usage(
      `--rate-limit must be BURST/PER_SECOND (such as 100/20), BURST or off, not "${text}"`,
    );
  }
  return {
    burst: Number(match[1]),
    ...(match[2] === undefined ? {} : { perSecond: Number(match[2]) }),
  };
}

/** `alice=4,bob=1`: owners with their own maximum of active runs (the last `=` splits name and number). */
function ownerMaxima(text: string, usage: Usage): Record<string, number> {
  const maxima: Record<string, number> = {};
  for (const item of text.split(",")) {
    const at = item.lastIndexOf("=");
    const owner = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (at <= 0 || owner === "" || !/^\d+$/.test(value) || Number(value) < 1) {
      throw usage(
        `--owner-max-active-runs must be OWNER=N[,OWNER=N...] with N a positive integer, not "${text}"`,
      );
    }
    maxima[owner] = Number(value);
  }
  return maxima;
}

/**
 * The CLI's default share of one owner: half the global budget in force, at least 1, following it when
 * the fleet's budget changes (docs/semantics.md#fair-share).
 */
const DEFAULT_OWNER_SHARE = 0.5;

interface Setting {
  readonly flag: string;
  readonly key: keyof ThresholdFlags;
  readonly env: string;
  readonly value: string;
  readonly help: string;
  /** Commands that take it (both unless said). */
  readonly only?: "serve";
}

/** Every threshold: its flag, variable, argument and help (docs/operations.md#thresholds). */
export const THRESHOLD_SETTINGS: readonly Setting[] = [
  {
    flag: "max-concurrent-runs",
    key: "maxConcurrentRuns",
    env: "PUNCTUAL_MAX_CONCURRENT_RUNS",
    value: "<n>",
    help: "runs launching or running across all replicas at most (default 16), sets the budget stored for the whole fleet (left out: the stored one applies)",
  },
  {
    flag: "max-active-runs-per-owner",
    key: "maxActiveRunsPerOwner",
    env: "PUNCTUAL_MAX_ACTIVE_RUNS_PER_OWNER",
    value: "<n>",
    help: "runs one owner may have launching or running at most (default half the budget, at least 1)",
  },
  {
    flag: "owner-max-active-runs",
    key: "ownerMaxActiveRuns",
    env: "PUNCTUAL_OWNER_MAX_ACTIVE_RUNS",
    value: "<owner=n,...>",
    help: "owners with their own maximum of launching or running runs, such as alice=8,bob=2",
  },
  {
    flag: "max-run-timeout",
    key: "maxRunTimeout",
    env: "PUNCTUAL_MAX_RUN_TIMEOUT",
    value: "<duration>",
    help: "the longest options.run_timeout a task may be created or edited with (default PT24H)",
  },
  {
    flag: "lease-seconds",
    key: "leaseSeconds",
    env: "PUNCTUAL_LEASE_SECONDS",
    value: "<n>",
    help: "a launch claim's lease: how long a live replica may take to record a launch (default 60)",
  },
  {
    flag: "retention",
    key: "retention",
    env: "PUNCTUAL_RETENTION",
    value: "<duration>",
    help: "delete finished runs older than this (default P30D)",
  },
  {
    flag: "tick",
    key: "tick",
    env: "PUNCTUAL_TICK",
    value: "<duration>",
    help: "the longest sleep between coordinator passes, such as 500ms or PT1S (default 1 s)",
  },
  {
    flag: "sweep-period",
    key: "sweepPeriod",
    env: "PUNCTUAL_SWEEP_PERIOD",
    value: "<duration>",
    help: "how often expired claims, timeouts and retention are swept (default 5 s)",
  },
  {
    flag: "shutdown-grace",
    key: "shutdownGrace",
    env: "PUNCTUAL_SHUTDOWN_GRACE",
    value: "<duration>",
    help: "how long a stop drains launches and handlers before the process exits (default 10 s)",
  },
  {
    flag: "liveness-timeout",
    key: "livenessTimeout",
    env: "PUNCTUAL_LIVENESS_TIMEOUT",
    value: "<duration>",
    help: "a replica silent (no heartbeat) this long is lost: its claims and handler runs are taken over (default 10 s)",
  },
  {
    flag: "rate-limit",
    key: "rateLimit",
    env: "PUNCTUAL_RATE_LIMIT",
    value: "<burst/per-second>",
    help: "requests per API token: a burst and a refill per second, or off (default 100/20)",
    only: "serve",
  },
  {
    flag: "max-tasks-per-owner",
    key: "maxTasksPerOwner",
    env: "PUNCTUAL_MAX_TASKS_PER_OWNER",
    value: "<n>",
    help: "tasks an owner may have (default 10000)",
  },
  {
    flag: "min-period",
    key: "minPeriod",
    env: "PUNCTUAL_MIN_PERIOD",
    value: "<duration>",
    help: "the least interval, or least gap between cron fires, a task may have (default 1 s)",
  },
  {
    flag: "runs-per-minute",
    key: "runsPerMinute",
    env: "PUNCTUAL_RUNS_PER_MINUTE",
    value: "<n>",
    help: "runs an owner's tasks are admitted per minute per replica; more are skipped, reason quota (default 6000)",
  },
  {
    flag: "backfill-runs-per-hour",
    key: "backfillRunsPerHour",
    env: "PUNCTUAL_BACKFILL_RUNS_PER_HOUR",
    value: "<n>",
    help: "backfilled runs an owner may make per hour (default 10000)",
  },
  {
    flag: "max-calendars-per-owner",
    key: "maxCalendarsPerOwner",
    env: "PUNCTUAL_MAX_CALENDARS_PER_OWNER",
    value: "<n>",
    help: "named calendars an owner may have (default 100)",
  },
  {
    flag: "max-calendar-items-per-owner",
    key: "maxCalendarItemsPerOwner",
    env: "PUNCTUAL_MAX_CALENDAR_ITEMS_PER_OWNER",
    value: "<n>",
    help: "items an owner's calendars may hold together (default 10000)",
  },
  {
    flag: "quota-overrides",
    key: "quotaOverrides",
    env: "PUNCTUAL_QUOTA_OVERRIDES",
    value: "<owner:limit=value,...>",
    help: "per-owner quotas, such as alice:runs_per_minute=20000,ci:tasks_per_owner=50000",
  },
];

const QUOTA_KEYS: Readonly<Record<string, keyof OwnerQuotas>> = {
  tasks_per_owner: "tasksPerOwner",
  min_period: "minPeriodMs",
  runs_per_minute: "runsPerMinute",
  backfill_runs_per_hour: "backfillRunsPerHour",
  calendars_per_owner: "calendarsPerOwner",
  calendar_items_per_owner: "calendarItemsPerOwner",
};

/** `owner:limit=value,...`: `min_period` takes a duration, the others a count. */
function quotaOverrides(text: string, usage: Usage): Record<string, Partial<OwnerQuotas>> {
  const overrides: Record<string, Record<string, number>> = {};
  for (const item of text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")) {
    const match = /^([^:=]+):([a-z_]+)=(\S+)$/.exec(item);
    const key = match === null ? undefined : QUOTA_KEYS[match[2] ?? ""];
    if (match === null || key === undefined) {
      throw usage(
        `--quota-overrides takes owner:limit=value items (limits: ${Object.keys(QUOTA_KEYS).join(", ")}), not "${item}"`,
      );
    }
    const [, owner = "", name = "", value = ""] = match;
    const flag = `quota-overrides ${owner}:${name}`;
    (overrides[owner] ??= {})[key] =
      key === "minPeriodMs" ? milliseconds(flag, value, 0, usage) : integer(flag, value, 0, usage);
  }
  return overrides;
}

/** Adds the thresholds' options to `command` (`serve` or `worker`). */
export function withThresholdOptions(command: Command, name: "serve" | "worker"): Command {
  for (const setting of THRESHOLD_SETTINGS) {
    if (setting.only !== undefined && setting.only !== name) continue;
    command.option(
      `--${setting.flag} ${setting.value}`,
      `${setting.help}; default from $${setting.env}`,
    );
  }
  return command;
}

/** The thresholds from `flags`, else the environment; a bad value is a usage error. */
export function thresholdsOf(
  flags: ThresholdFlags,
  env: ProcessIo["env"],
  usage: Usage,
): Thresholds {
  const text = (key: keyof ThresholdFlags): string | undefined => {
    const setting = THRESHOLD_SETTINGS.find((s) => s.key === key);
    const value = flags[key] ?? (setting === undefined ? undefined : env[setting.env]);
    return value === undefined || value === "" ? undefined : value;
  };
  const budget = text("maxConcurrentRuns");
  const lease = text("leaseSeconds");
  const retention = text("retention");
  const tick = text("tick");
  const sweep = text("sweepPeriod");
  const grace = text("shutdownGrace");
  const liveness = text("livenessTimeout");
  const limit = text("rateLimit");
  const perOwner = text("maxActiveRunsPerOwner");
  const owners = text("ownerMaxActiveRuns");
  const runTimeout = text("maxRunTimeout");
  const tasksPerOwner = text("maxTasksPerOwner");
  const minPeriod = text("minPeriod");
  const runsPerMinute = text("runsPerMinute");
  const backfillPerHour = text("backfillRunsPerHour");
  const calendars = text("maxCalendarsPerOwner");
  const calendarItems = text("maxCalendarItemsPerOwner");
  const overrides = text("quotaOverrides");
  const quotas: QuotaOptions = {
    ...(tasksPerOwner === undefined
      ? {}
      : { tasksPerOwner: integer("max-tasks-per-owner", tasksPerOwner, 0, usage) }),
    ...(minPeriod === undefined
      ? {}
      : { minPeriodMs: milliseconds("min-period", minPeriod, 0, usage) }),
    ...(runsPerMinute === undefined
      ? {}
      : { runsPerMinute: integer("runs-per-minute", runsPerMinute, 0, usage) }),
    ...(backfillPerHour === undefined
      ? {}
      : { backfillRunsPerHour: integer("backfill-runs-per-hour", backfillPerHour, 0, usage) }),
    ...(calendars === undefined
      ? {}
      : { calendarsPerOwner: integer("max-calendars-per-owner", calendars, 0, usage) }),
    ...(calendarItems === undefined
      ? {}
      : {
          calendarItemsPerOwner: integer("max-calendar-items-per-owner", calendarItems, 0, usage),
        }),
    ...(overrides === undefined ? {} : { overrides: quotaOverrides(overrides, usage) }),
  };
  const shutdownGraceMs =
    grace === undefined
      ? DEFAULT_SHUTDOWN_GRACE_MS
      : milliseconds("shutdown-grace", grace, 0, usage);
  const livenessTimeoutMs =
    liveness === undefined ? undefined : milliseconds("liveness-timeout", liveness, 1000, usage);
  return {
    policy: {
      ...(budget === undefined
        ? {}
        : { maxConcurrentRuns: integer("max-concurrent-runs", budget, 1, usage) }),
      ...(lease === undefined ? {} : { leaseSeconds: integer("lease-seconds", lease, 2, usage) }),
      ...(livenessTimeoutMs === undefined
        ? {}
        : { livenessTimeoutSeconds: livenessTimeoutMs / 1000 }),
      // Unless given, half the budget in force: the fleet's stored budget, which may differ from the flag.
      maxActiveRunsPerOwner:
        perOwner === undefined
          ? { fractionOfBudget: DEFAULT_OWNER_SHARE }
          : integer("max-active-runs-per-owner", perOwner, 1, usage),
      ...(owners === undefined ? {} : { maxActiveRunsByOwner: ownerMaxima(owners, usage) }),
      ...(runTimeout === undefined
        ? {}
        : {
            maxRunTimeoutSeconds: milliseconds("max-run-timeout", runTimeout, 1000, usage) / 1000,
          }),
      // serve and worker always apply quotas: the defaults under what was given (docs/operations.md#quotas).
      quotas,
    },
    coordinator: {
      ...(retention === undefined
        ? {}
        : { retentionMs: milliseconds("retention", retention, 1000, usage) }),
      ...(tick === undefined ? {} : { tickMs: milliseconds("tick", tick, 10, usage) }),
      ...(sweep === undefined ? {} : { sweepMs: milliseconds("sweep-period", sweep, 100, usage) }),
      shutdownTimeoutMs: shutdownGraceMs,
    },
    ...(limit === undefined ? {} : { rateLimit: rateLimit(limit, usage) }),
    shutdownGraceMs,
  };
}

/**
 * How long the command waits for its stop before it exits regardless: the grace, the coordinator's
 * hand-back of handlers still running at its end, and a moment to close the store.
 */
export function stopDeadlineMs(thresholds: Thresholds): number {
  return thresholds.shutdownGraceMs + 2000 + 3000;
}
