/**
 * Finds the wall times a cron expression matches, jumping field by field (month, day, hour, minute,
 * second) rather than ticking, so per-second expressions and never-matching ones both stay fast.
 */
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  ceilSecond,
  civilOf,
  daysInMonth,
  wallMs,
} from "./civil-time.js";
import type { DayItems } from "./cron-day-items.js";
import {
  dayOfMonthItemsMask,
  dayOfWeekItemsMask,
  hasDayItems,
  weekdayOf,
} from "./cron-day-items.js";
import type { CronExpression } from "./cron-expression.js";
import { spendWork } from "./work-budget.js";
import { MAX_YEAR } from "./zone-offsets.js";

interface CompiledCron {
  /** `next*[v]`: the smallest allowed value >= v, or -1. */
  readonly nextSecond: readonly number[];
  readonly nextMinute: readonly number[];
  readonly nextHour: readonly number[];
  readonly nextMonth: readonly number[];
  readonly dayOfMonth: readonly boolean[];
  readonly dayOfWeek: readonly boolean[];
  readonly eitherDay: boolean;
  /** Month-dependent day items (`L`, `W`, `#`), or null for the plain tables above. */
  readonly dayItems: DayItems | null;
  /** Matching days of a month (bit d for day d), by `year * 16 + month`; only with `dayItems`. */
  readonly monthMasks: Map<number, number>;
}

const MAX_MONTH_MASKS = 1024;

/**
 * Compiled tables, by expression object and by content. A schedule read back from storage is a new
 * object each time (three times per fire: admission, claim, completion), so the content key is what
 * saves the work; the object key saves building that key. Both hold derived data only.
 */
const compiledByObject = new WeakMap<CronExpression, CompiledCron>();
const compiledByContent = new Map<string, CompiledCron>();
const MAX_COMPILED = 4096;

function nextTable(values: readonly number[], size: number): number[] {
  const table = new Array<number>(size + 1).fill(-1);
  for (const v of values) if (v >= 0 && v <= size) table[v] = v;
  let next = -1;
  for (let v = size; v >= 0; v--) {
    if (table[v] === v) next = v;
    table[v] = next;
  }
  return table;
}

function flags(values: readonly number[], size: number): boolean[] {
  const table = new Array<boolean>(size).fill(false);
  for (const v of values) if (v >= 0 && v < size) table[v] = true;
  return table;
}

/** Everything the tables are built from, as one string. */
function contentKey(e: CronExpression): string {
  return `${e.seconds.join(",")}|${e.minutes.join(",")}|${e.hours.join(",")}|${e.daysOfMonth.join(",")}|${e.months.join(",")}|${e.daysOfWeek.join(",")}|${e.dayOfMonthRestricted ? 1 : 0}${e.dayOfWeekRestricted ? 1 : 0}|${JSON.stringify(e.dayItems)}`;
}

function compile(expression: CronExpression): CompiledCron {
  let table = compiledByObject.get(expression);
  if (table !== undefined) return table;
  const key = contentKey(expression);
  table = compiledByContent.get(key);
  if (table === undefined) {
    table = {
      nextSecond: nextTable(expression.seconds, 59),
      nextMinute: nextTable(expression.minutes, 59),
      nextHour: nextTable(expression.hours, 23),
      nextMonth: nextTable(expression.months, 12),
      dayOfMonth: flags(expression.daysOfMonth, 32),
      dayOfWeek: flags(expression.daysOfWeek, 7),
      eitherDay: expression.dayOfMonthRestricted && expression.dayOfWeekRestricted,
      dayItems: hasDayItems(expression.dayItems) ? expression.dayItems : null,
      monthMasks: new Map(),
    };
    if (compiledByContent.size >= MAX_COMPILED) compiledByContent.clear();
    compiledByContent.set(key, table);
  }
  compiledByObject.set(expression, table);
  return table;
}

function dayMatches(table: CompiledCron, day: number, weekday: number): boolean {
  const byMonthDay = table.dayOfMonth[day] === true;
  const byWeekday = table.dayOfWeek[weekday] === true;
  // Vixie day rule: both fields restricted means either may match; otherwise both must.
  return table.eitherDay ? byMonthDay || byWeekday : byMonthDay && byWeekday;
}

function at(table: readonly number[], value: number): number {
  // Each table has an entry for every value of its field: the `?? -1` (noUncheckedIndexedAccess) is never
  // taken, and not measured.
  /* v8 ignore next */
  return table[value] ?? -1;
}

/** The days of a month that pass the day rule, day items included (bit d for day d). */
function monthMask(table: CompiledCron, items: DayItems, year: number, month: number): number {
  const key = year * 16 + month;
  const cached = table.monthMasks.get(key);
  if (cached !== undefined) return cached;
  const last = daysInMonth(year, month);
  const firstWeekday = weekdayOf(year, month, 1);
  let byMonthDay = dayOfMonthItemsMask(items, year, month);
  let byWeekday = dayOfWeekItemsMask(items, year, month);
  for (let d = 1; d <= last; d++) {
    if (table.dayOfMonth[d] === true) byMonthDay |= 1 << d;
    if (table.dayOfWeek[(firstWeekday + d - 1) % 7] === true) byWeekday |= 1 << d;
  }
  const mask = table.eitherDay ? byMonthDay | byWeekday : byMonthDay & byWeekday;
  if (table.monthMasks.size >= MAX_MONTH_MASKS) table.monthMasks.clear();
  table.monthMasks.set(key, mask);
  return mask;
}

/** The first matching day of the month at or after `day`, or -1. */
function nextDay(table: CompiledCron, year: number, month: number, day: number, weekday: number) {
  const last = daysInMonth(year, month);
  if (table.dayItems !== null) {
    const mask = monthMask(table, table.dayItems, year, month) >>> day;
    if (mask === 0) return -1;
    const found = day + 31 - Math.clz32(mask & -mask);
    // Every bit of a month's mask is a day of that month, so `found <= last` always holds: not measured.
    /* v8 ignore next */
    return found <= last ? found : -1;
  }
  for (let d = day; d <= last; d++) {
    if (dayMatches(table, d, (weekday + d - day) % 7)) return d;
  }
  return -1;
}

/**
 * The smallest wall time (whole seconds) in `[from, to)` that matches the expression's fields, or
 * `null`. Wall times are "wall milliseconds" (see civil-time.ts).
 */
export function firstMatchingWall(
  expression: CronExpression,
  from: number,
  to: number,
): number | null {
  const table = compile(expression);
  let wall = ceilSecond(from);
  while (wall < to) {
    const c = civilOf(wall);
    if (c.year > MAX_YEAR) return null;
    const month = at(table.nextMonth, c.month);
    if (month !== c.month) {
      const firstMonth = at(table.nextMonth, 1);
      wall = month === -1 ? wallMs(c.year + 1, firstMonth, 1) : wallMs(c.year, month, 1);
      continue;
    }
    const day = nextDay(table, c.year, c.month, c.day, c.weekday);
    if (day !== c.day) {
      wall =
        day !== -1
          ? wallMs(c.year, c.month, day)
          : c.month === 12
            ? wallMs(c.year + 1, 1, 1)
            : wallMs(c.year, c.month + 1, 1);
      continue;
    }
    const hour = at(table.nextHour, c.hour);
    if (hour !== c.hour) {
      const startOfDay = Math.floor(wall / MS_PER_DAY) * MS_PER_DAY;
      wall = hour === -1 ? startOfDay + MS_PER_DAY : startOfDay + hour * MS_PER_HOUR;
      continue;
    }
    const minute = at(table.nextMinute, c.minute);
    if (minute !== c.minute) {
      const startOfHour = Math.floor(wall / MS_PER_HOUR) * MS_PER_HOUR;
      wall = minute === -1 ? startOfHour + MS_PER_HOUR : startOfHour + minute * MS_PER_MINUTE;
      continue;
    }
    const second = at(table.nextSecond, c.second);
    if (second !== c.second) {
      const startOfMinute = Math.floor(wall / MS_PER_MINUTE) * MS_PER_MINUTE;
      wall = second === -1 ? startOfMinute + MS_PER_MINUTE : startOfMinute + second * 1000;
      continue;
    }
    return wall;
  }
  return null;
}

/** Every matching wall time in `[from, to)`, at most `limit` of them. */
export function matchingWalls(
  expression: CronExpression,
  from: number,
  to: number,
  limit: number,
): number[] {
  const found: number[] = [];
  let wall = firstMatchingWall(expression, from, to);
  while (wall !== null && found.length < limit) {
    spendWork(1);
    found.push(wall);
    wall = firstMatchingWall(expression, wall + 1000, to);
  }
  return found;
}

/**
 * How many wall times in `[from, to)` match, and the first: counted an hour at a time (an hour wholly
 * inside the span holds minutes x seconds matches once its date and hour match), so a per-second
 * expression costs one search per matching hour, not one per fire: a DST hour is one or two searches,
 * a skipped day 24. Only an hour cut by the span's ends is counted minute by minute.
 */
export function countMatchingWalls(
  expression: CronExpression,
  from: number,
  to: number,
): { readonly first: number | null; readonly count: number } {
  const first = firstMatchingWall(expression, from, to);
  let count = 0;
  const perHour = expression.minutes.length * expression.seconds.length;
  for (let wall = first; wall !== null;) {
    const hour = Math.floor(wall / MS_PER_HOUR) * MS_PER_HOUR;
    if (hour >= from && hour + MS_PER_HOUR <= to) {
      count += perHour;
    } else {
      for (const minute of expression.minutes) {
        for (const second of expression.seconds) {
          const at = hour + minute * MS_PER_MINUTE + second * 1000;
          if (at >= from && at < to) count++;
        }
      }
    }
    wall = firstMatchingWall(expression, hour + MS_PER_HOUR, to);
  }
  return { first, count };
}

/** True when a calendar date passes the expression's month and day fields (its time fields aside). */
export function dateMatches(
  expression: CronExpression,
  year: number,
  month: number,
  day: number,
): boolean {
  const table = compile(expression);
  if (at(table.nextMonth, month) !== month) return false;
  if (table.dayItems !== null)
    return ((monthMask(table, table.dayItems, year, month) >>> day) & 1) === 1;
  return dayMatches(table, day, weekdayOf(year, month, day));
}
