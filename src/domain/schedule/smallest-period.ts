/**
 * The least time between two fires of a schedule, for the `min_period` quota (docs/security.md#quotas):
 * an interval's `every`; a cron's or a recurrence's least gap among its next fires; none for a once schedule.
 */
import { nextFireAfter } from "./next-fire.js";
import { withWorkBudget } from "./work-budget.js";
import type { ScheduleSpec } from "./schedule-types.js";
import type { Instant } from "../time.js";

/**
 * How many cron fires are looked at: enough to meet the least gap of any cron (a seconds field repeats
 * within a minute, and the next 120 fires cover two minutes of the densest one).
 */
const CRON_SAMPLES = 120;

/** The least gap in ms between consecutive fires after `from`, or null when it fires at most once. */
export function smallestPeriodMs(spec: ScheduleSpec, from: Instant): number | null {
  return withWorkBudget(() => smallestPeriodWithin(spec, from));
}

function smallestPeriodWithin(spec: ScheduleSpec, from: Instant): number | null {
  switch (spec.type) {
    case "once":
      return null;
    case "interval":
      return spec.everyMs;
    case "cron":
    case "rrule": {
      let least: number | null = null;
      let previous = nextFireAfter(spec, from);
      for (let i = 1; i < CRON_SAMPLES && previous !== null; i++) {
        const next = nextFireAfter(spec, previous);
        if (next === null) break;
        least = least === null ? next - previous : Math.min(least, next - previous);
        previous = next;
      }
      return least;
    }
  }
}
