/**
 * The shape of a schedule as users write it (docs/schedules.md), one of three types on `type`. It types
 * and documents `schedule` in the task inputs; `parseSchedule` in the domain checks its fields.
 */
import { z } from "zod";
import { checkedAsAnyObject } from "./documented-shape.js";
import { durationInputSchema } from "./input-primitives.js";

const duration = durationInputSchema;

const scheduleInstant = z
  .string()
  .meta({ description: "an ISO-8601 instant with an offset or `Z`, e.g. 2026-12-01T09:00:00Z" });
const timezone = z
  .string()
  .nullable()
  .optional()
  .meta({ description: "an IANA zone name such as Europe/Berlin (default UTC)" });
const scheduleJitter = duration
  .nullable()
  .optional()
  .meta({ description: "each occurrence is delayed by a deterministic amount in [0, jitter]" });
const scheduleBounds = {
  start_at: scheduleInstant
    .nullable()
    .optional()
    .meta({ description: "no occurrence before it (an interval's anchor, which fires too)" }),
  end_at: scheduleInstant.nullable().optional().meta({ description: "no occurrence after it" }),
  max_runs: z
    .int()
    .min(1)
    .nullable()
    .optional()
    .meta({ description: "stop after this many scheduled occurrences were admitted as runs" }),
  jitter: scheduleJitter,
};

/** `{ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }` (docs/schedules.md). */
export const cronScheduleInputSchema = z.strictObject({
  type: z.literal("cron"),
  cron: z.string().meta({ description: "5 or 6 fields, or a shortcut such as @daily" }),
  timezone,
  ...scheduleBounds,
});

/** `{ type: "once", run_at: "2026-12-01T09:00:00", timezone: "Europe/Berlin" }`. */
export const onceScheduleInputSchema = z.strictObject({
  type: z.literal("once"),
  run_at: z.string().meta({
    description: "an ISO-8601 instant with an offset, or a local wall time resolved in `timezone`",
  }),
  timezone,
  jitter: scheduleJitter,
});

/** `{ type: "interval", every: "PT5M" }`. */
export const intervalScheduleInputSchema = z.strictObject({
  type: z.literal("interval"),
  every: duration,
  ...scheduleBounds,
});

/**
 * A schedule as users write it, one of three types (docs/schedules.md). This is its documented shape;
 * the fields are checked by `parseSchedule`, see `scheduleInputSchema`.
 */
export const scheduleShapeSchema = z
  .discriminatedUnion("type", [
    cronScheduleInputSchema,
    onceScheduleInputSchema,
    intervalScheduleInputSchema,
  ])
  .meta({ examples: [{ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }] });

/**
 * `schedule` in the task inputs: typed and documented as `scheduleShapeSchema`, while zod lets any
 * object through and `parseSchedule` checks its fields (docs/schedules.md), so every problem is reported at once
 * in the domain's words ("minute field: 61 is out of range 0-59"), as the API always answered.
 */
export const scheduleInputSchema = checkedAsAnyObject(scheduleShapeSchema);
