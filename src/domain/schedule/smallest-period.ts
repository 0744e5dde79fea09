/**
 * The `min_period` quota's question (docs/security.md#quotas): does a schedule ever fire twice less than
 * `minMs` apart? An interval's `every` answers it; a once schedule never does. For a cron schedule the
 * answer is computed, not sampled, over the union of its expressions:
 * - on one local day, two fires are two times of day of expressions that both match that day: each
 *   expression's own least gap follows from its second, minute and hour lists, and two expressions'
 *   times are compared only when some day of the next 28 years (every weekday of every date, leap days
 *   included) matches both;
 * - across days, the last time of one expression's day and the first of another's `k` days later, for
 *   the `k` that `minMs` can span, when such a pair of days exists in those 28 years;
 * - a DST transition moves fires in real time: every fire within `minMs` of each transition of the next
 *   366 days is enumerated.
 * Exclusions that skip and `start_at`/`end_at` only take fires away, so they are left out: the answer may
 * refuse a schedule whose dense days are all excluded (conservative), never accept a denser one. Exclusions
 * that move (`on_excluded`, docs/schedules.md#moved-occurrences) bring fires closer: a moved occurrence
 * fires at its wall time on another date, strictly between its neighbours, and which dates are excluded
 * can change after the check (a calendar is a reference). Such a schedule is also judged as if each of its
 * times of day could fire on any date, less the forward DST shifts a gap can span. A recurrence
 * (`rrule`) is bounded from its rules' structure (rrule-smallest-period.ts). Bounded by the work budget
 * (work-budget.ts).
 */
import { MS_PER_DAY, civilFromDays, daysInMonth, formatInstant } from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { dateMatches } from "./cron-matcher.js";
import { localDayOf } from "./exclusions.js";
import { nextFireAfter } from "./next-fire.js";
import { recurrenceGap } from "./rrule-smallest-period.js";
import type { CronSchedule, IntervalSchedule, ScheduleSpec } from "./schedule-types.js";
import { wallOf } from "./wall-clock.js";
import { spendWork, withWorkBudget } from "./work-budget.js";
import { transitionsBetween } from "./zone-offsets.js";
import type { Instant } from "../time.js";

/** Two fires less than the asked minimum apart: the gap, and which fires, in words. */
export interface ScheduleGap {
  readonly ms: number;
  readonly between: string;
}

/** Local days searched for two expressions' common days: every weekday of every date, leap days too. */
const SCAN_DAYS = 28 * 366;
/** Transitions looked at: those of the next 366 days, as the DST warnings. */
const TRANSITION_HORIZON_MS = 366 * MS_PER_DAY;

/**
 * The least gap below `minMs` between two fires after `from` (null when none is below it).
 * @throws limit_exceeded (`schedule_work`) when the schedule is too expensive to evaluate
 */
export function gapBelow(spec: ScheduleSpec, from: Instant, minMs: number): ScheduleGap | null {
  return withWorkBudget(() => {
    switch (spec.type) {
      case "once":
        return null;
      case "interval":
        if (spec.everyMs < minMs) return { ms: spec.everyMs, between: "two fires" };
        return moves(spec) ? movedIntervalGap(spec, from, minMs) : null;
      case "rrule":
        return recurrenceGap(spec, from, minMs);
      case "cron": {
        const nominal = cronGap(spec, from, minMs);
        if (!moves(spec)) return nominal;
        const moved = movedCronGap(spec, from, minMs);
        return moved !== null && (nominal === null || moved.ms < nominal.ms) ? moved : nominal;
      }
    }
  });
}

const MOVES = "an excluded occurrence moves to another date at the same wall time";

/** Whether an excluded occurrence may move to another date (docs/schedules.md#moved-occurrences). */
function moves(spec: {
  readonly onExcluded?: unknown;
  readonly exclude: readonly unknown[];
}): boolean {
  return spec.onExcluded !== undefined && spec.exclude.length > 0;
}

/**
 * The most real time forward DST transitions take out of any stretch of `minMs` (ms) after `from`: the
 * wall-clock gap between two fires less this is a lower bound on their real gap.
 */
function forwardShiftWithin(zone: string | null, from: Instant, minMs: number): number {
  if (zone === null) return 0;
  const forward = transitionsBetween(zone, from, from + TRANSITION_HORIZON_MS + minMs)
    .map((t) => ({ at: t.at, shift: t.offsetAfter - t.offsetBefore }))
    .filter((t) => t.shift > 0);
  let most = 0;
  for (const end of forward) {
    let sum = 0;
    for (const t of forward) if (t.at <= end.at && t.at > end.at - minMs) sum += t.shift;
    most = Math.max(most, sum);
  }
  return most;
}

/**
 * A cron schedule whose occurrences may move: its times of day (every expression's) on any dates, the
 * closest two on one date or on consecutive dates, less the forward shifts a gap can span.
 */
function movedCronGap(spec: CronSchedule, from: Instant, minMs: number): ScheduleGap | null {
  const times = [...new Set(spec.rules.flatMap(timesOf))].sort((a, b) => a - b);
  const shift = forwardShiftWithin(spec.timezone, from, minMs);
  const across = shift > 0 ? ", across a DST transition" : "";
  let least = MS_PER_DAY - (last(times) - first(times));
  let between =
    times.length === 1
      ? `two fires at ${clock(first(times))} on different dates`
      : `a fire at ${clock(last(times))} and one at ${clock(first(times))} the next date`;
  let previous: number | null = null;
  for (const at of times) {
    if (previous !== null && at - previous < least) {
      least = at - previous;
      between = `fires at ${clock(previous)} and ${clock(at)} on one date`;
    }
    previous = at;
  }
  // Two fires are distinct whole seconds: never closer than a second.
  const ms = Math.max(1_000, least - shift);
  return ms < minMs ? { ms, between: `${between} (${MOVES})${across}` } : null;
}

/**
 * An interval whose occurrences may move: a fire moved `k` wall days towards a neighbour `everyMs` away
 * stays strictly between, so it comes `everyMs - k` days close to it, for the most days `k` that fit
 * (forward DST shifts included).
 */
function movedIntervalGap(
  spec: IntervalSchedule,
  from: Instant,
  minMs: number,
): ScheduleGap | null {
  const shift = forwardShiftWithin(spec.timezone, from, minMs);
  const k = Math.ceil((spec.everyMs + shift) / MS_PER_DAY) - 1;
  if (k < 1) return null;
  const ms = Math.max(1_000, spec.everyMs - k * MS_PER_DAY - shift);
  return ms < minMs
    ? { ms, between: `a fire moved ${k} day${k === 1 ? "" : "s"} towards another (${MOVES})` }
    : null;
}

// The time lists are never empty and `i` stays in bounds: the `?? 0` and `?? ""` fallbacks
// (noUncheckedIndexedAccess) here, in leastStep and in cronGap's textOf are never taken (not measured).
/* v8 ignore start */
const first = (values: readonly number[]): number => values[0] ?? 0;
const last = (values: readonly number[]): number => values[values.length - 1] ?? 0;
/* v8 ignore stop */
const span = (values: readonly number[]): number => last(values) - first(values);

function leastStep(values: readonly number[]): number | null {
  let least: number | null = null;
  for (let i = 1; i < values.length; i++) {
    /* v8 ignore next */
    const step = (values[i] ?? 0) - (values[i - 1] ?? 0);
    least = least === null ? step : Math.min(least, step);
  }
  return least;
}

/** An expression's least gap between two of its times of one day (ms), from its time lists alone. */
function ownGapMs(rule: CronExpression): number | null {
  const { seconds, minutes, hours } = rule;
  const gaps: number[] = [];
  const s = leastStep(seconds);
  if (s !== null) gaps.push(s * 1000);
  const m = leastStep(minutes);
  if (m !== null) gaps.push((m * 60 - span(seconds)) * 1000);
  const h = leastStep(hours);
  if (h !== null) {
    const earliest = first(minutes) * 60 + first(seconds);
    const latest = last(minutes) * 60 + last(seconds);
    gaps.push((h * 3600 - (latest - earliest)) * 1000);
  }
  return gaps.length === 0 ? null : Math.min(...gaps);
}

/** An expression's times of day (ms after local midnight), ascending. */
function timesOf(rule: CronExpression): number[] {
  const times: number[] = [];
  for (const h of rule.hours) {
    for (const m of rule.minutes) {
      spendWork(rule.seconds.length);
      for (const s of rule.seconds) times.push(((h * 60 + m) * 60 + s) * 1000);
    }
  }
  return times;
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

function cronGap(spec: CronSchedule, from: Instant, minMs: number): ScheduleGap | null {
  const rules = spec.rules;
  /* v8 ignore next */
  const textOf = (rule: number): string => rules[rule]?.text ?? "";
  // Assigned in `offer`: read through `best()`, which the compiler does not narrow to null.
  let least: ScheduleGap | null = null;
  const best = (): ScheduleGap | null => least;
  // The words are made only for a gap that beats the least so far.
  const offer = (ms: number, between: () => string): void => {
    if (ms < minMs && (least === null || ms < least.ms)) least = { ms, between: between() };
  };
  for (const rule of rules) {
    const own = ownGapMs(rule);
    if (own !== null) offer(own, () => `two fires of "${rule.text}" on one day`);
  }
  // Every expression's own gap is at least minMs from here, so each has at most 86,400,000 / minMs
  // times of day: the lists below stay within the budget.
  if (best() !== null) return best();
  const days = new CommonDays(rules, localDayOf(wallOf(spec.timezone, from)));
  const times = rules.map(timesOf);
  const merged = times
    .flatMap((list, rule) => list.map((at) => ({ at, rule })))
    .sort((a, b) => a.at - b.at);
  for (const [i, a] of merged.entries()) {
    for (const b of merged.slice(i + 1, i + 1 + rules.length * 2)) {
      if (b.at - a.at >= minMs) break;
      spendWork(1);
      if (b.at === a.at || b.rule === a.rule) continue;
      if (b.at - a.at >= (best()?.ms ?? minMs)) break;
      if (!days.meet(a.rule, b.rule, 0)) continue;
      offer(
        b.at - a.at,
        () =>
          `"${textOf(a.rule)}" at ${clock(a.at)} and "${textOf(b.rule)}" at ${clock(b.at)} on one day`,
      );
    }
  }
  for (let k = 1; (k - 1) * MS_PER_DAY < minMs; k++) {
    times.forEach((earlier, r) => {
      times.forEach((later, s) => {
        const ms = k * MS_PER_DAY - last(earlier) + first(later);
        if (ms >= (best()?.ms ?? minMs) || !days.meet(r, s, k)) return;
        offer(
          ms,
          () =>
            `"${textOf(r)}" at ${clock(last(earlier))} and "${textOf(s)}" at ${clock(first(later))} ${k} day${k === 1 ? "" : "s"} later`,
        );
      });
    });
  }
  for (const transition of transitionsBetween(spec.timezone, from, from + TRANSITION_HORIZON_MS)) {
    let previous = nextFireAfter(spec, (transition.at - minMs - 1) as Instant);
    while (previous !== null && previous <= transition.at + minMs) {
      const next = nextFireAfter(spec, previous);
      if (next === null) break;
      const [a, b] = [previous, next];
      offer(
        b - a,
        () => `the fires at ${formatInstant(a)} and ${formatInstant(b)}, across a DST transition`,
      );
      previous = next;
    }
  }
  return best();
}

/** Which expressions match a local day, over the next `SCAN_DAYS` days, read when first asked. */
class CommonDays {
  readonly #rules: readonly CronExpression[];
  readonly #firstDay: number;
  readonly #matches = new Map<string, Uint8Array>();
  readonly #met = new Map<string, boolean>();

  constructor(rules: readonly CronExpression[], firstDay: number) {
    this.#rules = rules;
    this.#firstDay = firstDay;
  }

  /** Some day of the scan matches expression `r`, and the day `k` days later matches `s`. */
  meet(r: number, s: number, k: number): boolean {
    const key = `${r}:${s}:${k}`;
    const known = this.#met.get(key);
    if (known !== undefined) return known;
    const a = this.#of(r);
    const b = this.#of(s);
    spendWork(SCAN_DAYS / 64);
    let met = false;
    for (let d = 0; d + k < SCAN_DAYS && !met; d++) met = a[d] === 1 && b[d + k] === 1;
    this.#met.set(key, met);
    return met;
  }

  #of(rule: number): Uint8Array {
    const expression = this.#rules[rule];
    // `rule` indexes the rules: never undefined, only typed so (not measured).
    /* v8 ignore next */
    if (expression === undefined) return new Uint8Array(SCAN_DAYS);
    // Expressions with the same day fields match the same days: one scan serves them all.
    const key = expression.text.startsWith("@")
      ? expression.text
      : expression.text.split(" ").slice(-3).join(" ");
    const known = this.#matches.get(key);
    if (known !== undefined) return known;
    spendWork(SCAN_DAYS * 2);
    const days = new Uint8Array(SCAN_DAYS);
    const first = civilFromDays(this.#firstDay);
    let d = 1 - first.day;
    for (let year = first.year, month = first.month; d < SCAN_DAYS; month++) {
      if (month > 12) {
        year++;
        month = 1;
      }
      const length = daysInMonth(year, month);
      for (let day = 1; day <= length; day++, d++) {
        if (d >= 0 && d < SCAN_DAYS && dateMatches(expression, year, month, day)) days[d] = 1;
      }
    }
    this.#matches.set(key, days);
    return days;
  }
}
