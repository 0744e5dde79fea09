/**
 * Moved occurrences (docs/schedules.md#moved-occurrences): with `on_excluded` `previous` or `next`, an
 * occurrence whose local date is excluded fires instead on the nearest date before (or after) it that no
 * item excludes, at the same wall time. It keeps its identity: its `scheduled_for` stays the nominal
 * time, and the moved instant is its fire time.
 *
 * A move is bounded twice: the date is searched at most `MAX_MOVE_DAYS` days away, and the moved instant
 * must lie strictly between the occurrence's neighbouring nominal times (and inside `start_at`/`end_at`).
 * So fires keep the order of their occurrences, no two fires share an instant, and no moved occurrence
 * lands on one that exists; an occurrence that cannot move is skipped as with `skip`.
 */
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { MS_PER_DAY } from "./civil-time.js";
import { exclusionOn, localDayOf } from "./exclusions.js";
import type { Exclusion } from "./exclusions.js";
import { nextAfter } from "./next-after.js";
import type { ScheduleSpec } from "./schedule-types.js";
import { isDstGap, resolveWall, wallOf } from "./wall-clock.js";

/** A moved occurrence looks for a date not excluded at most this many days away. */
export const MAX_MOVE_DAYS = 31;

/** Where an occurrence fires: its nominal time, and the instant it fires at when it was moved. */
export interface OccurrenceFire {
  /** The occurrence's identity: its nominal time. */
  readonly scheduledFor: Instant;
  /** The instant it fires at: `scheduledFor`, or the moved instant. */
  readonly fireAt: Instant;
  /** True when the occurrence was moved off an excluded date. */
  readonly moved: boolean;
}

/** The exclusions, zone and direction of a schedule that moves occurrences, or null when it skips them. */
function moving(spec: ScheduleSpec): {
  readonly exclusions: readonly Exclusion[];
  readonly zone: string;
  readonly direction: 1 | -1;
} | null {
  if (spec.type === "once" || spec.onExcluded === undefined || spec.exclude.length === 0) {
    return null;
  }
  const zone = spec.type === "interval" ? (spec.timezone ?? "UTC") : spec.timezone;
  return { exclusions: spec.exclude, zone, direction: spec.onExcluded === "previous" ? -1 : 1 };
}

/**
 * The instant of `wall` in `zone` under the schedule's own DST rule: a repeated wall time is its first
 * instant; one that does not exist is, for an rrule, read with the offset before the gap (RFC 5545
 * 3.3.5), and for cron and interval the transition instant (a DST-sized gap; a skipped day has none).
 */
function instantOfWall(spec: ScheduleSpec, zone: string, wall: number): number | null {
  const { instants, gap } = resolveWall(zone, wall);
  const [first] = instants;
  if (first !== undefined) return first;
  // A wall time that resolves to no instant is in a gap: never null here, only typed so (not measured).
  /* v8 ignore next */
  if (gap === null) return null;
  if (spec.type === "rrule") return wall - gap.offsetBefore;
  return isDstGap(gap) ? gap.at : null;
}

/**
 * Where the occurrence at nominal time `at` fires when it is moved, or null when it is not moved (its
 * schedule skips excluded occurrences, its date is not excluded, or no move fits the bounds).
 * `neighbours` are its nominal neighbours when the caller knows them (computed otherwise): the one
 * before it only to reject a move quickly.
 */
export function movedFireOf(
  spec: ScheduleSpec,
  at: Instant,
  neighbours: { readonly previous?: Instant | null; readonly following?: Instant | null } = {},
): Instant | null {
  const how = moving(spec);
  if (how === null) return null;
  const wall = wallOf(how.zone, at);
  const day = localDayOf(wall);
  if (exclusionOn(how.exclusions, day) === null) return null;
  const { direction } = how;
  // A neighbour on the same date: the move would pass it.
  const near = direction === 1 ? neighbours.following : neighbours.previous;
  if (near !== undefined && near !== null && localDayOf(wallOf(how.zone, near)) === day) {
    return null;
  }
  let target: number | null = null;
  for (let step = 1; step <= MAX_MOVE_DAYS; step++) {
    if (exclusionOn(how.exclusions, day + direction * step) === null) {
      target = day + direction * step;
      break;
    }
  }
  if (target === null) return null;
  const moved = instantOfWall(spec, how.zone, wall + (target - day) * MS_PER_DAY);
  if (moved === null) return null;
  if (spec.startAt !== null && moved < spec.startAt) return null;
  if (spec.endAt !== null && moved > spec.endAt) return null;
  if (direction === 1) {
    const following =
      neighbours.following !== undefined ? neighbours.following : nextAfter(spec, at);
    return following === null || moved < following ? instant(moved) : null;
  }
  // No nominal time in [moved, at): the first one at or after the moved instant is this occurrence.
  return moved < at && nextAfter(spec, instant(moved - 1)) === at ? instant(moved) : null;
}

/**
 * The last nominal time in `(after, until]`, or null: found by halving, in about 40 searches however
 * dense the schedule (a per-second cron over a month has 2.6 million).
 */
export function lastNominalIn(spec: ScheduleSpec, after: Instant, until: Instant): Instant | null {
  const first = nextAfter(spec, after);
  if (first === null || first > until) return null;
  let last = first;
  let bound: number = until;
  for (;;) {
    const following = nextAfter(spec, last);
    if (following === null || following > bound) return last;
    const mid = last + Math.ceil((bound - last) / 2);
    const probe = nextAfter(spec, instant(mid - 1));
    if (probe !== null && probe <= bound) last = probe;
    else bound = mid - 1;
  }
}
