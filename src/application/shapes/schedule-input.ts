/**
 * The shape of a schedule as users write it (docs/schedules.md), one of four types on `type`, with the
 * days to skip its `exclude` names and the items of a named calendar. It types and documents `schedule`
 * in the task inputs and the body of a calendar put; `parseSchedule` and `parseCalendarItems` in the
 * domain check their fields.
 */
import * as z from "zod";
import type { CalendarItemInput } from "../../domain/schedule/schedule-spec.js";
import {
  MAX_CRON_RULES,
  MAX_EXCLUSION_ITEMS,
  MAX_MOVE_DAYS,
  ON_EXCLUDED,
} from "../../domain/schedule/schedule-spec.js";
import { checkedAsAnyObject, documentedAs } from "./documented-shape.js";
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

const localDate = z
  .string()
  .meta({ format: "date", description: "a local date `YYYY-MM-DD`, read in the schedule's zone" });

/** `{from: "2026-12-24", to: "2026-12-26"}`: an inclusive range of local dates. */
export const dateRangeSchema = z
  .strictObject({ from: localDate, to: localDate })
  .meta({ description: "an inclusive range of local dates" });

/** `{days: "25 12 *"}`: a day rule (docs/schedules.md#exclude). */
export const dayRuleSchema = z.strictObject({
  days: z.string().meta({
    description:
      'the three day fields of a cron expression: day-of-month month day-of-week ("25 12 *")',
  }),
});

/** One item a calendar holds: a local date, an inclusive range of them, or a day rule. */
export const calendarItemSchema = z.union([localDate, dateRangeSchema, dayRuleSchema]).meta({
  examples: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { days: "* * sat,sun" }],
});

/** `{calendar: "holidays"}`: one of the owner's named calendars (docs/schedules.md#calendars). */
export const calendarReferenceSchema = z.strictObject({
  calendar: z.string().meta({ description: "the name of one of the owner's calendars" }),
});

/** One item of a schedule's `exclude`: a calendar item, or a named calendar of the owner. */
export const exclusionItemSchema = z.union([calendarItemSchema, calendarReferenceSchema]);

const exclude = z
  .array(exclusionItemSchema)
  .max(MAX_EXCLUSION_ITEMS)
  .nullable()
  .optional()
  .meta({ description: "local dates on which nothing fires (recorded skipped, reason excluded)" });

/** `on_excluded` (docs/schedules.md#moved-occurrences). */
const onExcluded = z
  .enum(ON_EXCLUDED)
  .nullable()
  .optional()
  .meta({
    description:
      "what becomes of an occurrence on an excluded date: skip (recorded skipped, reason excluded; " +
      "the default), or move it to the nearest date before (previous) or after (next) that is not " +
      `excluded, at the same wall time, at most ${MAX_MOVE_DAYS} days away and never past a ` +
      "neighbouring occurrence (else it is skipped); a moved run keeps its scheduled_for and fires " +
      "at its fire_at",
  });

/**
 * `{ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }` (docs/schedules.md#cron), or
 * several expressions in one zone, and the days to skip.
 */
export const cronScheduleInputSchema = z.strictObject({
  type: z.literal("cron"),
  cron: z.union([z.string(), z.array(z.string()).min(1).max(MAX_CRON_RULES)]).meta({
    description:
      "5 or 6 fields, or a shortcut such as @daily; or a list of such expressions in one zone " +
      "(their fires are the union)",
  }),
  timezone,
  ...scheduleBounds,
  exclude,
  on_excluded: onExcluded,
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

/** `{ type: "interval", every: "PT5M" }`, and the days to skip (read in `timezone`). */
export const intervalScheduleInputSchema = z.strictObject({
  type: z.literal("interval"),
  every: duration,
  timezone: z
    .string()
    .nullable()
    .optional()
    .meta({ description: "the IANA zone `exclude` is read in (default UTC)" }),
  ...scheduleBounds,
  exclude,
  on_excluded: onExcluded,
});

/**
 * `{ type: "rrule", rrule: "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO" }`:
 * an RFC 5545 recurrence in DTSTART's zone (docs/schedules.md#rrule), and the days to skip.
 */
export const rruleScheduleInputSchema = z.strictObject({
  type: z.literal("rrule"),
  rrule: z.string().meta({
    description:
      "RFC 5545 text: a DTSTART line (TZID=<zone>, or UTC ending in Z), one or more RRULE lines, " +
      "optional RDATE and EXDATE lines, separated by newlines",
  }),
  ...scheduleBounds,
  exclude,
  on_excluded: onExcluded,
});

/**
 * A schedule as users write it, one of four types (docs/schedules.md). This is its documented shape;
 * the fields are checked by `parseSchedule`, see `scheduleInputSchema`.
 */
export const scheduleShapeSchema = z
  .discriminatedUnion("type", [
    cronScheduleInputSchema,
    onceScheduleInputSchema,
    intervalScheduleInputSchema,
    rruleScheduleInputSchema,
  ])
  .meta({
    examples: [
      { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
      {
        type: "cron",
        cron: ["0 9 * * 1-5", "0 10 * * sat"],
        timezone: "Europe/Berlin",
        exclude: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { calendar: "holidays" }],
      },
      {
        type: "rrule",
        rrule: "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
      },
    ],
  });

/**
 * `schedule` in the task inputs: typed and documented as `scheduleShapeSchema`, while zod lets any
 * object through and `parseSchedule` checks its fields (docs/schedules.md), so every problem is reported at once
 * in the domain's words ("minute field: 61 is out of range 0-59"), as the API always answered.
 */
export const scheduleInputSchema = checkedAsAnyObject(scheduleShapeSchema);

/** The most years one put may expand a region's public holidays for. */
export const MAX_HOLIDAY_YEARS = 30;

/** docs/schedules.md#holidays: a region's public holidays added to a calendar put's items. */
export const holidaysInputSchema = z
  .strictObject({
    region: z.string().min(2).max(32).meta({
      description:
        "a country (ISO 3166-1, `DE`) and optionally its state and region (`DE-BY`), as the date-holidays dataset names them",
    }),
    from_year: z.number().int().min(1970).max(9999).optional().meta({
      description: "the first year whose holidays are added; default: the current year (UTC)",
    }),
    to_year: z
      .number()
      .int()
      .min(1970)
      .max(9999)
      .optional()
      .meta({
        description: `the last year (included); default: from_year + 9; at most ${MAX_HOLIDAY_YEARS} years in all`,
      }),
  })
  .meta({
    description:
      "adds the region's public holidays of the years asked to the items, as dates (docs/schedules.md#holidays)",
    examples: [{ region: "DE-BY", from_year: 2026, to_year: 2035 }],
  });
export type HolidaysInput = z.input<typeof holidaysInputSchema>;

/**
 * The body of a calendar put: its items, typed and documented as `calendarItemSchema` while zod lets
 * any value through, so that `parseCalendarItems` names every bad item at once in the domain's words.
 */
export const calendarPutInputSchema = z.strictObject({
  items: z
    .array(documentedAs(z.custom<CalendarItemInput>(), calendarItemSchema))
    .meta({ description: "the days the calendar holds (an empty list is allowed)" }),
  holidays: holidaysInputSchema.optional(),
});
export type CalendarPutInput = z.input<typeof calendarPutInputSchema>;
