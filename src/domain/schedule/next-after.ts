/**
 * `nextAfter`: a schedule's nominal fire times, one at a time, inside its `start_at`/`end_at` bounds.
 * `max_runs` and jitter belong to the task layer.
 */
import { assertNever } from "../errors.js";
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { MS_PER_DAY } from "./civil-time.js";
import type { CronFire } from "./cron-next.js";
import { nextCronFire } from "./cron-next.js";
import type { RRuleInstance } from "./rrule-next.js";
import { RRULE_SEARCH_HORIZON_MS, nextRRuleInstance } from "./rrule-next.js";
import type {
  CronSchedule,
  IntervalSchedule,
  RRuleSchedule,
  ScheduleSpec,
} from "./schedule-types.js";
import { spendWork } from "./work-budget.js";

const MAX_DATE_MS = 8.64e15;

/** A cron search looks no further than one Gregorian cycle: a pattern absent for 400 years never fires. */
const CRON_SEARCH_HORIZON_MS = 146_097 * MS_PER_DAY;

/**
 * The next cron fire strictly after `after` inside the schedule's bounds, with its DST details: the
 * earliest fire of any rule (the union), the first rule in the order written winning a tie.
 */
export function nextCronFireOf(spec: CronSchedule, after: number): CronFire | null {
  const from = spec.startAt === null ? after : Math.max(after, spec.startAt - 1);
  spendWork(spec.rules.length);
  let best: CronFire | null = null;
  for (let rule = 0; rule < spec.rules.length; rule++) {
    const expression = spec.rules[rule];
    if (expression === undefined) continue;
    // A later rule need only be searched up to the best fire so far.
    const until = best === null ? from + CRON_SEARCH_HORIZON_MS : best.at + 1;
    const fire = nextCronFire(expression, spec.timezone, from, until, rule);
    if (fire !== null && (best === null || fire.at < best.at)) best = fire;
  }
  if (best === null || (spec.endAt !== null && best.at > spec.endAt)) return null;
  return best;
}

/** The next instance of a recurrence strictly after `after` inside the schedule's bounds, with its nominal wall time. */
export function nextRRuleInstanceOf(spec: RRuleSchedule, after: number): RRuleInstance | null {
  spendWork(1);
  const from = spec.startAt === null ? after : Math.max(after, spec.startAt - 1);
  const horizon = from + RRULE_SEARCH_HORIZON_MS;
  return nextRRuleInstance(
    spec,
    from,
    spec.endAt === null ? horizon : Math.min(horizon, spec.endAt),
  );
}

function nextIntervalAfter(spec: IntervalSchedule, after: Instant): Instant | null {
  const firstIndex = spec.startAt === null ? 1 : 0;
  const index =
    after < spec.anchorAt + firstIndex * spec.everyMs
      ? firstIndex
      : Math.floor((after - spec.anchorAt) / spec.everyMs) + 1;
  const at = spec.anchorAt + index * spec.everyMs;
  // Past the last instant a Date can hold, the series ends.
  if (at > MAX_DATE_MS || (spec.endAt !== null && at > spec.endAt)) return null;
  return instant(at);
}

/**
 * The schedule's next nominal time strictly after `after`, honouring `start_at` and `end_at` (not
 * `max_runs` nor jitter, which the task layer applies), or `null` when there is none.
 *
 * @example
 * nextAfter(parseSchedule({ type: "cron", cron: "30 2 * * *", timezone: "America/New_York" }, ctx), at)
 */
export function nextAfter(spec: ScheduleSpec, after: Instant): Instant | null {
  switch (spec.type) {
    case "cron":
      return remembered(spec, after, () => {
        const fire = nextCronFireOf(spec, after);
        return fire === null ? null : instant(fire.at);
      });
    case "once":
      return spec.runAt > after ? spec.runAt : null;
    case "interval":
      return nextIntervalAfter(spec, after);
    case "rrule":
      return remembered(spec, after, () => nextRRuleInstanceOf(spec, after)?.at ?? null);
    default:
      return assertNever(spec);
  }
}

/** One answer of `nextAfter`. */
interface Answer {
  readonly after: Instant;
  readonly next: Instant | null;
}

/**
 * The last two answers of `nextAfter` for each cron and rrule schedule (a parsed schedule never changes,
 * and the stores keep a task's parsed definition from one admission to the next). An admission asks for
 * the nominal time after the task's watermark, the one after that (its jitter's bound, and where the
 * next admission starts) and then that one again (the task's next fire): one cron search per admission
 * instead of three (docs/semantics.md#the-life-of-an-occurrence).
 */
const answers = new WeakMap<ScheduleSpec, readonly [Answer, Answer | undefined]>();

function remembered(
  spec: ScheduleSpec,
  after: Instant,
  search: () => Instant | null,
): Instant | null {
  const held = answers.get(spec);
  if (held !== undefined) {
    if (held[0].after === after) return held[0].next;
    if (held[1]?.after === after) return held[1].next;
  }
  const next = search();
  answers.set(spec, [{ after, next }, held?.[0]]);
  return next;
}
