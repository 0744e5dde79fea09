/**
 * The instants of an RFC 5545 recurrence in its zone (docs/schedules.md#rrule). Rules expand on the wall
 * clock (rrule-expand.ts); each wall time becomes an instant by RFC 5545 section 3.3.5: a wall time that
 * exists once is that instant, a repeated one its first occurrence, and one that does not exist (a gap)
 * is read with the UTC offset in force before the gap (so 02:30 in a one-hour gap is 03:30 after it).
 * Two wall times that land on the same instant are one instance.
 *
 * Gap times land later than the wall times just after the gap, so instants are not in the order of the
 * wall times there: the search takes the least instant among the wall times that can still beat it.
 */
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { MS_PER_DAY } from "./civil-time.js";
import type { RuleWalk } from "./rrule-expand.js";
import { nextRuleWall } from "./rrule-expand.js";
import type { DateTimeValue } from "./rrule-parse.js";
import { parseRecurrenceText } from "./rrule-parse.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import type { RRuleSchedule } from "./schedule-types.js";
import { resolveWall, wallOf } from "./wall-clock.js";
import { offsetAt, previousTransition } from "./zone-offsets.js";

/** Offsets stay within a day of UTC and gaps within a day: walls this far past an instant map after it. */
const WALL_SLACK_MS = 2 * MS_PER_DAY;

/** A search looks no further than one Gregorian cycle, as cron does. */
export const RRULE_SEARCH_HORIZON_MS = 146_097 * MS_PER_DAY;

/** The last instant a schedule is evaluated at (the end of the year 9999). */
const LAST_INSTANT = 253_402_300_799_000;

/** RFC 5545 3.3.5: the instant of a wall time in `zone` (first occurrence; a gap read with the offset before it). */
export function instantOfWall(zone: string, wall: number): number {
  const { instants, gap } = resolveWall(zone, wall);
  const [first] = instants;
  if (first !== undefined) return first;
  if (gap !== null) return wall - gap.offsetBefore;
  return wall - offsetAt(zone, wall);
}

/** One instance: its instant and the wall time the rule named (different from the instant's own in a gap). */
export interface RRuleInstance {
  readonly at: Instant;
  /** The nominal wall time; null for an RDATE. */
  readonly wall: number | null;
}

function firstAfter(sorted: readonly number[], after: number): number | null {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((sorted[mid] ?? 0) > after) high = mid;
    else low = mid + 1;
  }
  return sorted[low] ?? null;
}

function isExcluded(spec: RRuleSchedule, at: number): boolean {
  return spec.exdates.length > 0 && firstAfter(spec.exdates, at - 1) === at;
}

/** A rule's next wall time after `w` whose instant is within its UNTIL. */
function nextRuleCandidate(
  spec: RRuleSchedule,
  rule: RecurrenceRule,
  w: number,
  limitWall: number,
): number | null {
  const walk: RuleWalk = { rule, dtstartWall: spec.dtstartWall };
  if (rule.untilAt === null) return nextRuleWall(walk, w, limitWall);
  // A wall time past UNTIL's own (or, in an overlap, past the repeated hour) has a later instant.
  const zone = spec.timezone;
  const untilWall =
    rule.untilAt +
    Math.max(offsetAt(zone, rule.untilAt), offsetAt(zone, rule.untilAt - WALL_SLACK_MS));
  const bound = Math.min(limitWall, untilWall);
  let wall = nextRuleWall(walk, w, bound);
  while (wall !== null && instantOfWall(spec.timezone, wall) > rule.untilAt) {
    wall = nextRuleWall(walk, wall, bound);
  }
  return wall;
}

/** The least wall time after `w` among all rules. */
function nextWall(spec: RRuleSchedule, w: number, limitWall: number): number | null {
  let best: number | null = null;
  for (const rule of spec.rules) {
    const wall = nextRuleCandidate(spec, rule, w, best ?? limitWall);
    if (wall !== null && (best === null || wall < best)) best = wall;
  }
  return best;
}

/** The lowest wall time whose instant can be after `after`: earlier than its own only in a gap just passed. */
function lowestWall(zone: string, after: number): number {
  const own = wallOf(zone, after);
  const previous = previousTransition(zone, after);
  if (previous === null || previous.offsetAfter <= previous.offsetBefore) return own;
  const shift = previous.offsetAfter - previous.offsetBefore;
  return after < previous.at + shift ? Math.min(own, after + previous.offsetBefore) : own;
}

/**
 * The recurrence's first instance strictly after `after` and no later than `until` (the union of its
 * rules and RDATEs, minus EXDATEs), not minding `start_at` and `end_at`; null when there is none.
 */
export function nextRRuleInstance(
  spec: RRuleSchedule,
  after: number,
  until = after + RRULE_SEARCH_HORIZON_MS,
): RRuleInstance | null {
  const zone = spec.timezone;
  const limit = Math.min(until, LAST_INSTANT);
  if (after >= limit) return null;
  let best: RRuleInstance | null = null;
  let rdateAfter = after;
  for (;;) {
    const rdate = firstAfter(spec.rdates, rdateAfter);
    if (rdate === null || rdate > limit) break;
    if (!isExcluded(spec, rdate)) {
      best = { at: instant(rdate), wall: null };
      break;
    }
    rdateAfter = rdate;
  }
  const limitWall = limit + WALL_SLACK_MS;
  let w = lowestWall(zone, after);
  for (;;) {
    const wall = nextWall(spec, w, best === null ? limitWall : wallOf(zone, best.at));
    if (wall === null) break;
    if (best !== null && wall > wallOf(zone, best.at)) break;
    w = wall;
    const at = instantOfWall(zone, wall);
    if (at <= after || at > limit || isExcluded(spec, at)) continue;
    if (best === null || at < best.at) best = { at: instant(at), wall };
  }
  return best;
}

/**
 * The wall time of a rule's COUNT-th instance (docs/schedules.md#rrule: COUNT counts distinct instants,
 * so two wall times DST maps to one instant count once), or `dtstartWall - 1` when it has none.
 */
export function lastWallOfCount(
  zone: string,
  dtstartWall: number,
  rule: RecurrenceRule,
  count: number,
): number {
  const walk: RuleWalk = { rule: { ...rule, lastWall: null }, dtstartWall };
  const limit = Math.min(dtstartWall + RRULE_SEARCH_HORIZON_MS, LAST_INSTANT + WALL_SLACK_MS);
  const seen = new Set<number>();
  let last = dtstartWall - 1;
  let w = dtstartWall - 1;
  while (seen.size < count) {
    const wall = nextRuleWall(walk, w, limit);
    if (wall === null) break;
    seen.add(instantOfWall(zone, wall));
    last = wall;
    w = wall;
  }
  return last;
}

/** The parts of an `RRuleSchedule` its text decides. */
export type RecurrenceParts = Pick<
  RRuleSchedule,
  "text" | "timezone" | "dtstartWall" | "rules" | "rdates" | "exdates"
>;

function sortedInstants(values: readonly number[]): Instant[] {
  return [...new Set(values)].sort((a, b) => a - b).map(instant);
}

/**
 * The recurrence text read and resolved: RDATE and EXDATE as instants (a value without TZID or Z is read
 * in DTSTART's zone), each COUNT turned into the wall time of its last instance.
 */
export function resolveRecurrence(
  text: string,
): { ok: true; value: RecurrenceParts } | { ok: false; problems: string[] } {
  const parsed = parseRecurrenceText(text);
  if (!parsed.ok) return parsed;
  const { zone, dtstartWall } = parsed.value;
  const toInstant = (v: DateTimeValue): number =>
    v.utc ? v.wall : instantOfWall(v.zone ?? zone, v.wall);
  const rules = parsed.value.rules.map((rule) => ({
    ...rule,
    lastWall:
      rule.count === null
        ? null
        : lastWallOfCount(zone, dtstartWall, { ...rule, lastWall: null }, rule.count),
  }));
  return {
    ok: true,
    value: {
      text: text.replace(/\r\n/g, "\n").trim(),
      timezone: zone,
      dtstartWall,
      rules,
      rdates: sortedInstants(parsed.value.rdates.map(toInstant)),
      exdates: sortedInstants(parsed.value.exdates.map(toInstant)),
    },
  };
}

/** The rules' wall times in `[fromWall, toWall)`, at most `max` of them, in order (UNTIL not applied). */
export function rruleWallsBetween(
  spec: RRuleSchedule,
  fromWall: number,
  toWall: number,
  max: number,
): number[] {
  const walls: number[] = [];
  let w = fromWall - 1;
  while (walls.length < max) {
    let next: number | null = null;
    for (const rule of spec.rules) {
      const wall = nextRuleWall({ rule, dtstartWall: spec.dtstartWall }, w, toWall - 1);
      if (wall !== null && (next === null || wall < next)) next = wall;
    }
    if (next === null) break;
    walls.push(next);
    w = next;
  }
  return walls;
}
