/**
 * How a ScheduleSpec is stored: a JSON value that restores the same spec without re-running the checks
 * that depend on the current time. Storage adapters use only these two functions.
 */
import type { ScheduleSpec } from "./schedule/schedule-spec.js";

/** The JSON value stored for `spec`. */
export function encodeSchedule(spec: ScheduleSpec): unknown {
  return spec;
}

/** The spec stored as `value` by `encodeSchedule`. */
export function decodeSchedule(value: unknown): ScheduleSpec {
  return value as ScheduleSpec;
}
