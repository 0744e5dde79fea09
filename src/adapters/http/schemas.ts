/**
 * The HTTP API's own shapes, defined once with zod: path and query parameters, problem documents, and
 * the names of the shapes in the OpenAPI document's `components.schemas`. Task inputs and the read
 * shapes come from the application layer (shared with the library and `punctual/client`); the routes
 * validate with these and the OpenAPI document is generated from them.
 */
import * as z from "zod";
import {
  backfillInputSchema,
  pauseInputSchema,
  resumeInputSchema,
  rotateSecretInputSchema,
  runListFiltersSchema,
  taskListFiltersSchema,
} from "../../application/shapes/command-input.js";
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from "../../application/scheduler-api.js";
import { RUN_STATUSES, RUN_TRIGGERS } from "../../domain/run.js";
import { TARGET_KINDS } from "../../domain/target.js";
import { durationInputSchema, jsonValueSchema } from "../../application/shapes/input-primitives.js";
import {
  calendarItemSchema,
  calendarPutInputSchema,
  calendarReferenceSchema,
  cronScheduleInputSchema,
  dateRangeSchema,
  dayRuleSchema,
  exclusionItemSchema,
  intervalScheduleInputSchema,
  rruleScheduleInputSchema,
  onceScheduleInputSchema,
  scheduleInputSchema,
  scheduleShapeSchema,
} from "../../application/shapes/schedule-input.js";
import {
  contextSchema,
  optionsSchema,
  taskCreateSchema,
  taskPatchSchema,
} from "../../application/shapes/task-input.js";
import {
  agentTargetInputSchema,
  handlerTargetInputSchema,
  targetSchema,
  webhookTargetInputSchema,
} from "../../application/shapes/target-input.js";
import {
  agentTargetViewSchema,
  backfillResultSchema,
  rotatedSecretSchema,
  calendarListSchema,
  calendarPutResultSchema,
  calendarViewSchema,
  contextViewSchema,
  createdTaskSchema,
  cronScheduleViewSchema,
  dstNoteSchema,
  exclusionHitSchema,
  explanationViewSchema,
  handlerTargetViewSchema,
  intervalScheduleViewSchema,
  rruleScheduleViewSchema,
  nominalOccurrenceSchema,
  occurrenceViewSchema,
  onceScheduleViewSchema,
  optionsViewSchema,
  previewSchema,
  runPageSchema,
  runViewSchema,
  scheduleViewSchema,
  suppressedFireSchema,
  targetViewSchema,
  taskPageSchema,
  taskViewSchema,
  webhookTargetViewSchema,
} from "../../application/shapes/view-schemas.js";

const fieldErrorSchema = z.object({ field: z.string(), message: z.string() });

export const problemSchema = z.object({
  type: z.string().meta({ description: "https://punctual.dev/problems/<code>" }),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(fieldErrorSchema).optional(),
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
export const taskKeyParams = z.object({
  key: z
    .string()
    .meta({ description: "the task's key (1-200 letters, digits, `.`, `_`, `:`, `-`)" }),
});
export const runIdParams = z.object({ id: z.string().meta({ description: "run id" }) });
export const threadParams = z.object({ thread_id: z.string() });
export const calendarNameParams = z.object({
  name: z.string().meta({ description: "the calendar's name (letters, digits, `_`, `-`, `.`)" }),
});

export const taskListQuery = taskListFiltersSchema.extend({ limit: pageSize, cursor });

export const threadTaskQuery = z.strictObject({ limit: pageSize, cursor });

export const calendarListQuery = z.strictObject({ limit: pageSize, cursor });

export const runListQuery = runListFiltersSchema.extend({ limit: pageSize, cursor });

const instantQuery = (description: string) =>
  z.string().min(1).max(64).optional().meta({ format: "date-time", description });

/** `GET /v1/runs`: the filters of runs across tasks (docs/api.md), as query text. */
export const runSearchQuery = z.strictObject({
  status: z
    .union([z.enum(RUN_STATUSES), z.array(z.enum(RUN_STATUSES)).max(RUN_STATUSES.length)])
    .optional()
    .meta({
      description: `${RUN_STATUSES.join(", ")}; repeatable (\`status=failed&status=timed_out\`): any of these`,
    }),
  task_id: z.string().min(1).max(128).optional().meta({ description: "only this task's runs" }),
  target_kind: z
    .enum(TARGET_KINDS)
    .optional()
    .meta({ description: "the kind of the task's target when the run was written" }),
  trigger: z.enum(RUN_TRIGGERS).optional(),
  late: booleanText.optional().meta({ description: "launched later than `late_after`, or not" }),
  scheduled_after: instantQuery("`scheduled_for` at or after this instant (RFC 3339)"),
  scheduled_before: instantQuery("`scheduled_for` before this instant"),
  finished_after: instantQuery("ended runs finished at or after this instant"),
  finished_before: instantQuery("ended runs finished before this instant"),
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

export const upsertQuery = z.strictObject({
  dry_run: booleanText
    .optional()
    .meta({ description: "check and answer what the upsert would do, writing nothing" }),
});

export const deleteQuery = z.strictObject({
  force: booleanText.optional().meta({ description: "cancel a launching or running run" }),
  after_run: booleanText.optional().meta({
    description:
      "let a launching or running run finish: the task is deleted at once and admits nothing; " +
      "its rows go when the run has ended",
  }),
});

export const emptyQuery = z.strictObject({});

/** A POST that takes no fields: no body, or `{}` (an unknown field is refused, as everywhere). */
export const emptyBody = z.strictObject({}).optional();
export const pauseBody = pauseInputSchema.optional();
export const resumeBody = resumeInputSchema.optional();
export const backfillBody = backfillInputSchema;
export const rotateSecretBody = rotateSecretInputSchema.optional();
export const schedulePreviewBody = z.strictObject({ schedule: scheduleInputSchema });
export const calendarPutBody = calendarPutInputSchema;

export const healthSchema = z.object({ status: z.string() });

/**
 * Every shape named in the OpenAPI document's `components.schemas` (a generated client's type names):
 * the document refuses to build with an unnamed recursive shape.
 */
export const NAMED_SCHEMAS: readonly (readonly [string, z.ZodType])[] = [
  ["Task", taskViewSchema],
  ["Schedule", scheduleViewSchema],
  ["CronSchedule", cronScheduleViewSchema],
  ["OnceSchedule", onceScheduleViewSchema],
  ["IntervalSchedule", intervalScheduleViewSchema],
  ["RRuleSchedule", rruleScheduleViewSchema],
  ["ExclusionItem", exclusionItemSchema],
  ["CalendarItem", calendarItemSchema],
  ["DateRange", dateRangeSchema],
  ["DayRule", dayRuleSchema],
  ["CalendarReference", calendarReferenceSchema],
  ["Target", targetViewSchema],
  ["AgentTarget", agentTargetViewSchema],
  ["WebhookTarget", webhookTargetViewSchema],
  ["HandlerTarget", handlerTargetViewSchema],
  ["ExecutionContext", contextViewSchema],
  ["TaskOptions", optionsViewSchema],
  ["Run", runViewSchema],
  ["CreatedTask", createdTaskSchema],
  ["TaskPage", taskPageSchema],
  ["RunPage", runPageSchema],
  ["BackfillResult", backfillResultSchema],
  ["RotatedSecret", rotatedSecretSchema],
  ["Preview", previewSchema],
  ["Occurrence", occurrenceViewSchema],
  ["DstNote", dstNoteSchema],
  ["SuppressedFire", suppressedFireSchema],
  ["ExclusionHit", exclusionHitSchema],
  ["NominalOccurrence", nominalOccurrenceSchema],
  ["Explanation", explanationViewSchema],
  ["JsonValue", jsonValueSchema],
  ["TaskCreateInput", taskCreateSchema],
  ["TaskPatchInput", taskPatchSchema],
  ["ScheduleInput", scheduleShapeSchema],
  ["CronScheduleInput", cronScheduleInputSchema],
  ["OnceScheduleInput", onceScheduleInputSchema],
  ["IntervalScheduleInput", intervalScheduleInputSchema],
  ["RRuleScheduleInput", rruleScheduleInputSchema],
  ["TargetInput", targetSchema],
  ["AgentTargetInput", agentTargetInputSchema],
  ["WebhookTargetInput", webhookTargetInputSchema],
  ["HandlerTargetInput", handlerTargetInputSchema],
  ["ExecutionContextInput", contextSchema],
  ["TaskOptionsInput", optionsSchema],
  ["DurationInput", durationInputSchema],
  ["PauseInput", pauseInputSchema],
  ["ResumeInput", resumeInputSchema],
  ["BackfillInput", backfillInputSchema],
  ["RotateSecretInput", rotateSecretInputSchema],
  ["SchedulePreviewInput", schedulePreviewBody],
  ["Calendar", calendarViewSchema],
  ["CalendarList", calendarListSchema],
  ["CalendarPutResult", calendarPutResultSchema],
  ["CalendarPutInput", calendarPutInputSchema],
  ["Health", healthSchema],
  ["Problem", problemSchema],
  ["FieldError", fieldErrorSchema],
];
