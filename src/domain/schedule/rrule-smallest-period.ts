/**
 * The `min_period` question for a recurrence (docs/security.md#quotas), computed, not sampled: a lower
 * bound on the gap between two of its fires on the wall clock, from each rule's structure (its time
 * lists, its FREQ and INTERVAL, the days it can fire on), the rules' times of day against each other,
 * every RDATE against its neighbours (exact), and the times of day on either side of each kind of
 * forward DST transition of the next 366 days in real time (a gap shortens the real time between a fire
 * before it and one after it by its length; a wall time in it is read with the offset before, RFC 5545
 * 3.3.5). The bound is conservative: it may refuse a sparse rule (a MONTHLY rule choosing several days
 * is judged as if two of them could be consecutive; across a transition a rule is judged by its times
 * of day alone), never accept a denser one.
 */
import { MS_PER_DAY, formatInstant } from "./civil-time.js";
import { nextFireAfter } from "./next-fire.js";
import { DAILY, MINUTELY, MONTHLY, SECONDLY, WEEKLY, YEARLY } from "./rrule-rule.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import type { RRuleSchedule } from "./schedule-types.js";
import { spendWork } from "./work-budget.js";
import { transitionsBetween } from "./zone-offsets.js";
import type { Instant } from "../time.js";

/** Two fires less than the asked minimum apart, in words. */
export interface RecurrenceGap {
  readonly ms: number;
  readonly between: string;
}

/**
 * Transitions looked at: those of the next 366 days, as for cron. Only their kinds matter (where the
 * clock resumes, by how much), not their dates: a rule is judged as if it fired on the day of each.
 */
const TRANSITION_HORIZON_MS = 366 * MS_PER_DAY;
/** Work counted per fire searched: a recurrence's next fire costs 50 to 500 microseconds. */
const FIRE_STEPS = 2_500;
const SECOND_MS = 1000;
/** Days between two fires of a MONTHLY or YEARLY rule that picks one day a month: February's 28. */
const ONE_DAY_A_MONTH = 28;

const ALL_SECONDS = Array.from({ length: 60 }, (_, i) => i);
const ALL_HOURS = Array.from({ length: 24 }, (_, i) => i);

const sorted = (values: readonly number[]): number[] => [...new Set(values)].sort((a, b) => a - b);
const first = (values: readonly number[]): number => values[0] ?? 0;
const last = (values: readonly number[]): number => values[values.length - 1] ?? 0;

function leastStep(values: readonly number[]): number | null {
  let least: number | null = null;
  for (let i = 1; i < values.length; i++) {
    const step = (values[i] ?? 0) - (values[i - 1] ?? 0);
    least = least === null ? step : Math.min(least, step);
  }
  return least;
}

/** A rule's hour, minute and second lists (every value where the rule does not limit it), sorted. */
function timeLists(rule: RecurrenceRule): { h: number[]; m: number[]; s: number[] } {
  return {
    h: sorted(rule.byHour ?? ALL_HOURS),
    m: sorted(rule.byMinute ?? ALL_SECONDS),
    s: sorted(rule.bySecond ?? ALL_SECONDS),
  };
}

/**
 * The least gap (s) between two distinct points `d x 86400 + h x 3600 + m x 60 + s` of the lists, with
 * days at least `dayGap` apart: two points differ first in the second, the minute, the hour or the day.
 */
function latticeGap(lists: { h: number[]; m: number[]; s: number[] }, dayGap: number): number {
  const { h, m, s } = lists;
  const inHour = (at: "first" | "last") =>
    at === "first" ? first(m) * 60 + first(s) : last(m) * 60 + last(s);
  const gaps = [
    dayGap * 86_400 - (last(h) * 3600 + inHour("last") - first(h) * 3600 - inHour("first")),
  ];
  const byS = leastStep(s);
  if (byS !== null) gaps.push(byS);
  const byM = leastStep(m);
  if (byM !== null) gaps.push(byM * 60 - (last(s) - first(s)));
  const byH = leastStep(h);
  if (byH !== null) gaps.push(byH * 3600 - (inHour("last") - inHour("first")));
  return Math.min(...gaps);
}

/** The least number of days between two days a rule can fire on (1 when not known to be more). */
function dayGapOf(rule: RecurrenceRule): number {
  if (rule.freq === DAILY) return rule.interval;
  if (rule.freq === WEEKLY && rule.byWeekday !== null) {
    const positions = sorted(rule.byWeekday.map((d) => (d - rule.wkst + 7) % 7));
    const within = leastStep(positions);
    const wrap = 7 * rule.interval - (last(positions) - first(positions));
    return within === null ? wrap : Math.min(within, wrap);
  }
  if (rule.freq === MONTHLY || rule.freq === YEARLY) {
    const oneDay =
      rule.byWeekNo === null &&
      rule.byYearDay === null &&
      rule.byWeekday === null &&
      (rule.byMonthDay?.length ?? 0) + (rule.byNthWeekday?.length ?? 0) === 1;
    // One day of each month: the same day (or the same nth weekday) of two months is 28 days apart at least.
    if (oneDay) return ONE_DAY_A_MONTH;
  }
  return 1;
}

/**
 * A lower bound (ms) on the wall-clock gap between two instances of `rule`. With `moves`, an instance
 * may be moved to another date at the same wall time: only the times of day bound it then.
 */
export function ruleGapMs(rule: RecurrenceRule, moves: boolean): number {
  const lists = timeLists(rule);
  spendWork(lists.h.length + lists.m.length + lists.s.length);
  const daily = latticeGap(lists, moves || rule.freq > DAILY ? 1 : dayGapOf(rule));
  if (moves || rule.freq <= DAILY) return daily * SECOND_MS;
  // Finer than DAILY, consecutive periods of the rule are INTERVAL units apart too.
  const k = rule.interval;
  const within = (values: number[]) => leastStep(values) ?? Number.POSITIVE_INFINITY;
  const { m, s } = lists;
  let periodic: number;
  if (rule.freq === SECONDLY) periodic = k;
  else if (rule.freq === MINUTELY) periodic = Math.min(within(s), k * 60 - (last(s) - first(s)));
  else {
    const span = last(m) * 60 + last(s) - first(m) * 60 - first(s);
    const inMinute = within(s);
    const byMinute = leastStep(m) === null ? Infinity : within(m) * 60 - (last(s) - first(s));
    periodic = Math.min(inMinute, byMinute, k * 3600 - span);
  }
  return Math.max(daily, periodic) * SECOND_MS;
}

/** The least gap below `minMs` between two fires of `spec` after `from`, or null. */
export function recurrenceGap(
  spec: RRuleSchedule,
  from: Instant,
  minMs: number,
): RecurrenceGap | null {
  let least: RecurrenceGap | null = null;
  const best = (): RecurrenceGap | null => least;
  const offer = (ms: number, between: () => string): void => {
    if (ms < minMs && (least === null || ms < least.ms)) least = { ms, between: between() };
  };
  // Instances are whole seconds, one per instant: never closer than a second.
  if (minMs <= SECOND_MS) return null;
  const moves = spec.onExcluded !== undefined && spec.exclude.length > 0;
  for (const rule of spec.rules) {
    offer(ruleGapMs(rule, moves), () => `two instances of "${rule.text}"`);
  }
  if (best() !== null) return best();
  if (spec.rules.length > 1) rulesAgainstEachOther(spec.rules, minMs, offer);
  if (best() !== null) return best();
  for (const rdate of spec.rdates) {
    if (rdate <= from) continue;
    spendWork(2 * FIRE_STEPS);
    const before = nextFireAfter(spec, (rdate - minMs) as Instant);
    if (before !== null && before < rdate) {
      offer(
        rdate - before,
        () => `the fires at ${formatInstant(before)} and RDATE ${formatInstant(rdate)}`,
      );
    }
    const after = nextFireAfter(spec, rdate);
    if (after !== null) {
      offer(
        after - rdate,
        () => `RDATE ${formatInstant(rdate)} and the fire at ${formatInstant(after)}`,
      );
    }
  }
  forwardTransitions(spec, from).forEach(({ resumesAt, shift }) => {
    acrossForwardTransition(spec.rules, { resumesAt, shift, moves, minMs }, offer);
  });
  return best();
}

/**
 * Two rules' instances compared by their times of day: on one day, and the last of one day against the
 * first of the next (any two rules are taken to fire on a common day, and on consecutive days).
 */
function rulesAgainstEachOther(
  rules: readonly RecurrenceRule[],
  minMs: number,
  offer: (ms: number, between: () => string) => void,
): void {
  const times = rules.map((rule) => {
    const { h, m, s } = timeLists(rule);
    const size = h.length * m.length * s.length;
    spendWork(size);
    // More times of day than fit a day at `minMs` apart: two of them are closer (pigeonholes). Kept as a
    // bound on this list's size; gapBelow asks here only once no rule alone is under `minMs`, and a rule
    // with that many times of day already is (its own least step), so no input reaches it today.
    /* v8 ignore next */
    if (size * minMs > MS_PER_DAY) return null;
    const list: number[] = [];
    for (const hour of h)
      for (const minute of m)
        for (const second of s) {
          list.push(((hour * 60 + minute) * 60 + second) * SECOND_MS);
        }
    return list;
  });
  const text = (r: number): string => rules[r]?.text ?? "";
  // The pigeonholed rules (none reach here today, above): each offers the spacing its times must break.
  /* v8 ignore start */
  times.forEach((list, r) => {
    const rule = rules[r];
    if (list !== null || rule === undefined) return;
    const { h, m, s } = timeLists(rule);
    offer(
      Math.floor(MS_PER_DAY / (h.length * m.length * s.length)),
      () => `"${text(r)}", which can fire at more times of day than fit apart, and the other rules`,
    );
  });
  /* v8 ignore stop */
  const known = times.flatMap((list, rule) =>
    list === null ? [] : list.map((at) => ({ at, rule })),
  );
  known.sort((a, b) => a.at - b.at);
  for (let i = 0; i < known.length; i++) {
    const a = known[i];
    for (let j = i + 1; a !== undefined && j < known.length; j++) {
      const b = known[j];
      if (b === undefined || b.at - a.at >= minMs) break;
      spendWork(1);
      if (b.at === a.at || b.rule === a.rule) continue;
      offer(b.at - a.at, () => `"${text(a.rule)}" and "${text(b.rule)}" on one day`);
    }
  }
  times.forEach((earlier, r) => {
    times.forEach((later, s) => {
      if (r === s || earlier === null || later === null) return;
      offer(
        MS_PER_DAY - last(earlier) + first(later),
        () => `"${text(r)}" on one day and "${text(s)}" the next`,
      );
    });
  });
}

/** The kinds of forward transition of the zone in the next 366 days: where the clock resumes, by how much. */
function forwardTransitions(
  spec: RRuleSchedule,
  from: Instant,
): { readonly resumesAt: number; readonly shift: number }[] {
  const kinds = new Map<string, { resumesAt: number; shift: number }>();
  for (const t of transitionsBetween(spec.timezone, from, from + TRANSITION_HORIZON_MS)) {
    const shift = t.offsetAfter - t.offsetBefore;
    if (shift <= 0) continue;
    // The first wall time after the gap, as a time of day (ms).
    const resumesAt = (((t.at + t.offsetAfter) % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY;
    kinds.set(`${resumesAt}:${shift}`, { resumesAt, shift });
  }
  return [...kinds.values()];
}

/** How many of `values` (ascending) are below `at`. */
function countBelow(values: readonly number[], at: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((values[mid] ?? 0) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Fires on either side of a forward transition: a wall time `a` before the point where the clock
 * resumes and `b` at or after it are `b - shift - a` apart in real time (a wall time in the gap keeps
 * the offset before it, so the two may even meet, and then they are one instant). On one day the rules'
 * times of day are compared pairwise; across days, the latest time that can come before the transition
 * against the earliest that can come after it `k` days later (`k` the days between two of a rule's days,
 * 1 between rules).
 */
function acrossForwardTransition(
  rules: readonly RecurrenceRule[],
  transition: {
    readonly resumesAt: number;
    readonly shift: number;
    readonly moves: boolean;
    readonly minMs: number;
  },
  offer: (ms: number, between: () => string) => void,
): void {
  const { resumesAt, shift, moves, minMs } = transition;
  const sizes = rules.map((rule) => {
    const { h, m, s } = timeLists(rule);
    return h.length * m.length * s.length;
  });
  const most = Math.max(...sizes);
  // More times of day than fit a day `minMs` apart: judged by them alone, two are closer (refused).
  if (most * minMs > MS_PER_DAY) {
    offer(
      Math.floor(MS_PER_DAY / most),
      () => "two times of day a rule can fire at, around a DST transition",
    );
    return;
  }
  const times = rules.map((rule) => {
    const { h, m, s } = timeLists(rule);
    spendWork(h.length * m.length * s.length);
    const list: number[] = [];
    for (const hour of h) {
      for (const minute of m) {
        for (const second of s) list.push(((hour * 60 + minute) * 60 + second) * SECOND_MS);
      }
    }
    return list;
  });
  const words = () =>
    `two fires on either side of a DST transition (the clock resumes at ${clockOf(resumesAt)})`;
  times.forEach((earlier, r) => {
    times.forEach((later, t) => {
      const rule = rules[r];
      const dayGap =
        r !== t || rule === undefined || moves || rule.freq > DAILY ? 1 : dayGapOf(rule);
      // From one day to a later one: the earlier fire before the transition, the later one after it.
      const firstAfter = later[countBelow(later, resumesAt)];
      const lastBefore = earlier[countBelow(earlier, resumesAt) - 1];
      const days = (k: number, a: number | undefined, b: number | undefined): void => {
        if (a !== undefined && b !== undefined) offer(k * MS_PER_DAY + b - a - shift, words);
      };
      days(dayGap, last(earlier), firstAfter);
      days(dayGap, lastBefore, first(later));
      days(Math.max(dayGap, 2), last(earlier), first(later));
      // One day: each time at or after the resumption against the nearest times before it.
      const before = countBelow(earlier, resumesAt);
      for (let i = countBelow(later, resumesAt); i < later.length; i++) {
        const real = (later[i] ?? 0) - shift;
        const at = Math.min(countBelow(earlier, real), before);
        for (const a of [at < before ? earlier[at] : undefined, earlier[at - 1]]) {
          if (a !== undefined && a !== real) offer(Math.abs(real - a), words);
        }
      }
    });
  });
}

const clockOf = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
