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
import { MAX_MOVE_DAYS, lastNominalIn, movedFireOf } from "./moved-occurrence.js";
import type { OccurrenceFire } from "./moved-occurrence.js";
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
    // Unreachable by type (the switch is exhaustive): not measured.
    /* v8 ignore next 2 */
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
    // Unreachable by type (the switch is exhaustive): not measured.
    /* v8 ignore next 2 */
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
  // Midnight fell in a forward jump: the day starts at the transition (a wall time that resolves to no
  // instant is in a gap, so the fallback is never taken and not measured).
  /* v8 ignore next */
  return gap?.at ?? day * MS_PER_DAY;
}

/**
 * The schedule's next occurrence after nominal time `after` that fires (its nominal time, and where it
 * fires when it was moved: moved-occurrence.ts), or null when none is found within `horizonDays` local
 * days (validation asks for 30 years only: each excluded occurrence costs a search, and exclusions that
 * leave nothing would walk the whole horizon). Excluded dates are jumped over (a range whole), so a long
 * holiday costs one search per stretch: only the first occurrence of a stretch can move to the date
 * before it, and only the last to the date after it.
 */
export function nextOccurrenceAfter(
  spec: ScheduleSpec,
  after: Instant,
  horizonDays = EXCLUSION_HORIZON_DAYS,
): OccurrenceFire | null {
  const exclusions = exclusionsOf(spec);
  let next = nextAfter(spec, after);
  if (exclusions.length === 0) return next === null ? null : fires(next);
  const zone = exclusionZoneOf(spec);
  const lastDay = localDayOf(wallOf(zone, after)) + horizonDays;
  // A once schedule has no exclusions (it returned above): its side of the type's narrowing is not measured.
  /* v8 ignore next */
  const direction = spec.type === "once" ? undefined : spec.onExcluded;
  while (next !== null) {
    const day = localDayOf(wallOf(zone, next));
    if (exclusionOn(exclusions, day) === null) return fires(next);
    if (direction === "previous") {
      const moved = movedFireOf(spec, next);
      if (moved !== null) return { scheduledFor: next, fireAt: moved, moved: true };
    }
    const open = nextDayNotExcluded(exclusions, day + 1, lastDay);
    if (open === null) return null;
    const from = Math.max(next, startOfLocalDay(zone, open) - 1);
    if (direction === "next") {
      const last = lastNominalIn(spec, instant(next - 1), instant(from));
      // `next` itself is in (next - 1, from]: `last` is never null here, only typed so (not measured).
      /* v8 ignore next 2 */
      const moved = last === null ? null : movedFireOf(spec, last);
      if (last !== null && moved !== null)
        return { scheduledFor: last, fireAt: moved, moved: true };
    }
    next = nextAfter(spec, instant(from));
  }
  return null;
}

function fires(at: Instant): OccurrenceFire {
  return { scheduledFor: at, fireAt: at, moved: false };
}

/**
 * The schedule's next fire strictly after instant `after`: the fire time of the first occurrence that
 * fires after it (a moved occurrence at its moved instant), or null (see `nextOccurrenceAfter`).
 */
export function nextFireAfter(
  spec: ScheduleSpec,
  after: Instant,
  horizonDays = EXCLUSION_HORIZON_DAYS,
): Instant | null {
  return nextFireOccurrenceAfter(spec, after, horizonDays)?.fireAt ?? null;
}

/** The first occurrence whose fire time is strictly after instant `after` (see `nextFireAfter`). */
export function nextFireOccurrenceAfter(
  spec: ScheduleSpec,
  after: Instant,
  horizonDays = EXCLUSION_HORIZON_DAYS,
): OccurrenceFire | null {
  const direction = spec.type === "once" ? undefined : spec.onExcluded;
  if (direction === "next") {
    // Only the last occurrence at or before `after` can fire after it (a move stays before the next one).
    const span = (MAX_MOVE_DAYS + 2) * MS_PER_DAY;
    const last = lastNominalIn(spec, instant(after - span), after);
    const moved = last === null ? null : movedFireOf(spec, last);
    if (last !== null && moved !== null && moved > after) {
      return { scheduledFor: last, fireAt: moved, moved: true };
    }
  }
  let occurrence = nextOccurrenceAfter(spec, after, horizonDays);
  // A move to the previous date can land at or before `after`: the occurrence after it fires later.
  while (occurrence !== null && occurrence.fireAt <= after) {
    occurrence = nextOccurrenceAfter(spec, occurrence.scheduledFor, horizonDays);
  }
  return occurrence;
}

/**
 * When admission next has work, `after` being the nominal time decided through: the next occurrence's
 * fire (the excluded nominal times before it are recorded then),
 * or, when only excluded nominal times remain before `end_at`, `end_at` itself (they are recorded and
 * the schedule ends). Null when nothing remains to decide.
 */
export function nextDueAfter(spec: ScheduleSpec, after: Instant): Instant | null {
  const fire = nextOccurrenceAfter(spec, after)?.fireAt ?? null;
  if (fire !== null || spec.endAt === null) return fire;
  const excluded = nextAfter(spec, after);
  return excluded === null ? null : instant(Math.max(excluded, spec.endAt));
}
