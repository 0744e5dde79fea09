/**
 * Expands an RFC 5545 recurrence rule on the wall clock (docs/schedules.md#rrule): the rule's instances
 * are local date-times, found one period (year, month, week, day, hour, minute, second) at a time. Each
 * period's set is the product of its days and its times of day, kept virtual (an index, not a list), so
 * BYSETPOS and the search cost no more for a rule with 86,400 times a day. Finer-than-daily rules jump
 * over the periods their limits refuse (a month not in BYMONTH, a day, an hour...) instead of visiting
 * them, and every search stops after a bounded amount of work: no rule can hold the event loop.
 * Zones are not known here (see rrule-next.ts).
 */
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  isLeapYear,
} from "./civil-time.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import { DAILY, HOURLY, MINUTELY, MONTHLY, SECONDLY, WEEKLY, YEARLY } from "./rrule-rule.js";

/**
 * Steps (a lattice period, or a jump over what the limits refuse) one search of a DAILY or finer rule may
 * take before it gives up: tens of milliseconds at worst, for a lattice that keeps missing its limits
 * (`FREQ=SECONDLY;INTERVAL=2;BYSECOND=1` never fires). Coarser rules visit at most the 400 years of the
 * search horizon, one period (at most 366 days) at a time.
 */
export const RRULE_SEARCH_BUDGET = 100_000;

/** A rule ready to expand: its parts, DTSTART's wall time, and a wall time past which nothing is looked for. */
export interface RuleWalk {
  readonly rule: RecurrenceRule;
  readonly dtstartWall: number;
}

const UNIT_MS = [0, 0, 0, MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND];

function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function startOfWeek(day: number, wkst: number): number {
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
function dayPasses(rule: RecurrenceRule, day: number): boolean {
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
function nextMonthDay(rule: RecurrenceRule, day: number): number {
  if (rule.byMonth === null) return day;
  const { year, month } = civilFromDays(day);
  if (rule.byMonth.includes(month)) return day;
  const next = rule.byMonth.find((m) => m > month);
  return next === undefined
    ? daysFromCivil(year + 1, rule.byMonth[0] ?? 1, 1)
    : daysFromCivil(year, next, 1);
}

const timesCache = new WeakMap<RecurrenceRule, readonly number[]>();

/** Offsets (ms) from a period's start to its instances, sorted: the product of the expanded time parts. */
function periodOffsets(rule: RecurrenceRule): readonly number[] {
  let cached = timesCache.get(rule);
  if (cached !== undefined) return cached;
  const every = (list: readonly number[] | null): readonly number[] => list ?? [0];
  const hours = rule.freq < HOURLY ? every(rule.byHour) : [0];
  const minutes = rule.freq < MINUTELY ? every(rule.byMinute) : [0];
  const seconds = rule.freq < SECONDLY ? every(rule.bySecond) : [0];
  const offsets: number[] = [];
  for (const h of hours) {
    for (const m of minutes) {
      for (const s of seconds)
        offsets.push(h * MS_PER_HOUR + m * MS_PER_MINUTE + s * MS_PER_SECOND);
    }
  }
  cached = offsets;
  timesCache.set(rule, cached);
  return cached;
}

/** The first instance wall of a period's set (starts + offsets, in order) after `lo`, or null. */
function firstInSet(
  rule: RecurrenceRule,
  starts: readonly number[],
  offsets: readonly number[],
  lo: number,
): number | null {
  const size = starts.length * offsets.length;
  if (size === 0) return null;
  const at = (i: number): number =>
    (starts[Math.floor(i / offsets.length)] ?? 0) + (offsets[i % offsets.length] ?? 0);
  if (rule.bySetPos !== null) {
    let best: number | null = null;
    for (const pos of rule.bySetPos) {
      const index = pos > 0 ? pos - 1 : size + pos;
      if (index < 0 || index >= size) continue;
      const wall = at(index);
      if (wall > lo && (best === null || wall < best)) best = wall;
    }
    return best;
  }
  // The set is sorted: binary search for the first element after `lo`.
  let low = 0;
  let high = size;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (at(mid) > lo) high = mid;
    else low = mid + 1;
  }
  return low < size ? at(low) : null;
}

/** Days of a YEARLY, MONTHLY or WEEKLY period that pass the day parts. */
function periodDays(rule: RecurrenceRule, first: number, length: number): number[] {
  const days: number[] = [];
  for (let day = first; day < first + length; day++) {
    const open = nextMonthDay(rule, day);
    if (open !== day) {
      day = open - 1;
      continue;
    }
    if (dayPasses(rule, day)) days.push(day);
  }
  return days;
}

/** The `k`-th period (k >= 0) of a YEARLY, MONTHLY or WEEKLY rule: its first day and length in days. */
function calendarPeriod(rule: RecurrenceRule, dtstartDay: number, k: number): [number, number] {
  const step = k * rule.interval;
  if (rule.freq === WEEKLY) return [startOfWeek(dtstartDay, rule.wkst) + 7 * step, 7];
  const { year, month } = civilFromDays(dtstartDay);
  if (rule.freq === YEARLY) {
    const y = year + step;
    return [daysFromCivil(y, 1, 1), isLeapYear(y) ? 366 : 365];
  }
  const index = month - 1 + step;
  const y = year + Math.floor(index / 12);
  const m = (index % 12) + 1;
  return [daysFromCivil(y, m, 1), daysInMonth(y, m)];
}

/** The index of the YEARLY, MONTHLY or WEEKLY period holding `day` (may be negative). */
function calendarPeriodIndex(rule: RecurrenceRule, dtstartDay: number, day: number): number {
  if (rule.freq === WEEKLY) {
    const weeks = (startOfWeek(day, rule.wkst) - startOfWeek(dtstartDay, rule.wkst)) / 7;
    return Math.floor(weeks / rule.interval);
  }
  const a = civilFromDays(dtstartDay);
  const b = civilFromDays(day);
  const units =
    rule.freq === YEARLY ? b.year - a.year : (b.year - a.year) * 12 + (b.month - a.month);
  return Math.floor(units / rule.interval);
}

/**
 * The first wall time at or after `wall`, on a `unit` boundary (day, hour, minute or second), that the
 * limiting parts of a DAILY or finer rule let through; null past `limit`.
 */
function nextAllowed(
  rule: RecurrenceRule,
  wall: number,
  unit: number,
  limit: number,
): number | null {
  let w = wall;
  for (let guard = 0; guard < RRULE_SEARCH_BUDGET && w <= limit; guard++) {
    const day = Math.floor(w / MS_PER_DAY);
    const open = nextMonthDay(rule, day);
    if (open !== day) {
      w = open * MS_PER_DAY;
      continue;
    }
    if (!dayPasses(rule, day)) {
      w = (day + 1) * MS_PER_DAY;
      continue;
    }
    if (unit === MS_PER_DAY) return w;
    const dayStart = day * MS_PER_DAY;
    const hour = Math.floor((w - dayStart) / MS_PER_HOUR);
    if (rule.byHour !== null && !rule.byHour.includes(hour)) {
      const next = rule.byHour.find((h) => h > hour);
      w = next === undefined ? dayStart + MS_PER_DAY : dayStart + next * MS_PER_HOUR;
      continue;
    }
    if (unit === MS_PER_HOUR) return w;
    const hourStart = dayStart + hour * MS_PER_HOUR;
    const minute = Math.floor((w - hourStart) / MS_PER_MINUTE);
    if (rule.byMinute !== null && !rule.byMinute.includes(minute)) {
      const next = rule.byMinute.find((m) => m > minute);
      w = next === undefined ? hourStart + MS_PER_HOUR : hourStart + next * MS_PER_MINUTE;
      continue;
    }
    if (unit === MS_PER_MINUTE) return w;
    const minuteStart = hourStart + minute * MS_PER_MINUTE;
    const second = Math.floor((w - minuteStart) / MS_PER_SECOND);
    if (rule.bySecond !== null && !rule.bySecond.includes(second)) {
      const next = rule.bySecond.find((s) => s > second);
      w = next === undefined ? minuteStart + MS_PER_MINUTE : minuteStart + next * MS_PER_SECOND;
      continue;
    }
    return w;
  }
  return null;
}

/** DAILY and finer: periods on a lattice of `interval` units from DTSTART, limits jumped over. */
function nextOnLattice(walk: RuleWalk, lo: number, limit: number): number | null {
  const { rule, dtstartWall } = walk;
  const unit = UNIT_MS[rule.freq] ?? MS_PER_DAY;
  const step = unit * rule.interval;
  const base = Math.floor(dtstartWall / unit) * unit;
  const offsets = periodOffsets(rule);
  let k = Math.max(0, Math.floor((lo + 1 - base) / step));
  for (let visited = 0; visited < RRULE_SEARCH_BUDGET; visited++) {
    const start = base + k * step;
    if (start > limit) return null;
    const allowed = nextAllowed(rule, start, unit, limit);
    if (allowed === null) return null;
    if (allowed !== start) {
      k = Math.ceil((allowed - base) / step);
      continue;
    }
    const wall = firstInSet(rule, [start], offsets, lo);
    if (wall !== null) return wall;
    k++;
  }
  return null;
}

/** YEARLY, MONTHLY, WEEKLY: one period after another, each one's days computed. */
function nextInCalendarPeriods(walk: RuleWalk, lo: number, limit: number): number | null {
  const { rule, dtstartWall } = walk;
  const dtstartDay = Math.floor(dtstartWall / MS_PER_DAY);
  const offsets = periodOffsets(rule);
  const fromDay = Math.floor((lo + 1) / MS_PER_DAY);
  let k = Math.max(0, calendarPeriodIndex(rule, dtstartDay, fromDay));
  for (;;) {
    const [first, length] = calendarPeriod(rule, dtstartDay, k);
    if (first * MS_PER_DAY > limit) return null;
    const days = periodDays(rule, first, length).map((d) => d * MS_PER_DAY);
    const wall = firstInSet(rule, days, offsets, lo);
    if (wall !== null) return wall;
    k++;
  }
}

/**
 * The rule's first instance wall time strictly after `after`, at or after DTSTART, within COUNT (the
 * rule's `lastWall`) and no later than `limit`; null when there is none (or the search gave up).
 */
export function nextRuleWall(walk: RuleWalk, after: number, limit: number): number | null {
  const { rule, dtstartWall } = walk;
  const lo = Math.max(after, dtstartWall - 1);
  const bound = rule.lastWall === null ? limit : Math.min(limit, rule.lastWall);
  if (lo >= bound) return null;
  const wall =
    rule.freq >= DAILY ? nextOnLattice(walk, lo, bound) : nextInCalendarPeriods(walk, lo, bound);
  return wall === null || wall > bound ? null : wall;
}
