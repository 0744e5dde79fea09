/**
 * The input shapes of tasks (create, patch, and the commands' options), defined once with zod and shared
 * by the library, the HTTP API and `punctual/client`. Parsing maps the public snake_case JSON to the
 * domain's fields in this one place; every problem becomes a ValidationError naming the field.
 */
import { z } from "zod";
import { ValidationError } from "../domain/errors.js";
import type { FieldError } from "../domain/errors.js";
import type { ThreadId } from "../domain/ids.js";
import { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "../domain/options.js";
import { RUN_STATUSES, RUN_TRIGGERS } from "../domain/run.js";
import type { TaskOptions } from "../domain/options.js";
import { parseDuration, parseInstantText } from "../domain/schedule/iso-text.js";
import { parseSchedule } from "../domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../domain/schedule/schedule-spec.js";
import { TASK_LIMITS, TASK_STATUSES } from "../domain/task.js";
import type { TaskUserFields } from "../domain/task.js";
import {
  CONTEXT_MODES,
  TARGET_KINDS,
  THREAD_ID_PATTERN,
  WEBHOOK_METHODS,
} from "../domain/target.js";
import type { ExecutionContext, JsonValue, Target } from "../domain/target.js";
import type { DurationMs, Instant } from "../domain/time.js";
import { checkedAsAnyObject, documentedAs } from "./documented-shape.js";

/**
 * Any JSON value: a target's `input`, a run's `result`. Documented as such rather than as the recursive
 * union zod checks, which says nothing more and which generated TypeScript cannot express.
 */
export const jsonValueSchema: z.ZodType<JsonValue> = documentedAs(
  z.json(),
  z.unknown().meta({ description: "any JSON value" }),
);
const jsonValue = jsonValueSchema;
/** A duration as users write it: ISO-8601 of fixed length (`PT5M`, `P1D`) or a number of seconds. */
export const durationInputSchema = z
  .union([z.string(), z.number()])
  .meta({ description: "an ISO-8601 duration of fixed length (`PT5M`, `P1D`) or seconds" });
const duration = durationInputSchema;
/** An instant as the API writes it. */
export const instantSchema = z
  .string()
  .meta({ format: "date-time", description: "RFC 3339, UTC, `Z`" });
const name = z.string().min(1).max(200);
/** A header name (RFC 9110 5.1: a token). */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: visible characters, spaces and tabs (no CR, LF or NUL, RFC 9110 5.5). */
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** An absolute http or https URL (whether its host may be called is checked at launch, SPEC 8). */
const webhookUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine(
    (text) => {
      try {
        const { protocol } = new URL(text); // URL.parse needs Node 22
        return protocol === "https:" || protocol === "http:";
      } catch {
        return false;
      }
    },
    { error: "must be an absolute http or https URL" },
  );

export const agentTargetInputSchema = z.strictObject({
  kind: z.literal("agent"),
  server: name,
  assistant_id: name,
  input: jsonValue.optional(),
});

export const webhookTargetInputSchema = z.strictObject({
  kind: z.literal("webhook"),
  url: webhookUrl,
  method: z.enum(WEBHOOK_METHODS).optional(),
  headers: z
    .record(
      z
        .string()
        .min(1)
        .max(256)
        .regex(HTTP_TOKEN, { error: "a header name is letters, digits and !#$%&'*+-.^_`|~" }),
      z.string().max(4096).regex(HTTP_FIELD_VALUE, {
        error: "a header value has no line breaks or control characters",
      }),
    )
    .optional(),
  input: jsonValue.optional(),
  cancel_url: webhookUrl.nullable().optional(),
  idempotent: z.boolean().optional(),
});

export const handlerTargetInputSchema = z.strictObject({
  kind: z.literal("handler"),
  name,
  input: jsonValue.optional(),
});

export const targetSchema = z.discriminatedUnion("kind", [
  agentTargetInputSchema,
  webhookTargetInputSchema,
  handlerTargetInputSchema,
]);

export const contextSchema = z.strictObject({
  mode: z.enum(CONTEXT_MODES),
  thread_id: z.string().regex(THREAD_ID_PATTERN).nullable().optional(),
});

export const optionsSchema = z.strictObject({
  overlap: z.enum(OVERLAP_POLICIES).optional(),
  catch_up: z
    .strictObject({ window: duration.optional(), policy: z.enum(CATCH_UP_POLICIES).optional() })
    .optional(),
  late_after: duration.optional(),
  retry: z
    .strictObject({
      max_attempts: z.int().min(1).max(100).optional(),
      initial: duration.optional(),
      max_delay: duration.optional(),
    })
    .optional(),
  run_timeout: duration.optional(),
  queue_timeout: duration.optional(),
});

const metadataSchema = z
  .record(
    z.string().min(1).max(TASK_LIMITS.metadataKeyMax),
    z.string().max(TASK_LIMITS.metadataValueMax),
  )
  .refine((m) => Object.keys(m).length <= TASK_LIMITS.metadataKeysMax, {
    error: `at most ${TASK_LIMITS.metadataKeysMax} keys`,
  });

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
 * object through and `parseSchedule` checks its fields (SPEC 3), so every problem is reported at once
 * in the domain's words ("minute field: 61 is out of range 0-59"), as the API always answered.
 */
export const scheduleInputSchema = checkedAsAnyObject(scheduleShapeSchema);

const common = {
  // Lengths in characters are checked by the domain (validateUserFields); this only bounds the work.
  title: z
    .string()
    .min(1)
    .max(TASK_LIMITS.titleMax * 2),
  description: z
    .string()
    .max(TASK_LIMITS.descriptionMax * 2)
    .nullable()
    .optional(),
  schedule: scheduleInputSchema,
  target: targetSchema,
  context: contextSchema.optional(),
  options: optionsSchema.optional(),
  metadata: metadataSchema.optional(),
};

/** What a user sends to create a task. */
export const taskCreateSchema = z.strictObject(common);
export type TaskCreateInput = z.input<typeof taskCreateSchema>;

/** What a user sends to edit a task (PATCH: fields left out keep their value). */
export const taskPatchSchema = z.strictObject({
  title: common.title.optional(),
  description: common.description,
  schedule: common.schedule.optional(),
  target: targetSchema.optional(),
  context: contextSchema.optional(),
  options: optionsSchema.optional(),
  metadata: metadataSchema.optional(),
});
export type TaskPatchInput = z.input<typeof taskPatchSchema>;

/** The options of pausing a task. */
export const pauseInputSchema = z.strictObject({
  cancel_running: z
    .boolean()
    .optional()
    .meta({ description: "also cancel a launching or running run (default false)" }),
});
export type PauseInput = z.input<typeof pauseInputSchema>;

/** The options of resuming a task: what happens to the occurrences inside the pause. */
export const resumeInputSchema = z.strictObject({
  catch_up: z.enum(CATCH_UP_POLICIES).optional().meta({ description: "default none" }),
});
export type ResumeInput = z.input<typeof resumeInputSchema>;

/** The nominal times `[from, to)` to replay as backfill runs. */
export const backfillInputSchema = z.strictObject({ from: instantSchema, to: instantSchema });
export type BackfillInput = z.input<typeof backfillInputSchema>;

/** The filters of a task list (the HTTP API reads them from its query string). */
export const taskListFiltersSchema = z.strictObject({
  status: z.enum(TASK_STATUSES).optional(),
  target_kind: z.enum(TARGET_KINDS).optional(),
  thread_id: z.string().min(1).max(128).optional(),
});
export type TaskListFilters = z.input<typeof taskListFiltersSchema>;

/** The filters of a task's run list. */
export const runListFiltersSchema = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  trigger: z.enum(RUN_TRIGGERS).optional(),
});
export type RunListFilters = z.input<typeof runListFiltersSchema>;

/**
 * Turns zod issues into field errors with dotted snake_case paths; an issue with the whole value (an
 * unknown key, a wrong type) names `root`.
 */
export function fieldErrorsOf(error: z.ZodError, prefix = "", root = "body"): FieldError[] {
  return error.issues.map((issue) => ({
    field: [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".") || root,
    message: issue.message,
  }));
}

/** Parses `value` with `schema`, throwing a ValidationError that names every bad field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix = "", root = "body"): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(fieldErrorsOf(parsed.error, prefix, root));
  return parsed.data;
}

function durationOf(
  value: string | number | undefined,
  fallback: DurationMs,
  field: string,
  errors: FieldError[],
  minMs = 0,
): DurationMs {
  if (value === undefined) return fallback;
  const parsed = parseDuration(value, minMs);
  if (!parsed.ok) {
    errors.push({ field, message: parsed.problem });
    return fallback;
  }
  return parsed.value as DurationMs;
}

/** Task options: every field left out takes `base`'s value (the defaults, or the task's current ones). */
export function optionsFrom(
  input: z.output<typeof optionsSchema> | undefined,
  base: TaskOptions,
): TaskOptions {
  if (input === undefined) return base;
  const errors: FieldError[] = [];
  const options: TaskOptions = {
    overlap: input.overlap ?? base.overlap,
    catchUp: {
      windowMs: durationOf(
        input.catch_up?.window,
        base.catchUp.windowMs,
        "options.catch_up.window",
        errors,
      ),
      policy: input.catch_up?.policy ?? base.catchUp.policy,
    },
    lateAfterMs: durationOf(input.late_after, base.lateAfterMs, "options.late_after", errors),
    retry: {
      maxAttempts: input.retry?.max_attempts ?? base.retry.maxAttempts,
      initialMs: durationOf(
        input.retry?.initial,
        base.retry.initialMs,
        "options.retry.initial",
        errors,
        1000,
      ),
      maxDelayMs: durationOf(
        input.retry?.max_delay,
        base.retry.maxDelayMs,
        "options.retry.max_delay",
        errors,
        1000,
      ),
    },
    runTimeoutMs: durationOf(
      input.run_timeout,
      base.runTimeoutMs,
      "options.run_timeout",
      errors,
      1000,
    ),
    queueTimeoutMs: durationOf(
      input.queue_timeout,
      base.queueTimeoutMs,
      "options.queue_timeout",
      errors,
      1000,
    ),
  };
  if (options.retry.maxDelayMs < options.retry.initialMs) {
    errors.push({
      field: "options.retry.max_delay",
      message: "must not be shorter than retry.initial",
    });
  }
  if (errors.length > 0) throw new ValidationError(errors);
  return options;
}

export function targetFrom(input: z.output<typeof targetSchema>): Target {
  switch (input.kind) {
    case "agent":
      return {
        kind: "agent",
        server: input.server,
        assistantId: input.assistant_id,
        input: input.input ?? null,
      };
    case "webhook":
      return {
        kind: "webhook",
        url: input.url,
        method: input.method ?? "POST",
        headers: input.headers ?? {},
        input: input.input ?? null,
        cancelUrl: input.cancel_url ?? null,
        idempotent: input.idempotent ?? false,
      };
    case "handler":
      return { kind: "handler", name: input.name, input: input.input ?? null };
  }
}

export function contextFrom(input: z.output<typeof contextSchema> | undefined): ExecutionContext {
  if (input === undefined || input.mode === "fresh_thread_per_run")
    return { mode: "fresh_thread_per_run" };
  if (input.thread_id === undefined || input.thread_id === null) {
    throw ValidationError.of("context.thread_id", "reuse_thread requires a thread_id");
  }
  return { mode: "reuse_thread", threadId: input.thread_id as ThreadId };
}

export function scheduleFrom(input: unknown, now: Instant): ScheduleSpec {
  return parseSchedule(input, { referenceAt: now, anchorAt: now, field: "schedule" });
}

/** The user fields of a new task. */
export function taskFieldsFromCreate(
  value: unknown,
  now: Instant,
  defaults: TaskOptions,
): TaskUserFields {
  const input = parseWith(taskCreateSchema, value);
  return {
    title: input.title,
    description: input.description ?? null,
    schedule: scheduleFrom(input.schedule, now),
    target: targetFrom(input.target),
    context: contextFrom(input.context),
    options: optionsFrom(input.options, defaults),
    metadata: input.metadata ?? {},
  };
}

/** The user fields a patch changes; options merge into the task's current ones. */
export function taskFieldsFromPatch(
  value: unknown,
  now: Instant,
  current: TaskOptions,
): Partial<TaskUserFields> {
  const input = parseWith(taskPatchSchema, value);
  const patch: { -readonly [K in keyof TaskUserFields]?: TaskUserFields[K] } = {};
  if (input.title !== undefined) patch.title = input.title;
  if (input.description !== undefined) patch.description = input.description;
  if (input.schedule !== undefined) patch.schedule = scheduleFrom(input.schedule, now);
  if (input.target !== undefined) patch.target = targetFrom(input.target);
  if (input.context !== undefined) patch.context = contextFrom(input.context);
  if (input.options !== undefined) patch.options = optionsFrom(input.options, current);
  if (input.metadata !== undefined) patch.metadata = input.metadata;
  return patch;
}

/** An RFC 3339 instant with an offset (`...Z` or `+01:00`), for backfill bounds and `explain`. */
export function instantFrom(value: unknown, field: string): Instant {
  if (typeof value !== "string") throw ValidationError.of(field, "must be an RFC 3339 instant");
  const parsed = parseInstantText(value);
  if (!parsed.ok) throw ValidationError.of(field, parsed.problem);
  return parsed.value as Instant;
}
