/**
 * The input shapes of tasks (create and patch), defined once with zod and shared by the library, the
 * HTTP API and `punctual/client`. Parsing maps the public snake_case JSON to the domain's fields in this
 * one place; every problem becomes a ValidationError naming the field.
 */
import * as z from "zod";
import { ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import type { ThreadId } from "../../domain/ids.js";
import { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "../../domain/options.js";
import type { TaskOptions } from "../../domain/options.js";
import { parseDuration, parseInstantText } from "../../domain/schedule/iso-text.js";
import { parseSchedule, scheduleToInput } from "../../domain/schedule/schedule-spec.js";
import type { CalendarSnapshot, ScheduleSpec } from "../../domain/schedule/schedule-spec.js";
import { TASK_KEY_PATTERN, TASK_LIMITS } from "../../domain/task.js";
import type { TaskUserFields } from "../../domain/task.js";
import { CONTEXT_MODES, THREAD_ID_PATTERN } from "../../domain/target.js";
import type { ExecutionContext } from "../../domain/target.js";
import type { DurationMs, Instant } from "../../domain/time.js";
import { durationInputSchema } from "./input-primitives.js";
import { checkRunTimeout, checkTaskInputSize, DEFAULT_LIMITS } from "../policy/limits.js";
import type { Limits } from "../policy/limits.js";
import { scheduleInputSchema } from "./schedule-input.js";
import { targetFrom, targetSchema } from "./target-input.js";

const duration = durationInputSchema;

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

const KEY_RULE = "1 to 200 letters, digits, '.', '_', ':' or '-', not '.' or '..'";

/** A task's key (docs/semantics.md#task-keys). */
export const taskKeySchema = z
  .string()
  .regex(TASK_KEY_PATTERN, { error: `a key is ${KEY_RULE}` })
  .meta({ description: `the owner's unique name for the task: ${KEY_RULE}` });

/** A declared-schedules group (docs/library.md#declared-schedules). */
export const taskGroupSchema = z
  .string()
  .regex(TASK_KEY_PATTERN, { error: `a group is ${KEY_RULE}` })
  .meta({ description: "the declared-schedules group the task belongs to (prune acts on it)" });

const identity = {
  key: taskKeySchema.nullable().optional(),
  group: taskGroupSchema.nullable().optional(),
};

/** What a user sends to create a task. */
export const taskCreateSchema = z.strictObject({ ...common, ...identity });
export type TaskCreateInput = z.input<typeof taskCreateSchema>;

/** What a user sends to create several tasks at once (`POST /v1/tasks/batch`, at most 1,000). */
export const taskBatchCreateSchema = z.strictObject({
  tasks: z.array(taskCreateSchema).meta({
    description: "created all or none, answered in this order; at most 1,000",
  }),
});
export type TaskBatchCreateInput = z.input<typeof taskBatchCreateSchema>;

/**
 * What a user sends to upsert a task by key (docs/semantics.md#upsert): a whole definition (fields left
 * out take their defaults, unlike a patch). The HTTP API takes the key from the path.
 */
export const taskUpsertSchema = z.strictObject({ ...common, ...identity, key: taskKeySchema });
export type TaskUpsertInput = z.input<typeof taskUpsertSchema>;

/** A task's key and group as a create or upsert input gives them (null when absent). */
export interface TaskIdentity {
  readonly key: string | null;
  readonly group: string | null;
}

/** A create input's `key` and `group`, the rest let through: built once (zod compiles a schema on its first use). */
const identitySchema = z.looseObject(identity);

/** Reads `key` and `group` of a create input. @throws validation_failed for a bad key or a group without one */
export function taskIdentityFrom(value: unknown): TaskIdentity {
  const input = parseWith(identitySchema, value);
  const key = input.key ?? null;
  const group = input.group ?? null;
  if (group !== null && key === null) {
    throw ValidationError.of(
      "group",
      "a task in a group needs a key (declared schedules are keyed)",
    );
  }
  return { key, group };
}

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

export function contextFrom(input: z.output<typeof contextSchema> | undefined): ExecutionContext {
  if (input === undefined || input.mode === "fresh_thread_per_run")
    return { mode: "fresh_thread_per_run" };
  if (input.thread_id === undefined || input.thread_id === null) {
    throw ValidationError.of("context.thread_id", "reuse_thread requires a thread_id");
  }
  return { mode: "reuse_thread", threadId: input.thread_id as ThreadId };
}

/** The calendars a schedule's `exclude` names, read beforehand (see `calendarNamesIn`). */
export type CalendarsByName = ReadonlyMap<string, CalendarSnapshot>;

export function scheduleFrom(
  input: unknown,
  now: Instant,
  calendars?: CalendarsByName,
): ScheduleSpec {
  return parseSchedule(input, {
    referenceAt: now,
    anchorAt: now,
    field: "schedule",
    ...(calendars === undefined ? {} : { calendars }),
  });
}

/** The user fields of a new task. @throws limit_exceeded for a target input over its limit (limits.ts) */
export function taskFieldsFromCreate(
  value: unknown,
  now: Instant,
  defaults: TaskOptions,
  calendars?: CalendarsByName,
  limits: Limits = DEFAULT_LIMITS,
): TaskUserFields {
  checkTaskInputSize(value, limits);
  const input = parseWith(taskCreateSchema, value);
  const options = optionsFrom(input.options, defaults);
  if (input.options?.run_timeout !== undefined) checkRunTimeout(options.runTimeoutMs, limits);
  // key and group are read by taskIdentityFrom: they are not user fields an edit changes.
  return {
    title: input.title,
    description: input.description ?? null,
    schedule: scheduleFrom(input.schedule, now, calendars),
    target: targetFrom(input.target),
    context: contextFrom(input.context),
    options,
    metadata: input.metadata ?? {},
  };
}

/** The fields a schedule patch keeps from the stored schedule unless it names them, by schedule type. */
const KEPT_SCHEDULE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  cron: ["timezone", "start_at", "end_at", "max_runs", "jitter", "exclude"],
  interval: ["timezone", "start_at", "end_at", "max_runs", "jitter", "exclude"],
  once: ["timezone", "jitter"],
  // A recurrence's zone is its DTSTART's: nothing to keep there.
  rrule: ["start_at", "end_at", "max_runs", "jitter", "exclude"],
};

/**
 * A patch with its schedule completed from the stored one (docs/semantics.md#task-operations): the
 * patched schedule keeps the stored zone, `start_at`, `end_at`, `max_runs`, `jitter` and `exclude`
 * (those its type has) unless the patch names them; naming one as `null` clears it. The type may change.
 * A patch without a schedule, or with one that is not an object, is returned as it is.
 */
export function withStoredSchedule(patch: unknown, stored: ScheduleSpec): unknown {
  if (typeof patch !== "object" || patch === null || !("schedule" in patch)) return patch;
  const schedule: unknown = patch.schedule;
  if (typeof schedule !== "object" || schedule === null || Array.isArray(schedule)) return patch;
  const type: unknown = Reflect.get(schedule, "type");
  const kept = typeof type === "string" ? (KEPT_SCHEDULE_FIELDS[type] ?? []) : [];
  const before: Record<string, unknown> = scheduleToInput(stored);
  const completed: Record<string, unknown> = { ...schedule };
  for (const field of kept) {
    if (!(field in completed) && before[field] !== undefined) completed[field] = before[field];
  }
  return { ...patch, schedule: completed };
}

/** The user fields a patch changes; options merge into the task's current ones. @throws as create */
export function taskFieldsFromPatch(
  value: unknown,
  now: Instant,
  current: TaskOptions,
  calendars?: CalendarsByName,
  limits: Limits = DEFAULT_LIMITS,
): Partial<TaskUserFields> {
  checkTaskInputSize(value, limits);
  const input = parseWith(taskPatchSchema, value);
  const patch: { -readonly [K in keyof TaskUserFields]?: TaskUserFields[K] } = {};
  if (input.title !== undefined) patch.title = input.title;
  if (input.description !== undefined) patch.description = input.description;
  if (input.schedule !== undefined) patch.schedule = scheduleFrom(input.schedule, now, calendars);
  if (input.target !== undefined) patch.target = targetFrom(input.target);
  if (input.context !== undefined) patch.context = contextFrom(input.context);
  if (input.options !== undefined) {
    patch.options = optionsFrom(input.options, current);
    if (input.options.run_timeout !== undefined) {
      checkRunTimeout(patch.options.runTimeoutMs, limits);
    }
  }
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
