/**
 * The HTTP API's request and response shapes, defined once with zod: the routes validate with them and
 * the OpenAPI document is generated from them. Task input schemas come from the application layer (shared
 * with the library and the CLI); the response shapes mirror `src/application/views.ts`, and a test checks
 * every answer against them.
 */
import { z } from "zod";
import { contextSchema, optionsSchema, targetSchema } from "../../application/task-input.js";
import { EXPLAIN_VERDICTS } from "../../domain/explain.js";
import { SUPPRESSED_KINDS } from "../../domain/schedule/describe-occurrences.js";
import {
  calendarItemSchema,
  exclusionItemSchema,
  scheduleShapeSchema,
} from "../../application/schedule-schema.js";
import { CATCH_UP_POLICIES } from "../../domain/options.js";
import { RUN_REASONS, RUN_STATUSES, RUN_TRIGGERS } from "../../domain/run.js";
import { TASK_STATUSES } from "../../domain/task.js";
import { TARGET_KINDS } from "../../domain/target.js";

/** SPEC 8: a page holds at most 200 items. */
export const PAGE_SIZE_MAX = 200;
export const PAGE_SIZE_DEFAULT = 50;

const instant = z.string().meta({ format: "date-time", description: "RFC 3339, UTC, `Z`" });
const nullableInstant = instant.nullable();

export const scheduleSchema = scheduleShapeSchema.meta({
  description:
    "`{type: cron, cron, timezone?}`, `{type: once, run_at, timezone?}` or `{type: interval, every, start_at?}`, " +
    "plus `start_at`, `end_at`, `max_runs`, `jitter`, and `exclude` on cron and interval (docs/schedules.md)",
  examples: [
    { type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
    {
      type: "cron",
      cron: ["0 9 * * 1-5", "0 10 * * sat"],
      timezone: "Europe/Berlin",
      exclude: ["2026-12-25", { from: "2026-12-24", to: "2026-12-26" }, { calendar: "holidays" }],
    },
  ],
});

export const taskSchema = z.object({
  id: z.string(),
  owner: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  schedule: scheduleSchema,
  target: targetSchema,
  context: contextSchema,
  options: optionsSchema,
  metadata: z.record(z.string(), z.string()),
  webhook_secret: z
    .string()
    .nullable()
    .meta({
      description:
        "the key this webhook task's requests are signed with (Punctual-Signature); null for other " +
        "targets and when the server signs with its own secret",
    }),
  status: z.enum(TASK_STATUSES),
  next_run_at: nullableInstant,
  decided_through: instant,
  last_run_at: nullableInstant,
  last_run_id: z.string().nullable(),
  last_error: z.string().nullable(),
  run_count: z.int(),
  admitted_count: z.int(),
  version: z.int().meta({ description: "also the task's ETag" }),
  created_at: instant,
  updated_at: instant,
});

export const runSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  owner: z.string(),
  trigger: z.enum(RUN_TRIGGERS),
  scheduled_for: instant,
  fire_at: instant,
  status: z.enum(RUN_STATUSES),
  reason: z.enum(RUN_REASONS).nullable(),
  missed_count: z.int().nullable(),
  missed_until: nullableInstant,
  attempt: z.int(),
  failures: z.int(),
  not_before: instant,
  thread_scope: z.string(),
  thread_id: z.string(),
  exclusive: z.boolean(),
  claim_expires_at: nullableInstant,
  target_run_id: z.string().nullable(),
  idempotency_key: z.string(),
  queued_at: instant,
  launched_at: nullableInstant,
  deadline_at: nullableInstant,
  finished_at: nullableInstant,
  lateness_ms: z.int().nullable(),
  late: z.boolean(),
  cancel_requested_at: nullableInstant,
  error: z.string().nullable(),
  result: z.json().nullable(),
});

export const createdTaskSchema = z.object({ task: taskSchema, warnings: z.array(z.string()) });

export const taskPageSchema = z.object({
  items: z.array(taskSchema),
  next_cursor: z.string().nullable(),
});

export const runPageSchema = z.object({
  items: z.array(runSchema),
  next_cursor: z.string().nullable(),
});

export const backfillResultSchema = z.object({
  runs: z.array(runSchema),
  already_backfilled: z.int(),
});

const dstNoteSchema = z
  .object({
    kind: z.enum(["gap_shifted", "overlap_first", "overlap_second"]),
    nominal_wall: z.string().optional(),
    collapsed: z.int().optional(),
  })
  .nullable();
const suppressedKind = z.enum(SUPPRESSED_KINDS);

/** Which item of the schedule's `exclude` excludes an occurrence (docs/schedules.md#exclude). */
const exclusionSchema = z
  .object({
    item: exclusionItemSchema,
    calendar: z.string().nullable().meta({ description: "the calendar the item is in, if any" }),
  })
  .meta({ description: "the item of `exclude` the occurrence falls on" });

export const occurrenceSchema = z.object({
  at: instant,
  wall: z.string().meta({ description: "local wall time `YYYY-MM-DDTHH:MM:SS`" }),
  offset: z.string(),
  note: dstNoteSchema,
  rule: z.string().nullable().meta({
    description: "the cron expression that produced this fire (the first in the order written)",
  }),
  suppressed_before: z.array(
    z.object({
      kind: suppressedKind,
      at: instant,
      wall: z.string(),
      exclusion: exclusionSchema.optional(),
    }),
  ),
});

export const previewSchema = z.object({ occurrences: z.array(occurrenceSchema) });

const nominalSchema = z
  .object({
    scheduled_for: instant,
    fire_at: instant.meta({ description: "`scheduled_for` plus the task's deterministic jitter" }),
    local_wall: z.string().meta({ description: "local wall time `YYYY-MM-DDTHH:MM:SS`" }),
    offset: z.string(),
    dst_note: dstNoteSchema,
    rule: z.string().nullable().meta({
      description: "the cron expression that produced it (the first in the order written)",
    }),
    exclusion: exclusionSchema.nullable(),
  })
  .nullable();

export const explanationSchema = z.object({
  at: instant,
  task_status: z.enum(TASK_STATUSES),
  verdict: z
    .enum(EXPLAIN_VERDICTS)
    .meta({ description: "one code; docs/semantics.md (Explain) says what each means" }),
  message: z.string().meta({ description: "one sentence for a person" }),
  occurrence: nominalSchema.meta({
    description: "the last nominal time at or before `at` (null when there is none)",
  }),
  next_occurrence: nominalSchema.meta({ description: "the first nominal time after `at`" }),
  suppressed: z
    .object({ kind: suppressedKind, at: instant, local_wall: z.string() })
    .nullable()
    .meta({ description: "a fire DST suppressed after the occurrence and at or before `at`" }),
  run: runSchema
    .nullable()
    .meta({ description: "the run or skipped/missed record the verdict is about" }),
  exclusion: exclusionSchema
    .nullable()
    .meta({ description: "verdict `excluded`: the item the occurrence falls on" }),
});

export const problemSchema = z.object({
  type: z.string().meta({ description: "https://punctual.dev/problems/<code>" }),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  limit: z.string().optional(),
  max: z.number().optional(),
  task_id: z.string().optional().meta({ description: "calendar_in_use: a task that names it" }),
});

/** Query parameters arrive as strings; a repeated parameter (an array) is refused by these. */
const pageSize = z
  .string()
  .regex(/^\d{1,6}$/, "must be a whole number")
  .optional()
  .meta({ description: `page size, 1..${PAGE_SIZE_MAX} (default ${PAGE_SIZE_DEFAULT})` });
const cursor = z
  .string()
  .min(1)
  .max(512)
  .optional()
  .meta({ description: "`next_cursor` of the previous page" });
const booleanText = z.enum(["true", "false"]);

export const taskIdParams = z.object({ id: z.string().meta({ description: "task id" }) });
export const runIdParams = z.object({ id: z.string().meta({ description: "run id" }) });
export const threadParams = z.object({ thread_id: z.string() });

export const taskListQuery = z.strictObject({
  status: z.enum(TASK_STATUSES).optional(),
  target_kind: z.enum(TARGET_KINDS).optional(),
  thread_id: z.string().min(1).max(128).optional(),
  limit: pageSize,
  cursor,
});

export const threadTaskQuery = z.strictObject({ limit: pageSize, cursor });

export const runListQuery = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  trigger: z.enum(RUN_TRIGGERS).optional(),
  limit: pageSize,
  cursor,
});

export const previewQuery = z.strictObject({
  count: z
    .string()
    .regex(/^\d{1,6}$/, "must be a whole number")
    .optional()
    .meta({ description: "how many fires, 1..100 (default 10)" }),
});

export const explainQuery = z.strictObject({
  at: z.string().meta({ description: "an RFC 3339 instant" }),
});

export const deleteQuery = z.strictObject({
  force: booleanText.optional().meta({ description: "cancel a launching or running run" }),
});

export const emptyQuery = z.strictObject({});

/** A POST that takes no fields: no body, or `{}` (an unknown field is refused, as everywhere). */
export const emptyBody = z.strictObject({}).optional();
export const pauseBody = z.strictObject({ cancel_running: z.boolean().optional() }).optional();
export const resumeBody = z
  .strictObject({ catch_up: z.enum(CATCH_UP_POLICIES).optional() })
  .optional();
export const backfillBody = z.strictObject({ from: instant, to: instant });

export const healthSchema = z.object({ status: z.string() });

export const calendarNameParams = z.object({
  name: z.string().meta({ description: "the calendar's name (letters, digits, `_`, `-`, `.`)" }),
});

export const calendarSchema = z.object({
  name: z.string(),
  items: z.array(calendarItemSchema),
  version: z.int().meta({ description: "1 when created, + 1 on each change" }),
  created_at: instant,
  updated_at: instant,
});

export const calendarListSchema = z.object({ items: z.array(calendarSchema) });

export const calendarPutResultSchema = calendarSchema.extend({
  tasks_refreshed: z.int().meta({
    description:
      "how many tasks naming the calendar took its new items (their next_run_at recomputed)",
  }),
});

/** Shapes named in the OpenAPI document's `components.schemas`. */
export const NAMED_SCHEMAS: readonly (readonly [string, z.ZodType])[] = [
  ["Task", taskSchema],
  ["Run", runSchema],
  ["CreatedTask", createdTaskSchema],
  ["TaskPage", taskPageSchema],
  ["RunPage", runPageSchema],
  ["BackfillResult", backfillResultSchema],
  ["Preview", previewSchema],
  ["Explanation", explanationSchema],
  ["Problem", problemSchema],
  ["Calendar", calendarSchema],
];
