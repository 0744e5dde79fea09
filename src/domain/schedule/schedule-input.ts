/**
 * The public (snake_case) shape of a schedule, as the HTTP API and the library take it, and
 * `scheduleToInput`, which writes a `ScheduleSpec` back in that shape (normalised; round-trips).
 */
import { assertNever } from "../errors.js";
import { formatInstant } from "./civil-time.js";
import type { Exclusion, ExclusionInput } from "./exclusions.js";
import { exclusionInput } from "./exclusions.js";
import { formatDuration } from "./iso-text.js";
import type { OnExcluded, ScheduleSpec } from "./schedule-types.js";

/** A duration: ISO-8601 of fixed length (`PT5M`, `P1D`, `P1W`) or a number of seconds. */
export type DurationInput = string | number;

/**
 * Bounds and jitter (docs/schedules.md#bounds-and-jitter); instants are ISO-8601 with an offset or `Z`. A field that is `null` or
 * `undefined` is absent.
 */
export interface BoundsInput {
  readonly start_at?: string | null | undefined;
  readonly end_at?: string | null | undefined;
  /** At least 1; counts scheduled occurrences admitted as runs. */
  readonly max_runs?: number | null | undefined;
  /** Each occurrence is delayed by a deterministic amount in `[0, jitter]`. */
  readonly jitter?: DurationInput | null | undefined;
}

/**
 * `{ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }` (docs/schedules.md#cron), or
 * several expressions in one zone: `cron: ["0 9 * * 1-5", "0 10 * * 6"]` (their fires are the union).
 */
export interface CronScheduleInput extends BoundsInput {
  readonly type: "cron";
  readonly cron: string | string[];
  /** IANA zone name. @default "UTC" */
  readonly timezone?: string | null | undefined;
  /** Local dates on which nothing fires: dates, ranges, day rules, named calendars. */
  readonly exclude?: ExclusionInput[] | null | undefined; /**
   * What becomes of an occurrence on an excluded date (docs/schedules.md#moved-occurrences): skipped, or
   * moved to the nearest date before (`previous`) or after (`next`) that is not excluded, same wall time.
   * @default "skip"
   */
  readonly on_excluded?: OnExcluded | null | undefined;
}

/** `{ type: "once", run_at: "2026-12-01T09:00:00", timezone: "Europe/Berlin" }` (docs/schedules.md#once). */
export interface OnceScheduleInput {
  readonly type: "once";
  /** An instant with offset, or a local wall time resolved in `timezone`. */
  readonly run_at: string;
  /** IANA zone name, used for a `run_at` without offset. @default "UTC" */
  readonly timezone?: string | null | undefined;
  readonly jitter?: DurationInput | null | undefined;
}

/** `{ type: "interval", every: "PT5M" }` (docs/schedules.md#interval). */
export interface IntervalScheduleInput extends BoundsInput {
  readonly type: "interval";
  readonly every: DurationInput;
  /** The zone `exclude` is read in. @default "UTC" */
  readonly timezone?: string | null | undefined;
  /** Local dates on which nothing fires: dates, ranges, day rules, named calendars. */
  readonly exclude?: ExclusionInput[] | null | undefined; /**
   * What becomes of an occurrence on an excluded date (docs/schedules.md#moved-occurrences): skipped, or
   * moved to the nearest date before (`previous`) or after (`next`) that is not excluded, same wall time.
   * @default "skip"
   */
  readonly on_excluded?: OnExcluded | null | undefined;
}

/**
 * `{ type: "rrule", rrule: "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO" }`
 * (docs/schedules.md#rrule): RFC 5545 recurrence text, evaluated in DTSTART's zone.
 */
export interface RRuleScheduleInput extends BoundsInput {
  readonly type: "rrule";
  /** A DTSTART line (with TZID, or UTC ending in Z), one or more RRULE lines, optional RDATE and EXDATE lines. */
  readonly rrule: string;
  /** Local dates (in DTSTART's zone) on which nothing fires: dates, ranges, day rules, named calendars. */
  readonly exclude?: ExclusionInput[] | null | undefined; /**
   * What becomes of an occurrence on an excluded date (docs/schedules.md#moved-occurrences): skipped, or
   * moved to the nearest date before (`previous`) or after (`next`) that is not excluded, same wall time.
   * @default "skip"
   */
  readonly on_excluded?: OnExcluded | null | undefined;
}

/** A schedule as users write it. */
export type ScheduleInput =
  CronScheduleInput | OnceScheduleInput | IntervalScheduleInput | RRuleScheduleInput;

function boundsOf(spec: ScheduleSpec): {
  start_at?: string;
  end_at?: string;
  max_runs?: number;
  jitter?: string;
} {
  return {
    ...(spec.startAt === null ? {} : { start_at: formatInstant(spec.startAt) }),
    ...(spec.endAt === null ? {} : { end_at: formatInstant(spec.endAt) }),
    ...(spec.maxRuns === null ? {} : { max_runs: spec.maxRuns }),
    ...(spec.jitterMs === 0 ? {} : { jitter: formatDuration(spec.jitterMs) }),
  };
}

function excludeOf(
  exclude: readonly Exclusion[],
  onExcluded: Exclude<OnExcluded, "skip"> | undefined,
): { exclude?: ExclusionInput[]; on_excluded?: Exclude<OnExcluded, "skip"> } {
  return {
    ...(exclude.length === 0 ? {} : { exclude: exclude.map(exclusionInput) }),
    ...(onExcluded === undefined ? {} : { on_excluded: onExcluded }),
  };
}

/**
 * The normalised public shape of a schedule: whitespace-normalised cron, explicit zone, UTC instants,
 * ISO durations (its type says so: a `ScheduleInput` whose zone is always there). An interval without
 * `start_at` loses its implicit anchor here: pass the same `anchorAt` to `parseSchedule` to get the
 * identical spec back.
 */
export function scheduleToInput(spec: ScheduleSpec) {
  switch (spec.type) {
    case "cron":
      return {
        type: "cron",
        // One rule: `rules[0]` is there, and its `?? ""` (noUncheckedIndexedAccess) is never taken.
        /* v8 ignore next */
        cron: spec.rules.length === 1 ? (spec.rules[0]?.text ?? "") : spec.rules.map((r) => r.text),
        timezone: spec.timezone,
        ...boundsOf(spec),
        ...excludeOf(spec.exclude, spec.onExcluded),
      } satisfies CronScheduleInput;
    case "once":
      return {
        type: "once",
        run_at: spec.localRunAt ?? formatInstant(spec.runAt),
        timezone: spec.timezone,
        ...(spec.jitterMs === 0 ? {} : { jitter: formatDuration(spec.jitterMs) }),
      } satisfies OnceScheduleInput;
    case "interval":
      return {
        type: "interval",
        every: formatDuration(spec.everyMs),
        ...boundsOf(spec),
        ...(spec.timezone === null ? {} : { timezone: spec.timezone }),
        ...excludeOf(spec.exclude, spec.onExcluded),
      } satisfies IntervalScheduleInput;
    case "rrule":
      return {
        type: "rrule",
        rrule: spec.text,
        ...boundsOf(spec),
        ...excludeOf(spec.exclude, spec.onExcluded),
      } satisfies RRuleScheduleInput;
    // Unreachable by type (the switch is exhaustive): not measured.
    /* v8 ignore next 2 */
    default:
      return assertNever(spec);
  }
}
