/**
 * The public shapes of a schedule, its `exclude` items and a calendar's items, as zod schemas that
 * describe them (the OpenAPI document is generated from these). Checking a schedule's fields is the
 * domain's (`parseSchedule`, with messages naming each field); these shapes only say what is accepted.
 */
import { z } from "zod";

const localDate = z
  .string()
  .meta({ format: "date", description: "a local date `YYYY-MM-DD`, read in the schedule's zone" });

/** One item a calendar holds: a date, an inclusive range of dates, or a day rule. */
export const calendarItemSchema = z
  .union([
    localDate,
    z.strictObject({ from: localDate, to: localDate }).meta({ description: "inclusive" }),
    z.strictObject({
      days: z.string().meta({
        description:
          'the three day fields of a cron expression: day-of-month month day-of-week ("25 12 *")',
      }),
    }),
  ])
  .meta({
    examples: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { days: "* * sat,sun" }],
  });

/** One item of a schedule's `exclude`: a calendar item, or a named calendar of the owner. */
export const exclusionItemSchema = z.union([
  calendarItemSchema,
  z.strictObject({
    calendar: z.string().meta({ description: "the name of one of the owner's calendars" }),
  }),
]);

const instant = z.string().meta({ format: "date-time" });
const duration = z.union([z.string(), z.number()]).meta({ description: "ISO-8601 or seconds" });
const bounds = {
  start_at: instant.nullable().optional(),
  end_at: instant.nullable().optional(),
  max_runs: z.int().min(1).nullable().optional(),
  jitter: duration.nullable().optional(),
};
const exclude = z
  .array(exclusionItemSchema)
  .nullable()
  .optional()
  .meta({ description: "local dates on which nothing fires (recorded skipped, reason excluded)" });

/** The schedule shapes (docs/schedules.md): cron, once, interval. */
export const scheduleShapeSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("cron"),
    cron: z.union([z.string(), z.array(z.string()).min(1)]).meta({
      description: "a cron expression, or a list of them in one zone (their fires are the union)",
    }),
    timezone: z.string().nullable().optional(),
    ...bounds,
    exclude,
  }),
  z.strictObject({
    type: z.literal("once"),
    run_at: z.string(),
    timezone: z.string().nullable().optional(),
    jitter: bounds.jitter,
  }),
  z.strictObject({
    type: z.literal("interval"),
    every: duration,
    timezone: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "the zone `exclude` is read in (default UTC)" }),
    ...bounds,
    exclude,
  }),
]);
