/**
 * Which nominal times are due (docs/semantics.md#the-life-of-an-occurrence): after the task's
 * `decided_through` up to now, those that fire with their jittered fire times and the excluded ones
 * (docs/schedules.md#exclude) as stretches, each bounded per admission. admission.ts decides what
 * becomes of them.
 */
import { jitteredFireAt } from "./occurrence.js";
import { excludedAt, nextAfter } from "./schedule/schedule-spec.js";
import type { Task } from "./task.js";
import type { Instant } from "./time.js";

/** At most this many nominal times are examined per task per admission; the rest wait for the next. */
export const MAX_NOMINAL_PER_ADMISSION = 20_000;

/**
 * At most this many excluded nominal times are recorded per task per admission, as one record per
 * stretch: a per-second task's holiday (86,400) in one record, in about 50 ms of one pass (measured).
 */
export const MAX_EXCLUDED_PER_ADMISSION = 200_000;

/** A due nominal time that fires, with its jittered fire time. */
export interface Due {
  readonly scheduledFor: Instant;
  readonly fireAt: Instant;
}

/** Consecutive due nominal times on excluded dates. */
export interface ExcludedStretch {
  readonly from: Instant;
  readonly until: Instant;
  readonly count: number;
}

/**
 * The due nominal times after `decided_through` up to `now`: those that fire, with their jittered fire
 * times, and the excluded ones as stretches (both in order).
 */
export function collectDue(
  task: Task,
  now: Instant,
): { due: Due[]; excluded: ExcludedStretch[]; more: boolean; scheduleEnded: boolean } {
  const due: Due[] = [];
  const excluded: ExcludedStretch[] = [];
  let open: { from: Instant; until: Instant; count: number } | null = null;
  let excludedCount = 0;
  let current = nextAfter(task.schedule, task.decidedThrough);
  while (
    current !== null &&
    current <= now &&
    due.length < MAX_NOMINAL_PER_ADMISSION &&
    excludedCount < MAX_EXCLUDED_PER_ADMISSION
  ) {
    const following = nextAfter(task.schedule, current);
    if (excludedAt(task.schedule, current) !== null) {
      excludedCount++;
      if (open === null) open = { from: current, until: current, count: 1 };
      else {
        open.until = current;
        open.count++;
      }
    } else {
      if (open !== null) excluded.push(open);
      open = null;
      const fireAt = jitteredFireAt({
        taskId: task.id,
        scheduledFor: current,
        jitterMs: task.schedule.jitterMs,
        nextNominal: following,
      });
      due.push({ scheduledFor: current, fireAt });
    }
    current = following;
  }
  if (open !== null) excluded.push(open);
  return {
    due,
    excluded,
    more: current !== null && current <= now,
    scheduleEnded: current === null,
  };
}

/**
 * The excluded nominal times that lead the task's undecided ones, up to `now`, as one stretch (or null).
 */
export function leadingExcluded(task: Task, now: Instant): ExcludedStretch | null {
  let stretch: { from: Instant; until: Instant; count: number } | null = null;
  let current = nextAfter(task.schedule, task.decidedThrough);
  while (
    current !== null &&
    current <= now &&
    (stretch?.count ?? 0) < MAX_EXCLUDED_PER_ADMISSION &&
    excludedAt(task.schedule, current) !== null
  ) {
    stretch =
      stretch === null
        ? { from: current, until: current, count: 1 }
        : { from: stretch.from, until: current, count: stretch.count + 1 };
    current = nextAfter(task.schedule, current);
  }
  return stretch;
}
