/**
 * The `not fired:` lines of the commands that list fires (`punctual next`, `punctual tasks preview`):
 * the wall times DST or the days to skip suppressed before a fire, one line each, or one line for a
 * run of three or more of the same kind.
 */
import { assertNever } from "../domain/errors.js";
import type { SuppressedKind } from "../domain/schedule/describe-occurrences.js";

/** One suppressed wall time, as the lines need it. */
export interface NotFired {
  readonly kind: SuppressedKind;
  /** The instant, RFC 3339 (shown for a repeated wall time, which names two instants). */
  readonly at: string;
  /** `YYYY-MM-DDTHH:MM:SS` on the zone's wall clock. */
  readonly wall: string;
  /** The item of `exclude` that excluded it, in words (kind `excluded`), else null. */
  readonly exclusion: string | null;
}

function reason(kind: SuppressedKind): string {
  switch (kind) {
    case "overlap_repeat":
      return "repeated by DST: fixed-time schedules fire on the first pass only";
    case "gap_skipped":
      return "does not exist: clocks jump forward";
    case "jump_skipped":
      return "does not exist: the zone changed its clock by more than 3 hours; not caught up";
    case "excluded":
      return "excluded";
    default:
      return assertNever(kind);
  }
}

/** The reason of one suppressed fire: an exclusion names its item. */
function reasonOf(fire: NotFired): string {
  return fire.exclusion === null ? reason(fire.kind) : `excluded: ${fire.exclusion}`;
}

/** One line per suppressed fire, or one per run of three or more of the same kind. */
export function notFiredLines(fires: readonly NotFired[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i < fires.length;) {
    const first = fires[i];
    if (first === undefined) break;
    let end = i + 1;
    while (fires[end]?.kind === first.kind) end++;
    const last = fires[end - 1] ?? first;
    const wall = (fire: NotFired): string => fire.wall.replace("T", " ");
    const run = end - i;
    if (run >= 3) {
      // A run excluded by one item says which; one of several items says "excluded".
      const reasons = new Set(fires.slice(i, end).map(reasonOf));
      const why = reasons.size === 1 ? reasonOf(first) : reason(first.kind);
      lines.push(`  not fired: ${run} wall times from ${wall(first)} to ${wall(last)} (${why})`);
    } else {
      for (const fire of fires.slice(i, end)) {
        const at = fire.kind === "overlap_repeat" ? ` at ${fire.at}` : "";
        lines.push(`  not fired: ${wall(fire)}${at} (${reasonOf(fire)})`);
      }
    }
    i = end;
  }
  return lines;
}
