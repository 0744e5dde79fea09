/**
 * The work budget of one schedule evaluation a request asks for (docs/security.md#bounded-work): the
 * checks at create and edit, a preview, the DST warnings, the least-period quota. The schedule engine
 * counts its steps (an exclusion item tested against a date, a cron search) and a request whose
 * schedule would take more than the budget is refused with `limit_exceeded` (`schedule_work`) instead
 * of holding the event loop.
 *
 * The budget is scoped to one synchronous call (`withWorkBudget`): the engine is synchronous, so no
 * other work runs inside the scope, and code outside any scope (admission of stored tasks, which passed
 * the checks when they were written) counts nothing.
 */
import { LimitExceededError } from "../errors.js";

/**
 * Steps one evaluation may take: 2 to 10 ms of a core (a create runs at most four evaluations: its
 * checks, its first fire, its DST warnings, its least period). A daily cron excluding a 1,000-date
 * calendar searches its next 30 years in about 22,000 steps; 1,000 distinct day rules cost 1,000 steps
 * a date, so they can be searched 250 days ahead, and exclusions covering every date for 30 years with
 * them would take 11 million.
 */
export const SCHEDULE_WORK_STEPS = 250_000;

/**
 * The budget of an evaluation of a stored task's schedule (explain, a calendar's edit): its search may
 * walk the whole 400-year horizon when its exclusions leave nothing, 146,097 dates.
 */
export const STORED_SCHEDULE_WORK_STEPS = 2_000_000;

let current: { left: number; readonly max: number } | null = null;

/** Counts `steps` against the budget in force, if any. @throws limit_exceeded (`schedule_work`) */
export function spendWork(steps: number): void {
  if (current === null) return;
  current.left -= steps;
  if (current.left >= 0) return;
  // `left` stays below zero: any later step in the same scope throws too.
  const { max } = current;
  throw new LimitExceededError(
    "schedule_work",
    max,
    `the schedule is too expensive to evaluate (over ${max} steps): name fewer exclusion items or day rules, or fewer cron expressions`,
  );
}

/**
 * Runs `work` under a budget of `steps` (nested calls share the outermost budget).
 * @throws limit_exceeded (`schedule_work`) when `work` would take more
 */
export function withWorkBudget<T>(work: () => T, steps: number = SCHEDULE_WORK_STEPS): T {
  if (current !== null) return work();
  current = { left: steps, max: steps };
  try {
    return work();
  } finally {
    current = null;
  }
}
