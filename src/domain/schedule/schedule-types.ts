/**
 * The types of `ScheduleSpec`: the validated, normalised form of a schedule (docs/schedules.md), as plain readonly
 * data. Built only by `parseSchedule`.
 */
import type { DurationMs, Instant } from "../time.js";
import type { CronExpression } from "./cron-expression.js";
import type { Exclusion } from "./exclusions.js";
import type { RecurrenceRule } from "./rrule-rule.js";

/** The schedule types, as a runtime list (docs/semantics.md#words). */
export const SCHEDULE_TYPES = ["cron", "once", "interval", "rrule"] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

/**
 * What becomes of an occurrence on an excluded date (docs/schedules.md#moved-occurrences): `skip` records it
 * `skipped` (reason `excluded`); `previous` and `next` move it to the nearest date before or after that is
 * not excluded, at the same wall time, when that lies between its neighbouring occurrences.
 */
export const ON_EXCLUDED = ["skip", "previous", "next"] as const;
export type OnExcluded = (typeof ON_EXCLUDED)[number];

/** Bounds and jitter shared by every schedule type (docs/schedules.md#bounds-and-jitter). */
export interface ScheduleBounds {
  /** No occurrence before this instant. */
  readonly startAt: Instant | null;
  /** No occurrence after this instant. */
  readonly endAt: Instant | null;
  /** The task stops admitting after this many scheduled occurrences (enforced by the task layer). */
  readonly maxRuns: number | null;
  /** Upper bound of the deterministic delay added to each occurrence (applied by the task layer). */
  readonly jitterMs: DurationMs;
}

/** Cron expressions evaluated on the wall clock of an IANA zone (docs/schedules.md#cron). */
export interface CronSchedule extends ScheduleBounds {
  readonly type: "cron";
  /** The expressions in the order written (at least one); the fires are their union. */
  readonly rules: readonly CronExpression[];
  readonly timezone: string;
  /** Local dates on which nominal times do not fire (recorded `skipped`, reason `excluded`). */
  readonly exclude: readonly Exclusion[];
  /** Absent for `skip`. */
  readonly onExcluded?: Exclude<OnExcluded, "skip">;
}

/** One occurrence at `runAt` (docs/schedules.md#once). `startAt`, `endAt` and `maxRuns` are always `null`. */
export interface OnceSchedule extends ScheduleBounds {
  readonly type: "once";
  readonly runAt: Instant;
  /** The local wall time as written (`YYYY-MM-DDTHH:MM:SS`), when `run_at` had no offset. */
  readonly localRunAt: string | null;
  readonly timezone: string;
}

/** Occurrences every `everyMs` of elapsed time after `anchorAt` (docs/schedules.md#interval). */
export interface IntervalSchedule extends ScheduleBounds {
  readonly type: "interval";
  readonly everyMs: DurationMs;
  /** `startAt` when given (and then it fires too), else the creation instant (which does not fire). */
  readonly anchorAt: Instant;
  /** The zone `exclude` is read in, when given (UTC otherwise); the fires count elapsed time. */
  readonly timezone: string | null;
  /** Local dates on which nominal times do not fire (recorded `skipped`, reason `excluded`). */
  readonly exclude: readonly Exclusion[];
  /** Absent for `skip`. */
  readonly onExcluded?: Exclude<OnExcluded, "skip">;
}

/**
 * An RFC 5545 recurrence (DTSTART, RRULE, RDATE, EXDATE) expanded on the wall clock of DTSTART's zone
 * (docs/schedules.md#rrule).
 */
export interface RRuleSchedule extends ScheduleBounds {
  readonly type: "rrule";
  /** The recurrence text as written (line ends normalised to `\n`). */
  readonly text: string;
  /** DTSTART's TZID, or UTC for a DTSTART ending in Z. */
  readonly timezone: string;
  /** DTSTART as a wall time of `timezone`. */
  readonly dtstartWall: number;
  /** The RRULE lines in the order written (at least one); the instances are their union. */
  readonly rules: readonly RecurrenceRule[];
  /** RDATE instants, sorted, without duplicates. */
  readonly rdates: readonly Instant[];
  /** EXDATE instants, sorted, without duplicates: no instance at these instants. */
  readonly exdates: readonly Instant[];
  /** Local dates on which instances do not fire (recorded `skipped`, reason `excluded`). */
  readonly exclude: readonly Exclusion[];
  /** Absent for `skip`. */
  readonly onExcluded?: Exclude<OnExcluded, "skip">;
}

/** A validated schedule; make one with `parseSchedule`. */
export type ScheduleSpec = CronSchedule | OnceSchedule | IntervalSchedule | RRuleSchedule;
