/**
 * `nextOccurrences`: the public, pure preview of a schedule's next fire times (docs/library.md). Reads no clock:
 * the caller says what "after" is.
 */
import type { FieldError } from "../errors.js";
import { ValidationError } from "../errors.js";
import { instant } from "../time.js";
import { nextFireAfter } from "./next-fire.js";
import { parseSchedule } from "./parse-schedule.js";
import type { ScheduleInput } from "./schedule-input.js";
import type { ScheduleSpec } from "./schedule-types.js";

/** The schedule `nextOccurrences` takes: the public schedule shape (`type` cron, once or interval). */
export type NextOccurrencesSchedule = ScheduleInput;

/** Where to start and how many fires to return. */
export interface NextOccurrencesOptions {
  /** Fires are strictly after this instant; an interval without `start_at` is anchored here. */
  readonly after: Date;
  /** How many fires, from 1 to 1000. */
  readonly count: number;
}

/** The most fires one call returns. */
export const MAX_OCCURRENCES = 1000;

function optionProblems(options: unknown): FieldError[] {
  if (typeof options !== "object" || options === null) {
    return [{ field: "options", message: "must be an object { after, count }" }];
  }
  const { after, count } = options as Partial<Record<keyof NextOccurrencesOptions, unknown>>;
  const problems: FieldError[] = [];
  if (!(after instanceof Date) || Number.isNaN(after.getTime())) {
    problems.push({ field: "after", message: "must be a valid Date" });
  }
  if (!Number.isInteger(count) || Number(count) < 1 || Number(count) > MAX_OCCURRENCES) {
    problems.push({ field: "count", message: `must be an integer from 1 to ${MAX_OCCURRENCES}` });
  }
  return problems;
}

/**
 * The next `count` nominal fire times of a schedule strictly after `after`, as `Date`s on whole seconds,
 * under the DST rule of docs/schedules.md#cron (fewer when the schedule ends: a once, or `end_at`). `start_at`,
 * `end_at` and `exclude` are honoured (a named calendar needs a scheduler: use a task's preview);
 * `max_runs` and `jitter` are a task's bookkeeping and are ignored here.
 *
 * @throws ValidationError (`validation_failed`) for any invalid schedule, `after` or `count`.
 * @example
 * nextOccurrences({ type: "cron", cron: "30 2 * * *", timezone: "America/New_York" },
 *   { after: new Date("2024-03-09T00:00:00Z"), count: 3 });
 * // 2024-03-09T07:30:00Z, 2024-03-10T07:00:00Z (02:30 does not exist: fires at 03:00), 2024-03-11T06:30:00Z
 */
export function nextOccurrences(
  schedule: NextOccurrencesSchedule,
  options: NextOccurrencesOptions,
): Date[] {
  const problems = optionProblems(options);
  const afterIsValid = !problems.some((p) => p.field === "after" || p.field === "options");
  const after = instant(afterIsValid ? options.after.getTime() : 0);
  let spec: ScheduleSpec;
  try {
    spec = parseSchedule(schedule, {
      referenceAt: after,
      anchorAt: after,
      checkReachable: afterIsValid,
      acceptEnded: true,
    });
  } catch (error) {
    // Report the schedule's problems together with those of the options.
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError([...error.errors, ...problems]);
  }
  if (problems.length > 0) throw new ValidationError(problems);
  const fires: Date[] = [];
  let previous = after;
  while (fires.length < options.count) {
    const next = nextFireAfter(spec, previous);
    if (next === null) break;
    fires.push(new Date(next));
    previous = next;
  }
  return fires;
}
