/**
 * How a ScheduleSpec is stored: a JSON value that restores the same spec without re-running the checks
 * that depend on the current time. Storage adapters use only these two functions. Values stored by
 * earlier versions (without the fields added since) decode to the spec they meant.
 */
import { NO_DAY_ITEMS } from "./schedule/cron-day-items.js";
import type { CronExpression } from "./schedule/cron-expression.js";
import type { ScheduleSpec } from "./schedule/schedule-spec.js";

/** The JSON value stored for `spec`. */
export function encodeSchedule(spec: ScheduleSpec): unknown {
  return spec;
}

/** A stored expression from before the day items (`L`, `W`, `#`) names none. */
function upgradeExpression(value: CronExpression): CronExpression {
  return (value as Partial<CronExpression>).dayItems === undefined
    ? { ...value, dayItems: NO_DAY_ITEMS }
    : value;
}

/** The spec stored as `value` by `encodeSchedule` (or by an earlier version of it). */
export function decodeSchedule(value: unknown): ScheduleSpec {
  const spec = value as ScheduleSpec;
  if (spec.type !== "cron") return spec;
  return { ...spec, cron: upgradeExpression(spec.cron) };
}
