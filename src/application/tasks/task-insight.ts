/**
 * What a task shows of its future and its past (docs/semantics.md#explain): its next fires with their
 * local wall times and DST notes, a schedule's fires before any task has it, and why the task did or did
 * not fire around an instant, from its run history paged newest first.
 */
import {
  EXPLAIN_MAX_HISTORY_ROWS,
  explainWindow,
  historyReachedWindow,
} from "../../domain/explain-window.js";
import { explainAt } from "../../domain/explain.js";
import type { OwnerScope } from "../../domain/ports/queries.js";
import type { RunRepository } from "../../domain/ports/run-repository.js";
import type { Run } from "../../domain/run.js";
import {
  describeOccurrences,
  STORED_SCHEDULE_WORK_STEPS,
  withWorkBudget,
} from "../../domain/schedule/schedule-spec.js";
import { isTerminalTaskStatus } from "../../domain/task.js";
import { checkPreviewCount, DEFAULT_LIMITS } from "../policy/limits.js";
import type { Task } from "../../domain/task.js";
import { refuseDefective } from "../../domain/task-defect.js";
import type { Instant } from "../../domain/time.js";
import { scheduleFrom } from "../shapes/task-input.js";
import type { CalendarsByName } from "../shapes/task-input.js";
import { explanationView, occurrenceView } from "../shapes/view-mappers.js";
import type { ExplanationView, OccurrenceView } from "../shapes/view-mappers.js";

/** History page size for `explain` (the largest page, limits.ts). */
const EXPLAIN_PAGE_SIZE = DEFAULT_LIMITS.pageSizeMax;

/** The task's next `count` fires (none once it has ended; a paused task shows its schedule). */
export function previewTask(task: Task, count: number, now: Instant): OccurrenceView[] {
  refuseDefective(task, "preview");
  // An ended task (completed, failed, cancelled) fires no more; a paused one shows its schedule.
  if (isTerminalTaskStatus(task.status)) return [];
  const from = task.decidedThrough > now ? task.decidedThrough : now;
  return withWorkBudget(() => describeOccurrences(task.schedule, from, count)).map(occurrenceView);
}

/**
 * The next `count` fires of a schedule no task has yet (the dashboard's live preview), parsed exactly
 * as a task's schedule is (with the calendars it names, read beforehand), so a bad field is the same
 * `validation_failed`.
 */
export function previewSchedule(
  input: unknown,
  count: number,
  now: Instant,
  calendars?: CalendarsByName,
): OccurrenceView[] {
  checkPreviewCount(count);
  const spec = scheduleFrom(input, now, calendars);
  return withWorkBudget(() => describeOccurrences(spec, now, count)).map(occurrenceView);
}

/**
 * Why `task` did or did not fire around `at` (an RFC 3339 instant): the nominal times around it, the
 * decision of the last one (paging the history newest first, at most 5,000 rows) and what DST did.
 */
export async function explainTask(args: {
  readonly runs: RunRepository;
  readonly scope: OwnerScope;
  readonly task: Task;
  readonly at: Instant;
  readonly now: Instant;
}): Promise<ExplanationView> {
  const { task, at } = args;
  refuseDefective(task, "explain");
  // A stored task's search may have to walk its whole horizon (a task its exclusions hold still).
  const window = withWorkBudget(() => explainWindow(task, at), STORED_SCHEDULE_WORK_STEPS);
  const runs: Run[] = [];
  let cursor: string | undefined;
  let complete = false;
  while (runs.length < EXPLAIN_MAX_HISTORY_ROWS) {
    const page = await args.runs.listRuns(args.scope, task.id, {
      limit: EXPLAIN_PAGE_SIZE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...page.items);
    if (page.items.some((run) => historyReachedWindow(run, window, at))) {
      complete = true;
      break;
    }
    if (page.nextCursor === null) {
      complete = true;
      break;
    }
    cursor = page.nextCursor;
  }
  return explanationView(explainAt({ task, at, now: args.now, window, runs, complete }));
}
