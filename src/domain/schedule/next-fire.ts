/**
 * Exclusions applied to a schedule's nominal times (docs/schedules.md#exclude): whether a nominal time
 * falls on an excluded local date of the schedule's zone, the next nominal time that fires, and the next
 * instant admission has work at. An excluded nominal time is still an occurrence: admission records it.
 */
import { assertNever } from "../errors.js";
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { MS_PER_DAY } from "./civil-time.js";
import type { Exclusion, ExclusionHit } from "./exclusions.js";
import { exclusionOn, localDayOf, nextDayNotExcluded } from "./exclusions.js";
import { nextAfter } from "./next-after.js";
import type { ScheduleSpec } from "./schedule-types.js";
import { resolveWall, wallOf } from "./wall-clock.js";

/** Excluded days are skipped at most this far ahead: one Gregorian cycle, as cron searches. */
export const EXCLUSION_HORIZON_DAYS = 146_097;

/** The schedule's exclusions (a once schedule has none). */
export function exclusionsOf(spec: ScheduleSpec): readonly Exclusion[] {
  switch (spec.type) {
    case "cron":
    case "interval":
    case "rrule":
      return spec.exclude;
    case "once":
      return [];
    default:
      return assertNever(spec);
  }
}

/** The zone whose local dates exclusions name: the cron zone, an interval's `timezone`, or UTC. */
export function exclusionZoneOf(spec: ScheduleSpec): string {
  switch (spec.type) {
    case "cron":
    case "once":
    case "rrule":
      return spec.timezone;
    case "interval":
      return spec.timezone ?? "UTC";
    default:
      return assertNever(spec);
  }
}

/** Which exclusion item (if any) the local date of nominal time `at` falls on. */
export function excludedAt(spec: ScheduleSpec, at: Instant): ExclusionHit | null {
  const exclusions = exclusionsOf(spec);
  if (exclusions.length === 0) return null;
  return exclusionOn(exclusions, localDayOf(wallOf(exclusionZoneOf(spec), at)));
}

/** The first instant whose wall time in `zone` is at or after local midnight of `day`. */
function startOfLocalDay(zone: string, day: number): number {
  const { instants, gap } = resolveWall(zone, day * MS_PER_DAY);
  const [first] = instants;
  if (first !== undefined) return first;
  // Midnight fell in a forward jump: the day starts at the transition.
  return gap?.at ?? day * MS_PER_DAY;
}

/**
 * The schedule's next nominal time strictly after `after` that is not excluded (the next fire), or null
 * when none is found within `horizonDays` local days (validation asks for 30 years only: each excluded
 * occurrence costs a search, and exclusions that leave nothing would walk the whole horizon).
 * Excluded dates are jumped over (a range whole), so a long holiday costs one search per stretch.
 */
export function nextFireAfter(
  spec: ScheduleSpec,
  after: Instant,
  horizonDays = EXCLUSION_HORIZON_DAYS,
): Instant | null {
  const exclusions = exclusionsOf(spec);
  let next = nextAfter(spec, after);
  if (exclusions.length === 0) return next;
  const zone = exclusionZoneOf(spec);
  const lastDay = localDayOf(wallOf(zone, after)) + horizonDays;
  while (next !== null) {
    const day = localDayOf(wallOf(zone, next));
    if (exclusionOn(exclusions, day) === null) return next;
    const open = nextDayNotExcluded(exclusions, day + 1, lastDay);
    if (open === null) return null;
    const from = Math.max(next, startOfLocalDay(zone, open) - 1);
    next = nextAfter(spec, instant(from));
  }
  return null;
}

/**
 * When admission next has work: the next fire (the excluded nominal times before it are recorded then),
 * or, when only excluded nominal times remain before `end_at`, `end_at` itself (they are recorded and
 * the schedule ends). Null when nothing remains to decide.
 */
export function nextDueAfter(spec: ScheduleSpec, after: Instant): Instant | null {
  const fire = nextFireAfter(spec, after);
  if (fire !== null || spec.endAt === null) return fire;
  const excluded = nextAfter(spec, after);
  return excluded === null ? null : instant(Math.max(excluded, spec.endAt));
}
