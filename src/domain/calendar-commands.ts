/**
 * What editing a calendar does to a task that names it (docs/schedules.md#calendars), as pure functions
 * run under the task's row lock: the excluded occurrences already due are recorded under the calendar
 * as it was, then the task takes the new snapshot and `next_run_at` is recomputed for the occurrences
 * not decided yet. Decided occurrences keep their decisions.
 */
import { excludedPrefix } from "./admission.js";
import type { Calendar } from "./calendar.js";
import { calendarStamps, withCalendar } from "./calendar.js";
import { newRunFromDecision } from "./new-run.js";
import type { NewRun } from "./new-run.js";
import { nextDueAfter } from "./schedule/schedule-spec.js";
import type { Task } from "./task.js";
import { isTerminalTaskStatus } from "./task.js";
import { threadScopeOf } from "./target.js";
import type { Instant } from "./time.js";

/** A task with the excluded occurrences that lead its undecided ones (up to `now`) recorded. */
export function settleExcluded(task: Task, now: Instant): { task: Task; newRuns: NewRun[] } {
  const prefix = isTerminalTaskStatus(task.status) ? null : excludedPrefix(task, now);
  if (prefix === null) return { task, newRuns: [] };
  const scope = { id: task.id, owner: task.owner, threadScope: threadScopeOf(task.target, task.owner) };
  return {
    task: { ...task, decidedThrough: prefix.until },
    newRuns: [newRunFromDecision(scope, prefix, now)],
  };
}

/**
 * The task holding `calendar`'s new snapshot, or null when it does not name the calendar or already
 * holds this version or a later one. `version` and `updated_at` stay: the task's own definition (the
 * calendar's name) has not changed.
 */
export function refreshCalendar(
  task: Task,
  calendar: Calendar,
  now: Instant,
): { task: Task; newRuns: NewRun[] } | null {
  const held = calendarStamps(task.schedule).find((stamp) => stamp.name === calendar.name);
  if (held === undefined || held.version >= calendar.version) return null;
  const settled = settleExcluded(task, now);
  const schedule = withCalendar(task.schedule, calendar);
  const refreshed = { ...settled.task, schedule };
  const maxRunsReached = schedule.maxRuns !== null && task.admittedCount >= schedule.maxRuns;
  if (isTerminalTaskStatus(task.status) || maxRunsReached) {
    return { task: refreshed, newRuns: settled.newRuns };
  }
  const nextRunAt = nextDueAfter(schedule, refreshed.decidedThrough);
  return { task: { ...refreshed, nextRunAt }, newRuns: settled.newRuns };
}
