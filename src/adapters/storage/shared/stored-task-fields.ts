/**
 * Reads a task row's JSON columns back (docs/operations.md#a-task-that-does-not-parse): each is checked
 * for the shape the engine and the launchers rely on, never against today's input grammar or operator
 * maxima (those apply at create and edit only). A column that fails gives a stand-in and a defect item,
 * so one hand-edited or downgraded row is reported instead of failing every read that meets it.
 * Cost, measured on the shared 2-core machine under load (vitest, 50,000 rows): a cron task row took
 * 14 us to decode with the checks against 3 us for its JSON.parse alone; a once task row about the
 * same as its parse. Admission and claims read each task row once per fire.
 */
import * as z from "zod";
import {
  DEFAULT_TASK_OPTIONS,
  CATCH_UP_POLICIES,
  OVERLAP_POLICIES,
} from "../../../domain/options.js";
import type { TaskOptions } from "../../../domain/options.js";
import {
  calendarItemsFromText,
  decodeSchedule,
  resolveCalendars,
  unresolvedCalendars,
} from "../../../domain/schedule-codec.js";
import { SCHEDULE_TYPES } from "../../../domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../domain/schedule/schedule-spec.js";
import {
  CONTEXT_MODES,
  ON_RUN_COMPLETED,
  WEBHOOK_METHODS,
  WEBHOOK_SIGNATURES,
} from "../../../domain/target.js";
import type { ExecutionContext, Target } from "../../../domain/target.js";
import type { TaskDefect, TaskDefectField, TaskDefectItem } from "../../../domain/task-defect.js";
import type { Instant } from "../../../domain/time.js";
import { OldestFirst } from "./oldest-first.js";

const zones = new Map<string, boolean>();

/**
 * Whether this runtime's Intl knows the zone (the engine cannot compute in one it does not). `UTC` is
 * known without asking: every Intl must support it (ECMA-402), and the engine computes in it without
 * Intl (zone-offsets.ts), while a process's first `Intl.DateTimeFormat` loads ICU's zone data, 12-60 ms
 * of CPU measured on the benchmark's machine: the first task a replica reads paid it, in the burst.
 */
function knownZone(name: string): boolean {
  if (name === "UTC") return true;
  let known = zones.get(name);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: name });
      known = true;
    } catch {
      known = false;
    }
    zones.set(name, known);
  }
  return known;
}

const zone = z.string().refine(knownZone, { error: "not a time zone this runtime knows" });
const ms = z.number();
const values = (min: number, max: number) => z.array(z.int().min(min).max(max));

const cronExpression = z.looseObject({
  text: z.string(),
  seconds: values(0, 59).min(1),
  minutes: values(0, 59).min(1),
  hours: values(0, 23).min(1),
  daysOfMonth: values(1, 31),
  months: values(1, 12).min(1),
  daysOfWeek: values(0, 6),
  dayItems: z.looseObject({
    lastDay: z.array(z.int()),
    lastWorkday: z.boolean(),
    nearestWorkday: z.array(z.int()),
    lastWeekday: z.array(z.int()),
    nthWeekday: z.array(z.tuple([z.int(), z.int()])),
  }),
  dayOfMonthRestricted: z.boolean(),
  dayOfWeekRestricted: z.boolean(),
  fixedTime: z.boolean(),
});

const calendarItem = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("date"), day: z.int() }),
  z.looseObject({ kind: z.literal("range"), from: z.int(), to: z.int() }),
  // The parsed rule is stored by earlier versions only: the text is what a day rule is read from.
  z.looseObject({ kind: z.literal("days"), text: z.string(), rule: cronExpression.optional() }),
]);

const exclusion = z.union([
  calendarItem,
  z.looseObject({
    kind: z.literal("calendar"),
    name: z.string(),
    version: z.int(),
    // A reference (schedule-codec.ts); stored by earlier versions, its items as one JSON text or a list.
    itemsJson: z.string().optional(),
    items: z.array(calendarItem).optional(),
  }),
]);

const numbers = z.array(z.int()).nullable();
const recurrenceRule = z.looseObject({
  text: z.string(),
  freq: z.int().min(0).max(6),
  interval: z.int().min(1),
  count: z.int().nullable(),
  untilAt: ms.nullable(),
  byMonth: numbers,
  byWeekNo: numbers,
  byYearDay: numbers,
  byMonthDay: numbers,
  byWeekday: numbers,
  byNthWeekday: z.array(z.looseObject({ weekday: z.int(), n: z.int() })).nullable(),
  byHour: numbers,
  byMinute: numbers,
  bySecond: numbers,
  bySetPos: numbers,
  wkst: z.int().min(0).max(6),
  lastWall: ms.nullable(),
});

const bounds = {
  startAt: ms.nullable(),
  endAt: ms.nullable(),
  maxRuns: z.int().min(1).nullable(),
  jitterMs: ms.min(0),
};

const storedSchedule = z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("cron"),
    ...bounds,
    // Texts (schedule-codec.ts); parsed expressions as earlier versions stored them.
    rules: z.array(z.union([z.string(), cronExpression])).min(1),
    timezone: zone,
    exclude: z.array(exclusion),
  }),
  z.looseObject({
    type: z.literal("once"),
    ...bounds,
    runAt: ms,
    localRunAt: z.string().nullable(),
    timezone: zone,
  }),
  z.looseObject({
    type: z.literal("interval"),
    ...bounds,
    everyMs: ms.positive(),
    anchorAt: ms,
    timezone: zone.nullable(),
    exclude: z.array(exclusion),
  }),
  z.looseObject({
    type: z.literal("rrule"),
    ...bounds,
    text: z.string(),
    timezone: zone,
    dtstartWall: ms,
    rules: z.array(recurrenceRule).min(1),
    rdates: z.array(ms),
    exdates: z.array(ms),
    exclude: z.array(exclusion),
  }),
]);

/** Whether the stored schedule's check accepts `value` (for the test of `soundOnceSchedule`). */
export function storedScheduleAccepts(value: unknown): boolean {
  return storedSchedule.safeParse(value).success;
}

const jsonObject = z.record(z.string(), z.unknown());

const storedTarget = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("agent"),
    server: z.string(),
    assistantId: z.string(),
    input: z.unknown(),
    config: jsonObject.optional(),
    context: jsonObject.optional(),
    metadata: jsonObject.optional(),
    onRunCompleted: z.enum(ON_RUN_COMPLETED).optional(),
  }),
  z.looseObject({
    kind: z.literal("webhook"),
    url: z.string(),
    method: z.enum(WEBHOOK_METHODS),
    headers: z.record(z.string(), z.string()),
    input: z.unknown(),
    cancelUrl: z.string().nullable(),
    idempotent: z.boolean(),
    signature: z.enum(WEBHOOK_SIGNATURES).optional(),
  }),
  z.looseObject({ kind: z.literal("handler"), name: z.string(), input: z.unknown() }),
]);

const storedContext = z.union([
  z.looseObject({ mode: z.literal(CONTEXT_MODES[0]) }),
  z.looseObject({ mode: z.literal(CONTEXT_MODES[1]), threadId: z.string().min(1) }),
]);

const duration = ms.min(0);
const storedOptions = z.looseObject({
  overlap: z.enum(OVERLAP_POLICIES),
  catchUp: z.looseObject({ windowMs: duration, policy: z.enum(CATCH_UP_POLICIES) }),
  lateAfterMs: duration,
  retry: z.looseObject({ maxAttempts: z.int().min(1), initialMs: duration, maxDelayMs: duration }),
  runTimeoutMs: duration,
  queueTimeoutMs: duration,
});

const storedMetadata = z.record(z.string(), z.string());

/**
 * A JSON column as stored: its text, decoded through the memo below, or a function that reads its value
 * (and may throw: not JSON).
 */
export type StoredColumn = string | (() => unknown);

/** The JSON columns of a task row. */
export interface StoredTaskColumns {
  readonly schedule: StoredColumn;
  readonly target: StoredColumn;
  readonly context: StoredColumn;
  readonly options: StoredColumn;
  readonly metadata: StoredColumn;
  /**
   * The items of the calendar versions the schedule references, as the task read joins them
   * (`[[name, version, itemsText], ...]` as JSON text, or null for none); undefined where a read does not
   * join them (a claim: the run's execution reads no exclusion), which leaves the references unresolved.
   */
  readonly calendars?: string | null | undefined;
}

export interface DecodedTaskFields {
  readonly schedule: ScheduleSpec;
  readonly target: Target;
  readonly context: ExecutionContext;
  readonly options: TaskOptions;
  readonly metadata: Readonly<Record<string, string>>;
  /** The columns that did not parse; empty for a sound row. */
  readonly defects: readonly TaskDefectItem[];
}

/** Where a defective task's fields come from instead: inert values, never launched or admitted. */
function standIns(createdAt: Instant): Omit<DecodedTaskFields, "defects"> {
  return {
    schedule: {
      type: "once",
      runAt: createdAt,
      localRunAt: null,
      timezone: "UTC",
      startAt: null,
      endAt: null,
      maxRuns: null,
      jitterMs: 0 as ScheduleSpec["jitterMs"],
    },
    target: { kind: "handler", name: "", input: null },
    context: { mode: "fresh_thread_per_run" },
    options: DEFAULT_TASK_OPTIONS,
    metadata: {},
  };
}

const MESSAGE_MAX = 300;

/** The first problems zod found, as `path: message`, short enough to show in a list. */
function describeIssues(error: z.ZodError): string {
  const text = error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path === "" ? issue.message : `${path}: ${issue.message}`;
    })
    .join("; ");
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX - 3)}...` : text;
}

const isNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);
const isNumberOrNull = (value: unknown): boolean => value === null || isNumber(value);

/**
 * Whether `value` is a sound once schedule, checked by hand: true only where `storedSchedule` accepts it
 * (`test/adapters/storage/shared/stored-task-fields-once.test.ts` holds the two together), false sends it
 * to `storedSchedule` for the answer and its message. A once schedule's text holds its instant, so each
 * task of a burst has its own, which the memo below never shares: zod's check of it was about 3 us a fire.
 */
export function soundOnceSchedule(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Readonly<Record<string, unknown>>;
  const maxRuns = v["maxRuns"];
  const jitterMs = v["jitterMs"];
  const localRunAt = v["localRunAt"];
  const timezone = v["timezone"];
  return (
    v["type"] === "once" &&
    isNumber(v["runAt"]) &&
    isNumberOrNull(v["startAt"]) &&
    isNumberOrNull(v["endAt"]) &&
    (maxRuns === null || (Number.isSafeInteger(maxRuns) && (maxRuns as number) >= 1)) &&
    isNumber(jitterMs) &&
    jitterMs >= 0 &&
    (localRunAt === null || typeof localRunAt === "string") &&
    typeof timezone === "string" &&
    knownZone(timezone)
  );
}

/** What checking one column gave: its value, or why it has none. */
type Checked = { readonly value: unknown } | { readonly message: string };

/** Checks one column's value (read and restored) against its stored shape. */
function checkValue(
  read: () => unknown,
  schema: z.ZodType,
  restore: (value: unknown) => unknown,
): Checked {
  let value: unknown;
  try {
    value = restore(read());
  } catch (error) {
    return { message: error instanceof SyntaxError ? "not JSON" : errorMessage(error) };
  }
  if (schema === storedSchedule && soundOnceSchedule(value)) return { value };
  const parsed = schema.safeParse(value);
  return parsed.success ? { value } : { message: describeIssues(parsed.error) };
}

/**
 * Checked columns by their stored text, per column: a task row is read by admission and again by its
 * claim, and many tasks share a target, options or a cron schedule, so the same text would otherwise be
 * parsed and checked again on every fire (docs/storage.md#the-claim-path-on-postgresql). The key is the
 * text itself, so an edited or hand-corrupted row is checked afresh. Values are frozen, being shared by
 * every task read from the same text. Bounded: at most MEMO_ENTRIES texts per column, the oldest
 * forgotten first, and none longer than MEMO_TEXT_MAX (a large webhook body is checked each time instead).
 */
const MEMO_ENTRIES = 4096;
const MEMO_TEXT_MAX = 16 * 1024;
interface Memo {
  readonly checked: Map<string, Checked>;
  readonly oldest: OldestFirst<string>;
}
const memos = new Map<TaskDefectField, Memo>();

function memoOf(field: TaskDefectField): Memo {
  let memo = memos.get(field);
  if (memo === undefined) {
    const checked = new Map<string, Checked>();
    memo = { checked, oldest: new OldestFirst(checked) };
    memos.set(field, memo);
  }
  return memo;
}

/** Freezes a parsed JSON value and everything in it (it is shared through the memo). */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The column's value when it has the stored shape, else null with its defect item pushed. */
function check(
  field: TaskDefectField,
  column: StoredColumn,
  schema: z.ZodType,
  restore: (value: unknown) => unknown,
  defects: TaskDefectItem[],
): unknown {
  let checked: Checked;
  if (typeof column === "string") {
    const text = column;
    const memo = memoOf(field);
    const known = memo.checked.get(text);
    if (known === undefined) {
      checked = checkValue(() => JSON.parse(text), schema, restore);
      if ("value" in checked) deepFreeze(checked.value);
      if (text.length <= MEMO_TEXT_MAX) {
        if (memo.checked.size >= MEMO_ENTRIES) memo.oldest.forgetOldest();
        memo.checked.set(text, checked);
      }
    } else {
      checked = known;
    }
  } else {
    checked = checkValue(column, schema, restore);
  }
  if ("value" in checked) return checked.value;
  defects.push({ field, message: checked.message });
  return null;
}

const asIs = (value: unknown): unknown => value;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The spec of a stored schedule, upgraded from earlier versions' shapes, once its type is known. */
function restoreSchedule(value: unknown): unknown {
  const type: unknown =
    typeof value === "object" && value !== null ? Reflect.get(value, "type") : undefined;
  if (!SCHEDULE_TYPES.some((known) => known === type)) {
    const shown = typeof type === "string" ? `"${type}"` : "missing";
    throw new Error(`type: ${shown} is not ${SCHEDULE_TYPES.join(", ")}`);
  }
  return decodeSchedule(value);
}

const calendarVersionsSchema = z.array(z.tuple([z.string(), z.int(), z.string()]));

/**
 * The schedule with the items of the calendar versions the read joined; a version the store does not
 * hold is a defect (the schedule is then replaced by its stand-in), never a silent empty calendar.
 */
function withCalendarItems(
  schedule: ScheduleSpec,
  column: string | null,
  defects: TaskDefectItem[],
): ScheduleSpec | null {
  if (schedule.type === "once") return schedule;
  let byKey = new Map<string, string>();
  if (column !== null) {
    const parsed = calendarVersionsSchema.safeParse(JSON.parse(column));
    if (!parsed.success) {
      defects.push({ field: "schedule", message: "its calendar versions do not parse" });
      return null;
    }
    byKey = new Map(parsed.data.map(([name, version, text]) => [`${version}:${name}`, text]));
  }
  const resolved = resolveCalendars(schedule, (name, version) => {
    const text = byKey.get(`${version}:${name}`);
    return text === undefined ? undefined : calendarItemsFromText(text);
  });
  const missing = unresolvedCalendars(resolved);
  if (missing.length === 0) return resolved;
  const named = missing.map((m) => `"${m.name}" version ${String(m.version)}`).join(", ");
  defects.push({ field: "schedule", message: `calendar ${named} is not stored` });
  return null;
}

/** Decodes a row's JSON columns; `createdAt` anchors the stand-in schedule of a defective one. */
export function decodeTaskFields(
  columns: StoredTaskColumns,
  createdAt: Instant,
): DecodedTaskFields {
  const defects: TaskDefectItem[] = [];
  // Each value has passed its stored shape's check, or is null: the casts are that parse.
  const schedule = check(
    "schedule",
    columns.schedule,
    storedSchedule,
    restoreSchedule,
    defects,
  ) as ScheduleSpec | null;
  const resolved =
    schedule === null || columns.calendars === undefined
      ? schedule
      : withCalendarItems(schedule, columns.calendars, defects);
  const target = check("target", columns.target, storedTarget, asIs, defects) as Target | null;
  const context = check(
    "context",
    columns.context,
    storedContext,
    asIs,
    defects,
  ) as ExecutionContext | null;
  const options = check(
    "options",
    columns.options,
    storedOptions,
    asIs,
    defects,
  ) as TaskOptions | null;
  const metadata = check("metadata", columns.metadata, storedMetadata, asIs, defects) as Record<
    string,
    string
  > | null;
  if (defects.length === 0) {
    // Every check passed: none is null.
    return {
      schedule: resolved as ScheduleSpec,
      target: target as Target,
      context: context as ExecutionContext,
      options: options as TaskOptions,
      metadata: metadata as Record<string, string>,
      defects,
    };
  }
  const stand = standIns(createdAt);
  return {
    schedule: resolved ?? stand.schedule,
    target: target ?? stand.target,
    context: context ?? stand.context,
    options: options ?? stand.options,
    metadata: metadata ?? stand.metadata,
    defects,
  };
}

/** The task's defect from a row's decoded fields and its `defect_at` column. */
export function defectOf(fields: DecodedTaskFields, detectedAt: Instant | null): TaskDefect | null {
  return fields.defects.length === 0 ? null : { fields: fields.defects, detectedAt };
}

/** The options of a task row for run transitions: the defaults when the stored ones do not parse. */
export function decodeTaskOptions(column: StoredColumn): TaskOptions {
  const options = check("options", column, storedOptions, asIs, []) as TaskOptions | null;
  return options ?? DEFAULT_TASK_OPTIONS;
}

/**
 * A once task's `run_at` for run transitions, as a store reads it out of the schedule column (a number
 * of milliseconds, or its text): null when absent or not a whole number, so that a hand-edited schedule
 * makes no manual run the occurrence's (docs/operations.md#a-task-that-does-not-parse).
 */
export function onceAtOf(value: unknown): Instant | null {
  const ms = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof ms === "number" && Number.isSafeInteger(ms) ? (ms as Instant) : null;
}
