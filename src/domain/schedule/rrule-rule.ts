/**
 * One RFC 5545 recurrence rule (section 3.3.10) as the engine reads it: its parts checked, and the parts
 * the RFC fills in from DTSTART filled in (docs/schedules.md#rrule). Built by `parseRecurrenceRule`.
 */

/** FREQ values from the coarsest to the finest; a rule's `freq` is an index into this list. */
export const RRULE_FREQUENCIES = [
  "YEARLY",
  "MONTHLY",
  "WEEKLY",
  "DAILY",
  "HOURLY",
  "MINUTELY",
  "SECONDLY",
] as const;
export type RRuleFrequency = (typeof RRULE_FREQUENCIES)[number];

export const YEARLY = 0;
export const MONTHLY = 1;
export const WEEKLY = 2;
export const DAILY = 3;
export const HOURLY = 4;
export const MINUTELY = 5;
export const SECONDLY = 6;

/** Weekday codes in the civil-time order (0 = Sunday). */
export const WEEKDAY_CODES = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"] as const;

/** `BYDAY=-1FR`: the last Friday of the month (or year); `n` 0 means every such weekday. */
export interface NthWeekday {
  readonly weekday: number;
  readonly n: number;
}

/** A checked rule, with the parts RFC 5545 takes from DTSTART already in place. */
export interface RecurrenceRule {
  /** The rule line as written (without `RRULE:`). */
  readonly text: string;
  /** Index into `RRULE_FREQUENCIES`. */
  readonly freq: number;
  readonly interval: number;
  readonly count: number | null;
  /** UNTIL as an instant (epoch ms). */
  readonly untilAt: number | null;
  readonly byMonth: readonly number[] | null;
  readonly byWeekNo: readonly number[] | null;
  readonly byYearDay: readonly number[] | null;
  readonly byMonthDay: readonly number[] | null;
  /** Plain weekdays of BYDAY (every such day of the period). */
  readonly byWeekday: readonly number[] | null;
  /** Ordinal weekdays of BYDAY (MONTHLY and YEARLY only). */
  readonly byNthWeekday: readonly NthWeekday[] | null;
  /** Hours of the day (a limit for HOURLY and finer, an expansion above); null: every hour. */
  readonly byHour: readonly number[] | null;
  readonly byMinute: readonly number[] | null;
  readonly bySecond: readonly number[] | null;
  readonly bySetPos: readonly number[] | null;
  /** The week start (0 = Sunday). @default Monday */
  readonly wkst: number;
  /**
   * The wall time of the last instance COUNT allows, resolved once at validation so that a search never
   * counts from DTSTART again; null when the rule has no COUNT.
   */
  readonly lastWall: number | null;
}
