/**
 * The nominal times around an instant, for `explain` (docs/semantics.md#explain): the last one at or
 * before it, the next one that can fire, and the fire DST suppressed between them. Also when the service
 * may stop paging the history. explain.ts picks the decision and words the answer.
 */
import { jitteredFireAt } from "./occurrence.js";
import type { Run } from "./run.js";
import { describeOccurrences, excludedAt, nextAfter } from "./schedule/schedule-spec.js";
import type {
  DescribedOccurrence,
  DstNote,
  ExclusionHit,
  ScheduleSpec,
  SuppressedFire,
} from "./schedule/schedule-spec.js";
import type { Task } from "./task.js";
import { DAY_MS, MINUTE_MS, instant } from "./time.js";
import type { Instant } from "./time.js";

/** How far before the instant the last nominal time is looked for: 8 days, then a year, then 4 years. */
export const EXPLAIN_SEARCH_WINDOWS_MS: readonly number[] = [
  8 * DAY_MS,
  400 * DAY_MS,
  1470 * DAY_MS,
];

/** A manual or backfill run this close to the instant is "around" it. */
export const EXPLAIN_NEARBY_MS = MINUTE_MS;

/** The service reads at most this many history rows looking for the decision. */
export const EXPLAIN_MAX_HISTORY_ROWS = 5000;

/** One nominal time, with its jittered fire time, local wall time and what DST did to it. */
export interface NominalOccurrence {
  readonly scheduledFor: Instant;
  readonly fireAt: Instant;
  /** `YYYY-MM-DDTHH:MM:SS` in the schedule's zone (an interval's `timezone`, else UTC). */
  readonly wall: string;
  readonly offset: string;
  readonly note: DstNote | null;
  /** The cron expression that produced it (the first in the order written); null for others. */
  readonly rule: string | null;
  /** The item of `exclude` it falls on (it does not fire), or null. */
  readonly exclusion: ExclusionHit | null;
}

/** The nominal times around an instant. */
export interface ExplainWindow {
  /** The last nominal time at or before the instant (within 4 years), or null. */
  readonly occurrence: NominalOccurrence | null;
  /** The first nominal time after the instant (and the task's creation), or null when the schedule has ended. */
  readonly next: NominalOccurrence | null;
  /** The latest fire DST suppressed after `occurrence` and at or before the instant. */
  readonly suppressed: SuppressedFire | null;
}

/** The last nominal time at or before `at`: a binary search on `nextAfter`, which is monotone. */
export function lastNominalAtOrBefore(spec: ScheduleSpec, at: Instant): Instant | null {
  for (const width of EXPLAIN_SEARCH_WINDOWS_MS) {
    let low = at - width;
    const first = nextAfter(spec, instant(low));
    if (first === null || first > at) continue;
    // Invariant: nextAfter(low) <= at < nextAfter(high) (or null).
    let high: number = at;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      const fire = nextAfter(spec, instant(middle));
      if (fire !== null && fire <= at) low = middle;
      else high = middle;
    }
    return nextAfter(spec, instant(low));
  }
  return null;
}

function nominal(task: Task, described: DescribedOccurrence): NominalOccurrence {
  return {
    scheduledFor: described.at,
    fireAt: jitteredFireAt({
      taskId: task.id,
      scheduledFor: described.at,
      jitterMs: task.schedule.jitterMs,
      nextNominal: nextAfter(task.schedule, described.at),
    }),
    wall: described.wall,
    offset: described.offset,
    note: described.note,
    rule: described.rule,
    exclusion: described.exclusion ?? excludedAt(task.schedule, described.at),
  };
}

/**
 * The nominal times around `at` and what DST did between them. The next one is the first after `at` that
 * can fire: nominal times at or before the task's creation never do.
 */
export function explainWindow(task: Task, at: Instant): ExplainWindow {
  const spec = task.schedule;
  const nextFrom = at > task.createdAt ? at : task.createdAt;
  const upcoming = (described: DescribedOccurrence | undefined): NominalOccurrence | null => {
    if (described !== undefined && described.at > nextFrom && described.exclusion === null) {
      return nominal(task, described);
    }
    const [first] = describeOccurrences(spec, nextFrom, 1);
    return first === undefined ? null : nominal(task, first);
  };
  const last = lastNominalAtOrBefore(spec, at);
  if (last === null) {
    const [following] = describeOccurrences(spec, at, 1);
    return { occurrence: null, next: upcoming(following), suppressed: null };
  }
  // Nominal times, excluded ones included: an excluded occurrence is explained, not skipped over.
  const [current, following] = describeOccurrences(spec, instant(last - 1), 2, { nominal: true });
  const suppressed = (following?.suppressedBefore ?? []).filter((s) => s.at > last && s.at <= at);
  return {
    occurrence: current === undefined ? null : nominal(task, current),
    next: upcoming(following),
    suppressed: suppressed.at(-1) ?? null,
  };
}

/** The oldest instant the history must reach: the occurrence, or a minute before `at`. */
function historyFloor(window: ExplainWindow, at: Instant): number {
  const nearby = at - EXPLAIN_NEARBY_MS;
  const occurrence = window.occurrence?.scheduledFor;
  return occurrence === undefined ? nearby : Math.min(occurrence, nearby);
}

/**
 * Whether paging the history (newest first) may stop after `run`: a scheduled decision older than the
 * window. Scheduled decisions never overlap, so a `missed` range covering the occurrence is this row or a
 * newer one.
 */
export function historyReachedWindow(run: Run, window: ExplainWindow, at: Instant): boolean {
  return run.trigger === "scheduled" && run.scheduledFor < historyFloor(window, at);
}
