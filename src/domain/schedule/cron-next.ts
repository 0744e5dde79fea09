/**
 * The next fire of a cron expression in a zone under the DST rule of docs/schedules.md#cron. Works one segment of
 * constant UTC offset at a time: matches are searched on the segment's wall clock, then the transition
 * that ends the segment decides gap fires (fixed-time jobs) and repeated wall times (overlaps).
 */
import { MS_PER_DAY, MS_PER_SECOND, floorSecond, wallMs } from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { firstMatchingWall } from "./cron-matcher.js";
import { isDstGap, isDstOverlap } from "./wall-clock.js";
import {
  MAX_YEAR,
  MIN_YEAR,
  nextTransitionInYear,
  offsetAt,
  previousTransition,
  utcYearEndOf,
} from "./zone-offsets.js";

/** One fire: its instant and wall time, and for a gap fire the first matching wall time of the gap. */
export interface CronFire {
  readonly at: number;
  readonly wall: number;
  /** Set when a fixed-time job's wall time did not exist and the fire moved to the transition. */
  readonly gapWall: number | null;
  /** The index of the expression among a schedule's rules (as passed in; 0 by default). */
  readonly rule: number;
}

/**
 * Lower bound of the distance between an instant's wall time and a wall time searched from an earlier
 * instant: offsets stay within a day of UTC, so two days is a safe margin.
 */
const WALL_SLACK_MS = 2 * MS_PER_DAY;

/** Searches stay within the years 1 to 9999, where calendar and zone data are exact. */
const FIRST_SEARCHED_AT = wallMs(MIN_YEAR, 1, 2);
const LAST_SEARCHED_AT = wallMs(MAX_YEAR, 12, 31);

/** One search of `nextCronFire` and its answer. */
interface Searched {
  readonly zone: string;
  readonly after: number;
  readonly until: number;
  readonly rule: number;
  readonly fire: CronFire | null;
}

/**
 * The last searches of each expression, the most recent first. Parsed expressions are shared by their
 * text (`parseCron`), so the tasks of one expression due together (a thousand same-second crons) ask the
 * same questions, their next fire after the same instants: one search answers them all instead of one
 * each. Pure: an answer depends on its arguments only, and a fire is never changed once made.
 */
const searched = new WeakMap<CronExpression, Searched[]>();

/**
 * Searches kept per expression. A task whose parsed schedule remembers nothing yet (its first admission
 * on this replica, or after the other replica admitted it: next-after.ts) asks three questions in turn,
 * after its watermark, after the fire due and after the one following (admission-due.ts); with fewer
 * than three kept, the tasks of one expression asking them one after the other evict each other's
 * answers and every task searches three times (docs/decisions.md#a-cron-search-is-kept-for-four-questions).
 */
const SEARCHES_KEPT = 4;

/**
 * The first fire strictly after `after` and before `until` (exclusive bound on the search, not on the
 * result), or `null` when there is none.
 */
export function nextCronFire(
  expression: CronExpression,
  zone: string,
  after: number,
  until: number,
  rule = 0,
): CronFire | null {
  let held = searched.get(expression);
  if (held === undefined) {
    held = [];
    searched.set(expression, held);
  }
  for (let i = 0; i < held.length; i++) {
    const one = held[i] as Searched;
    if (!sameSearch(one, zone, after, until, rule)) continue;
    // Most recent first: a question asked again stays kept the longest.
    if (i > 0) {
      held.splice(i, 1);
      held.unshift(one);
    }
    return one.fire;
  }
  const fire = searchCronFire(expression, zone, after, until, rule);
  held.unshift({ zone, after, until, rule, fire });
  if (held.length > SEARCHES_KEPT) held.pop();
  return fire;
}

function sameSearch(
  one: Searched,
  zone: string,
  after: number,
  until: number,
  rule: number,
): boolean {
  return one.after === after && one.until === until && one.rule === rule && one.zone === zone;
}

function searchCronFire(
  expression: CronExpression,
  zone: string,
  after: number,
  until: number,
  rule: number,
): CronFire | null {
  if (after < FIRST_SEARCHED_AT || after > LAST_SEARCHED_AT) return null;
  let t = floorSecond(after);
  let first = true;
  while (t < Math.min(until, LAST_SEARCHED_AT)) {
    const offset = offsetAt(zone, t);
    let lowerWall = first ? t + offset + MS_PER_SECOND : t + offset;
    // Jump over long stretches without a matching wall time (rare dates, never-firing expressions),
    // so that only the years near a match have their transitions computed.
    const ahead = firstMatchingWall(expression, lowerWall - WALL_SLACK_MS, until + WALL_SLACK_MS);
    if (ahead === null) return null;
    const jumpTo = floorSecond(ahead - 3 * MS_PER_DAY);
    if (jumpTo > t + MS_PER_DAY) {
      t = jumpTo;
      first = true;
      continue;
    }
    const transition = nextTransitionInYear(zone, t);
    const segmentEnd = transition?.at ?? utcYearEndOf(t);
    if (expression.fixedTime) {
      // docs/schedules.md#cron: in an overlap a fixed-time job fires on the first pass only, so the repeated wall
      // times (those before the previous offset's wall clock at the transition) are excluded.
      const previous = previousTransition(zone, t);
      if (previous !== null && isDstOverlap(previous)) {
        lowerWall = Math.max(lowerWall, previous.at + previous.offsetBefore);
      }
    }
    const upperWall = segmentEnd + offset;
    if (lowerWall < upperWall) {
      const wall = firstMatchingWall(expression, lowerWall, upperWall);
      if (wall !== null) return { at: wall - offset, wall, gapWall: null, rule };
    }
    if (transition !== null && expression.fixedTime && isDstGap(transition)) {
      // docs/schedules.md#cron: a fixed-time job's wall times inside a gap collapse into one fire at the transition.
      const gapWall = firstMatchingWall(
        expression,
        transition.at + offset,
        transition.at + transition.offsetAfter,
      );
      if (gapWall !== null) {
        return { at: transition.at, wall: transition.at + transition.offsetAfter, gapWall, rule };
      }
    }
    t = segmentEnd;
    first = false;
  }
  return null;
}
