/**
 * Conversions between instants and wall times of a zone, and the classification of transitions into
 * DST-sized gaps and overlaps (at most 3 hours) versus clock changes (docs/schedules.md#cron).
 */
import { MS_PER_HOUR } from "./civil-time.js";
import type { Transition } from "./zone-offsets.js";
import { offsetAt, transitionsBetween } from "./zone-offsets.js";

/** Transitions larger than this are a change of clock (a skipped or repeated day), not DST. */
export const MAX_DST_SHIFT_MS = 3 * MS_PER_HOUR;

/** How far a wall time can be from its instant: offsets stay within UTC-12:00 and UTC+14:00. */
const MAX_OFFSET_SPREAD_MS = 30 * MS_PER_HOUR;

/** Wall milliseconds of an instant in a zone. */
export function wallOf(zone: string, at: number): number {
  return at + offsetAt(zone, at);
}

/** Clocks jump forward by at most 3 hours: the skipped wall times fire at the transition. */
export function isDstGap(transition: Transition): boolean {
  const shift = transition.offsetAfter - transition.offsetBefore;
  return shift > 0 && shift <= MAX_DST_SHIFT_MS;
}

/** Clocks fall back by at most 3 hours: the repeated wall times fire once for fixed-time jobs. */
export function isDstOverlap(transition: Transition): boolean {
  const shift = transition.offsetBefore - transition.offsetAfter;
  return shift > 0 && shift <= MAX_DST_SHIFT_MS;
}

/** Where a wall time falls in a zone: its instants in order (0, 1 or 2), and the gap it falls in. */
export interface WallResolution {
  readonly instants: readonly number[];
  /** The forward transition whose skipped wall times contain the wall time, when it does not exist. */
  readonly gap: Transition | null;
}

/** Every instant whose wall time in `zone` equals `wall`. */
export function resolveWall(zone: string, wall: number): WallResolution {
  const from = wall - MAX_OFFSET_SPREAD_MS;
  const transitions = transitionsBetween(zone, from, wall + MAX_OFFSET_SPREAD_MS);
  const offsets = new Set([offsetAt(zone, from), ...transitions.map((t) => t.offsetAfter)]);
  const instants = [...offsets]
    .map((offset) => wall - offset)
    .filter((at) => offsetAt(zone, at) === wall - at)
    .sort((a, b) => a - b);
  const gap =
    instants.length > 0
      ? null
      : (transitions.find((t) => t.at + t.offsetBefore <= wall && wall < t.at + t.offsetAfter) ??
        null);
  return { instants: [...new Set(instants)], gap };
}
