/**
 * The read shapes of tasks, runs, previews and explanations, defined once with zod: `view-mappers.ts` builds
 * values of exactly these types (the compiler checks it), the HTTP API documents its answers with them
 * (and its tests parse every answer with them), and `punctual/client` returns them. Strict objects, so
 * a field a view adds without declaring it here fails those tests.
 */
import { TASK_DEFECT_FIELDS } from "../../domain/task-defect.js";
import * as z from "zod";
import { EXPLAIN_VERDICTS } from "../../domain/explain.js";
import { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "../../domain/options.js";
import { RUN_REASONS, RUN_STATUSES, RUN_TRIGGERS } from "../../domain/run.js";
import { SUPPRESSED_KINDS } from "../../domain/schedule/describe-occurrences.js";
import {
  CONTEXT_MODES,
  ON_RUN_COMPLETED,
  WEBHOOK_METHODS,
  WEBHOOK_SIGNATURES,
} from "../../domain/target.js";
import { TASK_STATUSES } from "../../domain/task.js";
import { instantSchema, jsonValueSchema } from "./input-primitives.js";
import { calendarItemSchema, exclusionItemSchema } from "./schedule-input.js";

const instant = instantSchema;
const nullableInstant = instant.nullable();
const isoDuration = z.string().meta({ description: "an ISO-8601 duration, e.g. PT5M" });
const wallTime = z.string().meta({ description: "local wall time `YYYY-MM-DDTHH:MM:SS`" });
const utcOffset = z.string().meta({ description: "the zone's offset then, e.g. +01:00" });

const boundsView = {
  start_at: instant.optional(),
  end_at: instant.optional(),
  max_runs: z.int().optional(),
  jitter: isoDuration.optional(),
};

const excludeView = z
  .array(exclusionItemSchema)
  .optional()
  .meta({ description: "the days to skip, as written (absent when there are none)" });

const onExcludedView = z
  .enum(["previous", "next"])
  .optional()
  .meta({
    description:
      "an occurrence on an excluded date moves to the date before (previous) or after (next) that is " +
      "not excluded, at the same wall time (absent: it is skipped)",
  });

export const cronScheduleViewSchema = z.strictObject({
  type: z.literal("cron"),
  cron: z.union([z.string(), z.array(z.string())]).meta({
    description: "the expression, blanks normalised; a list when the schedule holds several",
  }),
  timezone: z.string(),
  ...boundsView,
  exclude: excludeView,
  on_excluded: onExcludedView,
});

export const onceScheduleViewSchema = z.strictObject({
  type: z.literal("once"),
  run_at: z.string().meta({
    description: "the local wall time as written (no offset), else the instant in UTC",
  }),
  timezone: z.string(),
  jitter: isoDuration.optional(),
});

export const intervalScheduleViewSchema = z.strictObject({
  type: z.literal("interval"),
  every: isoDuration,
  timezone: z.string().optional().meta({ description: "the zone `exclude` is read in" }),
  ...boundsView,
  exclude: excludeView,
  on_excluded: onExcludedView,
});

export const rruleScheduleViewSchema = z.strictObject({
  type: z.literal("rrule"),
  rrule: z.string().meta({ description: "the RFC 5545 recurrence text as written" }),
  ...boundsView,
  exclude: excludeView,
  on_excluded: onExcludedView,
});

/** A task's schedule as read back: normalised, every default explicit (docs/schedules.md). */
export const scheduleViewSchema = z.discriminatedUnion("type", [
  cronScheduleViewSchema,
  onceScheduleViewSchema,
  intervalScheduleViewSchema,
  rruleScheduleViewSchema,
]);

/** An agent target's run config (LangGraph's RunnableConfig fields), as given at create or edit. */
export const agentRunConfigViewSchema = z.strictObject({
  configurable: z.record(z.string(), jsonValueSchema).optional(),
  recursion_limit: z.int().optional(),
  tags: z.array(z.string()).optional(),
});

export const agentTargetViewSchema = z.strictObject({
  kind: z.literal("agent"),
  server: z.string(),
  assistant_id: z.string(),
  input: jsonValueSchema,
  config: agentRunConfigViewSchema.optional(),
  context: z.record(z.string(), jsonValueSchema).optional(),
  metadata: z.record(z.string(), jsonValueSchema).optional(),
  on_run_completed: z.enum(ON_RUN_COMPLETED).optional(),
});

export const webhookTargetViewSchema = z.strictObject({
  kind: z.literal("webhook"),
  url: z.string(),
  method: z.enum(WEBHOOK_METHODS),
  headers: z.record(z.string(), z.string()),
  input: jsonValueSchema,
  cancel_url: z.string().nullable(),
  idempotent: z.boolean(),
  signature: z.enum(WEBHOOK_SIGNATURES),
});

export const handlerTargetViewSchema = z.strictObject({
  kind: z.literal("handler"),
  name: z.string(),
  input: jsonValueSchema,
});

/** Where a task's runs are launched (docs/targets.md); `input: null` when none was given. */
export const targetViewSchema = z.discriminatedUnion("kind", [
  agentTargetViewSchema,
  webhookTargetViewSchema,
  handlerTargetViewSchema,
]);

export const contextViewSchema = z.strictObject({
  mode: z.enum(CONTEXT_MODES),
  thread_id: z.string().nullable().meta({ description: "the bound thread of reuse_thread" }),
});

export const optionsViewSchema = z.strictObject({
  overlap: z.enum(OVERLAP_POLICIES),
  catch_up: z.strictObject({ window: isoDuration, policy: z.enum(CATCH_UP_POLICIES) }),
  late_after: isoDuration,
  retry: z.strictObject({ max_attempts: z.int(), initial: isoDuration, max_delay: isoDuration }),
  run_timeout: isoDuration,
  queue_timeout: isoDuration,
});

export const taskViewSchema = z.strictObject({
  id: z.string(),
  owner: z.string(),
  key: z.string().nullable().meta({
    description: "the owner's unique name for the task (docs/semantics.md#task-keys), or null",
  }),
  group: z.string().nullable().meta({
    description: "the declared-schedules group the task belongs to, or null",
  }),
  title: z.string(),
  description: z.string().nullable(),
  schedule: scheduleViewSchema,
  target: targetViewSchema,
  context: contextViewSchema,
  options: optionsViewSchema,
  metadata: z.record(z.string(), z.string()),
  webhook_secret: z
    .string()
    .nullable()
    .meta({
      description:
        "the key this webhook task's requests are signed with (as `whsec_...` under the " +
        "standard_webhooks signature); null for other targets and when the server signs with its own secret",
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
  defect: z
    .strictObject({
      detected_at: nullableInstant.meta({
        description: "when admission took the task out of the due set; null until it met it",
      }),
      fields: z.array(z.strictObject({ field: z.enum(TASK_DEFECT_FIELDS), message: z.string() })),
    })
    .nullable()
    .meta({
      description:
        "the stored fields that no longer parse (docs/operations.md#a-task-that-does-not-parse): " +
        "the task does not run until an edit gives each anew; the fields named show stand-ins. " +
        "null for a sound task",
    }),
});

export const runViewSchema = z.strictObject({
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
  result: jsonValueSchema.nullable(),
  moved_from: nullableInstant.meta({
    description:
      "for a run admitted from an occurrence moved off an excluded date (schedule on_excluded previous " +
      "or next, docs/schedules.md#moved-occurrences): the nominal time it came from (its scheduled_for; " +
      "fire_at is the moved instant). Kept through retries, redrives and backfills. null for any other run",
  }),
});

export const createdTaskSchema = z.strictObject({
  task: taskViewSchema,
  warnings: z.array(z.string()).meta({ description: "e.g. what DST does to the schedule" }),
});

export const createdTaskBatchSchema = z.strictObject({
  tasks: z.array(createdTaskSchema).meta({ description: "the created tasks, in input order" }),
});

/** The answer of an upsert by key (docs/semantics.md#upsert). */
export const upsertedTaskSchema = z.strictObject({
  task: taskViewSchema,
  warnings: z.array(z.string()).meta({ description: "e.g. what DST does to the schedule" }),
  created: z.boolean().meta({ description: "true when no task had the key (HTTP 201)" }),
  changed: z.array(z.string()).meta({
    description:
      "the fields the upsert changed; empty when it created the task or found it identical",
  }),
});

export const taskPageSchema = z.strictObject({
  items: z.array(taskViewSchema),
  next_cursor: z.string().nullable().meta({ description: "null on the last page" }),
});

export const runPageSchema = z.strictObject({
  items: z.array(runViewSchema),
  next_cursor: z.string().nullable().meta({ description: "null on the last page" }),
});

export const rotatedSecretSchema = z.strictObject({
  task: taskViewSchema,
  webhook_secret: z.string().nullable().meta({
    description:
      "the new signing secret, shown once here (as `webhook_secret` is shown); null where the task's own secret signs nothing",
  }),
  previous_valid_until: nullableInstant.meta({
    description: "until when the replaced secret still signs and opens callbacks; null if at once",
  }),
});

export const backfillResultSchema = z.strictObject({
  runs: z.array(runViewSchema),
  already_backfilled: z.int(),
});

/** What DST does to one fire: moved out of a gap, or one pass of a repeated wall time. */
export const dstNoteSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("gap_shifted"),
    nominal_wall: wallTime.meta({ description: "the wall time that does not exist" }),
    collapsed: z.int().meta({ description: "further fires in the same gap merged into this one" }),
  }),
  z.strictObject({ kind: z.literal("overlap_first") }),
  z.strictObject({ kind: z.literal("overlap_second") }),
]);

/** Which item of a schedule's `exclude` excludes an occurrence (docs/schedules.md#exclude). */
export const exclusionHitSchema = z
  .strictObject({
    item: calendarItemSchema,
    calendar: z.string().nullable().meta({ description: "the calendar the item is in, if any" }),
  })
  .meta({ description: "the item of `exclude` the occurrence falls on" });

export const suppressedFireSchema = z.strictObject({
  kind: z.enum(SUPPRESSED_KINDS),
  at: instant,
  wall: wallTime,
  exclusion: exclusionHitSchema.optional().meta({ description: "kind `excluded`: the item" }),
});

const ruleText = z.string().nullable().meta({
  description: "the cron expression that produced it (the first in the order written)",
});

export const occurrenceViewSchema = z.strictObject({
  at: instant,
  wall: wallTime,
  offset: utcOffset,
  note: dstNoteSchema.nullable(),
  rule: ruleText,
  suppressed_before: z.array(suppressedFireSchema),
  moved_from: suppressedFireSchema.optional().meta({
    description:
      "for an occurrence moved off an excluded date (schedule on_excluded previous or next): its " +
      "nominal time and the item that excludes it; `at` is where it fires",
  }),
});

export const previewSchema = z.strictObject({ occurrences: z.array(occurrenceViewSchema) });

export const nominalOccurrenceSchema = z.strictObject({
  scheduled_for: instant,
  fire_at: instant.meta({ description: "`scheduled_for` plus the task's deterministic jitter" }),
  local_wall: wallTime,
  offset: utcOffset,
  dst_note: dstNoteSchema.nullable(),
  rule: ruleText,
  exclusion: exclusionHitSchema.nullable(),
});

export const explanationViewSchema = z.strictObject({
  at: instant,
  task_status: z.enum(TASK_STATUSES),
  verdict: z
    .enum(EXPLAIN_VERDICTS)
    .meta({ description: "one code; docs/semantics.md (Explain) says what each means" }),
  message: z.string().meta({ description: "one sentence for a person" }),
  occurrence: nominalOccurrenceSchema.nullable().meta({
    description: "the last nominal time at or before `at` (null when there is none)",
  }),
  next_occurrence: nominalOccurrenceSchema
    .nullable()
    .meta({ description: "the first nominal time after `at`" }),
  suppressed: z
    .strictObject({ kind: z.enum(SUPPRESSED_KINDS), at: instant, local_wall: wallTime })
    .nullable()
    .meta({ description: "a fire DST suppressed after the occurrence and at or before `at`" }),
  run: runViewSchema
    .nullable()
    .meta({ description: "the run or skipped/missed record the verdict is about" }),
  exclusion: exclusionHitSchema
    .nullable()
    .meta({ description: "verdict `excluded`: the item the occurrence falls on" }),
});

/** A named calendar (docs/schedules.md#calendars). */
export const calendarViewSchema = z.strictObject({
  name: z.string(),
  items: z.array(calendarItemSchema),
  version: z.int().meta({ description: "1 when created, + 1 on each change" }),
  holidays: z
    .strictObject({
      region: z.string(),
      from_year: z.int(),
      through_year: z.int().meta({
        description:
          "the last year whose holidays the items hold; kept at least the current year + " +
          "9 as years pass (docs/schedules.md#holidays)",
      }),
    })
    .nullable()
    .meta({
      description:
        "the region whose public holidays the calendar follows (a put with `holidays`), or null",
    }),
  created_at: instant,
  updated_at: instant,
});

/** A page of an owner's calendars, by name. */
export const calendarListSchema = z.strictObject({
  items: z.array(calendarViewSchema),
  next_cursor: z.string().nullable().meta({ description: "null on the last page" }),
});

/** A calendar after a put, and how many tasks took its new items. */
export const calendarPutResultSchema = calendarViewSchema.extend({
  tasks_refreshed: z.int().meta({
    description:
      "how many tasks naming the calendar took its new items (their next_run_at recomputed)",
  }),
  warnings: z.array(z.string()).meta({
    description:
      "one per task naming the calendar that will not fire while it stands: every occurrence the " +
      "task has left falls on an excluded date (docs/schedules.md#when-everything-left-is-excluded)",
  }),
});

export type ScheduleView = z.output<typeof scheduleViewSchema>;
export type TargetView = z.output<typeof targetViewSchema>;
export type AgentRunConfigView = z.output<typeof agentRunConfigViewSchema>;
export type ContextView = z.output<typeof contextViewSchema>;
export type OptionsView = z.output<typeof optionsViewSchema>;
export type BackfillResultView = z.output<typeof backfillResultSchema>;
export type RotatedSecretView = z.output<typeof rotatedSecretSchema>;
export type PreviewView = z.output<typeof previewSchema>;
export type DstNoteView = z.output<typeof dstNoteSchema>;
export type ExclusionHitView = z.output<typeof exclusionHitSchema>;
