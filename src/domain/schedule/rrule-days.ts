/**
 * The day parts of an RFC 5545 rule (BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY, BYDAY) as tests on a day
 * (days since 1970-01-01 on the wall clock), and the next day they let through found by jumping from one
 * part's next day to the next (docs/schedules.md#speed), never by visiting the days they refuse.
 */
import { civilFromDays, daysFromCivil, daysInMonth, isLeapYear } from "./civil-time.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import { MONTHLY, YEARLY } from "./rrule-rule.js";
import { spendWork } from "./work-budget.js";

export function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

export function startOfWeek(day: number, wkst: number): number {
  return day - ((weekdayOfDay(day) - wkst + 7) % 7);
}

/** The first day of week 1 of `year`: the first week (from WKST) with at least 4 days in the year. */
function weekOneStart(year: number, wkst: number): number {
  const jan1 = daysFromCivil(year, 1, 1);
  const before = (weekdayOfDay(jan1) - wkst + 7) % 7;
  return before <= 3 ? jan1 - before : jan1 - before + 7;
}

/** RFC 5545 3.3.10 BYWEEKNO: the day's week number in its week-numbering year, and that year's weeks. */
function weekNumberOf(day: number, year: number, wkst: number): { week: number; weeks: number } {
  let weekYear = year;
  if (day < weekOneStart(year, wkst)) weekYear = year - 1;
  else if (day >= weekOneStart(year + 1, wkst)) weekYear = year + 1;
  const start = weekOneStart(weekYear, wkst);
  return {
    week: Math.floor((day - start) / 7) + 1,
    weeks: (weekOneStart(weekYear + 1, wkst) - start) / 7,
  };
}

function hasSigned(list: readonly number[], positive: number, negative: number): boolean {
  return list.includes(positive) || list.includes(negative);
}

/** Whether a day passes the rule's day parts (BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY, BYDAY). */
export function dayPasses(rule: RecurrenceRule, day: number): boolean {
  const { year, month, day: dom } = civilFromDays(day);
  if (rule.byMonth !== null && !rule.byMonth.includes(month)) return false;
  const dim = daysInMonth(year, month);
  if (rule.byMonthDay !== null && !hasSigned(rule.byMonthDay, dom, dom - dim - 1)) return false;
  const yearLength = isLeapYear(year) ? 366 : 365;
  const yearDay = day - daysFromCivil(year, 1, 1) + 1;
  if (rule.byYearDay !== null && !hasSigned(rule.byYearDay, yearDay, yearDay - yearLength - 1)) {
    return false;
  }
  if (rule.byWeekNo !== null) {
    const { week, weeks } = weekNumberOf(day, year, rule.wkst);
    if (!hasSigned(rule.byWeekNo, week, week - weeks - 1)) return false;
  }
  if (rule.byWeekday === null && rule.byNthWeekday === null) return true;
  const weekday = weekdayOfDay(day);
  if (rule.byWeekday?.includes(weekday) === true) return true;
  if (rule.byNthWeekday === null) return false;
  // An ordinal counts within the month for MONTHLY (and YEARLY with BYMONTH), else within the year.
  const inMonth = rule.freq === MONTHLY || (rule.freq === YEARLY && rule.byMonth !== null);
  const index = inMonth ? dom : yearDay;
  const length = inMonth ? dim : yearLength;
  const fromStart = Math.floor((index - 1) / 7) + 1;
  const fromEnd = -(Math.floor((length - index) / 7) + 1);
  return rule.byNthWeekday.some(
    (d) => d.weekday === weekday && (d.n === fromStart || d.n === fromEnd),
  );
}

/** The next day at or after `day` whose month BYMONTH allows (the day itself when it does). */
export function nextMonthDay(rule: RecurrenceRule, day: number): number {
  if (rule.byMonth === null) return day;
  const { year, month } = civilFromDays(day);
  if (rule.byMonth.includes(month)) return day;
  const next = rule.byMonth.find((m) => m > month);
  return next === undefined
    ? daysFromCivil(year + 1, rule.byMonth[0] ?? 1, 1)
    : daysFromCivil(year, next, 1);
}

/**
 * The least index at or after `index` (1-based, in a month or year of `length` days) that a signed list
 * names (`-1` is the last), or null when none is left in it.
 */
function nextSignedIndex(list: readonly number[], index: number, length: number): number | null {
  let best: number | null = null;
  for (const n of list) {
    const at = n > 0 ? n : length + n + 1;
    if (at >= index && at <= length && (best === null || at < best)) best = at;
  }
  return best;
}

/** The next day at or after `day` whose day of the month BYMONTHDAY names. */
function nextByMonthDay(rule: RecurrenceRule, day: number): number {
  if (rule.byMonthDay === null) return day;
  const { year, month, day: dom } = civilFromDays(day);
  const dim = daysInMonth(year, month);
  const next = nextSignedIndex(rule.byMonthDay, dom, dim);
  return next === null ? day - dom + dim + 1 : day - dom + next;
}

/** The next day at or after `day` whose day of the year BYYEARDAY names. */
function nextByYearDay(rule: RecurrenceRule, day: number): number {
  if (rule.byYearDay === null) return day;
  const { year } = civilFromDays(day);
  const jan1 = daysFromCivil(year, 1, 1);
  const length = isLeapYear(year) ? 366 : 365;
  const next = nextSignedIndex(rule.byYearDay, day - jan1 + 1, length);
  return next === null ? jan1 + length : jan1 + next - 1;
}

/** The next day at or after `day` on a plain weekday of BYDAY (ordinals are left to `dayPasses`). */
function nextByWeekday(rule: RecurrenceRule, day: number): number {
  if (rule.byWeekday === null || rule.byNthWeekday !== null) return day;
  const weekday = weekdayOfDay(day);
  let ahead = 7;
  for (const w of rule.byWeekday) ahead = Math.min(ahead, (w - weekday + 7) % 7);
  return day + ahead;
}

/**
 * The first day at or after `day`, and no later than `lastDay`, that passes every day part; null when
 * there is none. Each part names its own next day and the search jumps to the latest of them, so a
 * rule whose parts agree once in 28 years (`BYMONTH=2;BYMONTHDAY=29;BYDAY=MO`) costs a few steps a year.
 */
export function nextDayPassing(rule: RecurrenceRule, day: number, lastDay: number): number | null {
  let d = day;
  for (;;) {
    if (d > lastDay) return null;
    let next = nextMonthDay(rule, d);
    if (next === d) next = nextByMonthDay(rule, d);
    if (next === d) next = nextByYearDay(rule, d);
    if (next === d) next = nextByWeekday(rule, d);
    // BYWEEKNO and ordinal weekdays (coarser rules only) are tested day by day.
    if (next === d) {
      if (dayPasses(rule, d)) return d;
      next = d + 1;
    }
    spendWork(1);
    d = next;
  }
}
