/**
 * The periods of a DAILY or finer RFC 5545 rule: a lattice of INTERVAL units (day, hour, minute, second)
 * from DTSTART on the wall clock, of which a period counts when its day passes the day parts and its
 * time of day the limiting time parts (docs/schedules.md#speed). The next such period is found by
 * arithmetic, not by stepping: refused days are jumped over (rrule-days.ts); a lattice finer than a day
 * meets a day's allowed times of day in a pattern that repeats every L days, L = INTERVAL / gcd(units
 * per day, INTERVAL), worked out once per rule; a lattice of a day or more visits only its own points.
 * So the search is exact up to its limit and costs at most a step per day before it.
 */
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND } from "./civil-time.js";
import { nextDayPassing } from "./rrule-days.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import { HOURLY, MINUTELY, SECONDLY } from "./rrule-rule.js";
import { spendWork } from "./work-budget.js";

const UNIT_MS = [0, 0, 0, MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND];

/** The length of a DAILY or finer rule's unit in ms. */
export function latticeUnitMs(rule: RecurrenceRule): number {
  return UNIT_MS[rule.freq] ?? MS_PER_DAY;
}

const floorDiv = (a: number, b: number): number => Math.floor(a / b);
const mod = (a: number, b: number): number => ((a % b) + b) % b;

function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The limiting time parts' allowed times of day, in units, sorted; null when every time is allowed. */
function allowedTimes(rule: RecurrenceRule): number[] | null {
  const limits = [rule.byHour, rule.byMinute, rule.bySecond].slice(0, rule.freq - HOURLY + 1);
  if (limits.every((l) => l === null)) return null;
  let times = [...(rule.byHour ?? range(24))].sort((a, b) => a - b);
  if (rule.freq >= MINUTELY) {
    const minutes = [...(rule.byMinute ?? range(60))].sort((a, b) => a - b);
    times = times.flatMap((h) => minutes.map((m) => h * 60 + m));
  }
  if (rule.freq >= SECONDLY) {
    const seconds = [...(rule.bySecond ?? range(60))].filter((s) => s < 60).sort((a, b) => a - b);
    times = times.flatMap((hm) => seconds.map((s) => hm * 60 + s));
  }
  return times;
}

/**
 * What a sub-daily lattice needs, once per rule: the allowed times of day by their remainder modulo
 * INTERVAL, and for each day of the L-day pattern how many days on the next day with a fitting time is.
 */
interface SubDailyPattern {
  /** Allowed times of day (units) by remainder modulo INTERVAL, sorted; null: every time is allowed. */
  readonly classes: ReadonlyMap<number, readonly number[]> | null;
  /** Days from pattern day j to the next with a lattice point at an allowed time (-1: never). */
  readonly daysToFit: Int32Array | null;
  /** The lattice's remainder modulo INTERVAL, for which `daysToFit` was computed. */
  readonly baseRemainder: number;
}

const patterns = new WeakMap<RecurrenceRule, SubDailyPattern>();

function subDailyPattern(rule: RecurrenceRule, base: number, perDay: number): SubDailyPattern {
  const step = rule.interval;
  const baseRemainder = mod(base, step);
  const cached = patterns.get(rule);
  if (cached?.baseRemainder === baseRemainder) return cached;
  const times = allowedTimes(rule);
  let pattern: SubDailyPattern = { classes: null, daysToFit: null, baseRemainder };
  if (times !== null) {
    const classes = new Map<number, number[]>();
    for (const t of times) {
      const list = classes.get(t % step);
      if (list === undefined) classes.set(t % step, [t]);
      else list.push(t);
    }
    // Day d's lattice points sit at times of day t = (base - d * perDay) mod INTERVAL, repeating every L days.
    const length = step / gcd(perDay, step);
    spendWork(length);
    const daysToFit = new Int32Array(length);
    const fits = (j: number): boolean => classes.has(mod(baseRemainder - j * perDay, step));
    // Two passes backwards over the pattern: the second sees, from its last days, the first fit of the next round.
    let next = -1;
    for (let i = 2 * length - 1; i >= 0; i--) {
      if (fits(i % length)) next = i;
      if (i < length) daysToFit[i] = next < 0 ? -1 : next - i;
    }
    pattern = { classes, daysToFit, baseRemainder };
  }
  patterns.set(rule, pattern);
  return pattern;
}

/** The least allowed time of day at or after `from` with remainder `r` modulo INTERVAL, or null. */
function firstTimeOfClass(
  pattern: SubDailyPattern,
  r: number,
  from: number,
  step: number,
  perDay: number,
): number | null {
  if (pattern.classes === null) {
    const t = from + mod(r - from, step);
    return t < perDay ? t : null;
  }
  const list = pattern.classes.get(r);
  if (list === undefined) return null;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((list[mid] ?? 0) >= from) high = mid;
    else low = mid + 1;
  }
  return list[low] ?? null;
}

function timeAllowed(rule: RecurrenceRule, t: number): boolean {
  if (rule.freq === HOURLY) return rule.byHour === null || rule.byHour.includes(t);
  const perHour = rule.freq === MINUTELY ? 60 : 3600;
  const hour = floorDiv(t, perHour);
  if (rule.byHour !== null && !rule.byHour.includes(hour)) return false;
  const inHour = t - hour * perHour;
  const minute = rule.freq === MINUTELY ? inHour : floorDiv(inHour, 60);
  if (rule.byMinute !== null && !rule.byMinute.includes(minute)) return false;
  return rule.freq === MINUTELY || rule.bySecond === null || rule.bySecond.includes(inHour % 60);
}

interface Lattice {
  readonly rule: RecurrenceRule;
  /** The lattice point DTSTART's period starts at, in units. */
  readonly base: number;
  readonly perDay: number;
}

/** A lattice of a day or more: each point in turn, jumping to the first one on a day the day parts allow. */
function nextWidePoint(lattice: Lattice, from: number, limit: number): number | null {
  const { rule, base, perDay } = lattice;
  const step = rule.interval;
  let p = from;
  while (p <= limit) {
    const day = floorDiv(p, perDay);
    const open = nextDayPassing(rule, day, floorDiv(limit, perDay));
    if (open === null) return null;
    if (open !== day) {
      p = base + Math.ceil((open * perDay - base) / step) * step;
      continue;
    }
    if (perDay === 1 || timeAllowed(rule, p - day * perDay)) return p;
    spendWork(1);
    p += step;
  }
  return null;
}

/** A lattice finer than a day: day by allowed day, each day's first fitting point by its remainder. */
function nextNarrowPoint(lattice: Lattice, from: number, limit: number): number | null {
  const { rule, base, perDay } = lattice;
  const step = rule.interval;
  const pattern = subDailyPattern(rule, base, perDay);
  const lastDay = floorDiv(limit, perDay);
  let day = floorDiv(from, perDay);
  let earliest = from - day * perDay;
  while (day <= lastDay) {
    const open = nextDayPassing(rule, day, lastDay);
    if (open === null) return null;
    const wait = pattern.daysToFit?.[mod(open, pattern.daysToFit.length)] ?? 0;
    if (wait < 0) return null;
    if (open !== day || wait > 0) {
      day = open + wait;
      earliest = 0;
      continue;
    }
    const t = firstTimeOfClass(pattern, mod(base - day * perDay, step), earliest, step, perDay);
    if (t !== null) return day * perDay + t;
    spendWork(1);
    day++;
    earliest = 0;
  }
  return null;
}

/**
 * The start (wall ms) of the first period at or after the lattice point `fromWall` whose day and time of
 * day the rule allows, no later than `limitWall`; null when there is none.
 */
export function nextLatticePeriod(
  rule: RecurrenceRule,
  baseWall: number,
  fromWall: number,
  limitWall: number,
): number | null {
  const unit = latticeUnitMs(rule);
  const perDay = MS_PER_DAY / unit;
  const lattice: Lattice = { rule, base: baseWall / unit, perDay };
  const limit = floorDiv(limitWall, unit);
  const from = fromWall / unit;
  const point =
    rule.interval >= perDay
      ? nextWidePoint(lattice, from, limit)
      : nextNarrowPoint(lattice, from, limit);
  return point === null || point > limit ? null : point * unit;
}
