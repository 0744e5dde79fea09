/**
 * A task its exclusions hold still (docs/schedules.md#when-everything-left-is-excluded): not ended, no
 * `end_at`, `max_runs` not reached, yet every nominal time it has left falls on an excluded date, so it
 * has no `next_run_at` and will not fire. Creating or editing such a schedule is refused; a task gets
 * here when a calendar it names is edited. Its status stays (nothing decided it ended): it fires again
 * when a calendar it names, or its schedule, leaves a date free. Explain and the calendar's put say so.
 */
import type { ExclusionHit } from "./schedule/schedule-spec.js";
import { excludedAt, nextAfter, nextOccurrenceAfter } from "./schedule/schedule-spec.js";
import type { Task } from "./task.js";
import { isTerminalTaskStatus } from "./task.js";
import type { Instant } from "./time.js";

/** The first of the excluded nominal times the task has left, and the item that excludes it. */
export interface ExclusionStall {
  readonly next: Instant;
  readonly exclusion: ExclusionHit;
}

/** Whether `task` is held still by its exclusions, and by which first item; null when it is not. */
export function exclusionStall(task: Task): ExclusionStall | null {
  const spec = task.schedule;
  // Only a task without a next_run_at can be held still: the search below then runs once, on a rare task.
  if (task.nextRunAt !== null || isTerminalTaskStatus(task.status) || spec.endAt !== null) {
    return null;
  }
  if (spec.maxRuns !== null && task.admittedCount >= spec.maxRuns) return null;
  const next = nextAfter(spec, task.decidedThrough);
  // By nominal time: an occurrence decided already is not a fire left.
  if (next === null || nextOccurrenceAfter(spec, task.decidedThrough) !== null) return null;
  const exclusion = excludedAt(spec, next);
  return exclusion === null ? null : { next, exclusion };
}
