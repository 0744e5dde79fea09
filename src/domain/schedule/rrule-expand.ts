/**
 * Expands an RFC 5545 recurrence rule on the wall clock (docs/schedules.md#rrule): the rule's instances
 * are local date-times, found one period (year, month, week, day, hour, minute, second) at a time. Each
 * period's set is the product of its days and its times of day, kept virtual (an index, not a list), so
 * BYSETPOS and the search cost no more for a rule with 86,400 times a day. DAILY and finer rules find
 * their next allowed period by arithmetic (rrule-lattice.ts), coarser ones visit their periods up to the
 * search limit, so a search is exact up to it and bounded. Zones are not known here (see rrule-next.ts).
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
import { dayPasses, nextMonthDay, startOfWeek } from "./rrule-days.js";
import { latticeUnitMs, nextLatticePeriod } from "./rrule-lattice.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import { DAILY, HOURLY, MINUTELY, SECONDLY, WEEKLY, YEARLY } from "./rrule-rule.js";

/** A rule ready to expand: its parts, DTSTART's wall time, and a wall time past which nothing is looked for. */
export interface RuleWalk {
  readonly rule: RecurrenceRule;
  readonly dtstartWall: number;
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

/** Whether BYSETPOS names a position inside a set of `size` instances. */
function setPosReachable(bySetPos: readonly number[], size: number): boolean {
  return bySetPos.some((pos) => Math.abs(pos) <= size);
}

/** DAILY and finer: periods on a lattice of `interval` units from DTSTART, the refused ones skipped. */
function nextOnLattice(walk: RuleWalk, lo: number, limit: number): number | null {
  const { rule, dtstartWall } = walk;
  const unit = latticeUnitMs(rule);
  const step = unit * rule.interval;
  const base = Math.floor(dtstartWall / unit) * unit;
  const offsets = periodOffsets(rule);
  // Every lattice period holds the same number of instances: BYSETPOS picks one in each, or in none.
  if (rule.bySetPos !== null && !setPosReachable(rule.bySetPos, offsets.length)) return null;
  let from = base + Math.max(0, Math.floor((lo + 1 - base) / step)) * step;
  // The first period found may end at or before `lo`; the one after it cannot.
  for (let tries = 0; tries < 2; tries++) {
    const start = nextLatticePeriod(rule, base, from, limit);
    if (start === null) return null;
    const wall = firstInSet(rule, [start], offsets, lo);
    if (wall !== null) return wall;
    from = start + step;
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
