/**
 * `parseSchedule`: turns the public schedule shape (unknown input) into a `ScheduleSpec`, checking every
 * field and collecting all problems into one `ValidationError` (docs/schedules.md).
 */
import { ValidationError, assertNever } from "../errors.js";
import type { DurationMs, Instant } from "../time.js";
import { durationMs, instant } from "../time.js";
import { MS_PER_DAY, ceilSecond, floorSecond, formatWall } from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { parseCron } from "./cron-expression.js";
import { parseDateTime, parseDuration, parseInstantText } from "./iso-text.js";
import type { ScheduleBounds, ScheduleSpec, ScheduleType } from "./schedule-types.js";
import type { RecurrenceParts } from "./rrule-next.js";
import { resolveRecurrence } from "./rrule-next.js";
import type { CalendarSnapshot, Exclusion } from "./exclusions.js";
import { parseExclusions } from "./exclusions.js";
import { ON_EXCLUDED, SCHEDULE_TYPES } from "./schedule-types.js";
import { DEFAULT_TIME_ZONE, timeZoneProblem } from "./time-zone-name.js";
import { isDstGap, resolveWall } from "./wall-clock.js";
import type { Fields, Problems } from "./schedule-problems.js";
import { isFields, problemsUnder, ruleField } from "./schedule-problems.js";
import { checkReachable } from "./schedule-reachable.js";
import { withWorkBudget } from "./work-budget.js";

/** What `parseSchedule` validates against. */
export interface ParseScheduleContext {
  /** "Now" of the caller: cron must fire within 30 years of it, and before `end_at`. */
  readonly referenceAt: Instant;
  /** Anchor of an interval without `start_at` (the task's creation instant). @default referenceAt */
  readonly anchorAt?: Instant;
  /** Prefix of the field names in errors. @default "schedule" */
  readonly field?: string;
  /**
   * Check that the schedule can still fire (cron within 30 years; an occurrence before `end_at`).
   * Pass `false` to reload a stored schedule whose end has passed. @default true
   */
  readonly checkReachable?: boolean;
  /**
   * The owner's calendars that `exclude` names (read beforehand, see `calendarNamesIn`); absent: a
   * calendar reference is refused (nothing can resolve it, as in `nextOccurrences`).
   */
  readonly calendars?: ReadonlyMap<string, CalendarSnapshot>;
  /**
   * A recurrence whose instances all lie before `referenceAt` is accepted (a preview lists nothing)
   * instead of refused (a task would never fire). @default false
   */
  readonly acceptEnded?: boolean;
}

const COMMON_KEYS = ["type", "jitter"];
const EXCLUDE_KEYS = ["exclude", "on_excluded"];
const KEYS: Readonly<Record<ScheduleType, readonly string[]>> = {
  cron: [...COMMON_KEYS, "cron", "timezone", "start_at", "end_at", "max_runs", ...EXCLUDE_KEYS],
  once: [...COMMON_KEYS, "run_at", "timezone"],
  interval: [
    ...COMMON_KEYS,
    "every",
    "start_at",
    "end_at",
    "max_runs",
    ...EXCLUDE_KEYS,
    "timezone",
  ],
  rrule: [...COMMON_KEYS, "rrule", "start_at", "end_at", "max_runs", ...EXCLUDE_KEYS],
};

/** A field's value, with `null` read as absent. */
function valueOf(input: Fields, key: string): unknown {
  const value = input[key];
  return value === null ? undefined : value;
}

function readZone(input: Fields, problems: Problems): string | null {
  const value = valueOf(input, "timezone");
  if (value === undefined) return DEFAULT_TIME_ZONE;
  if (typeof value !== "string") {
    problems.add("timezone", "must be a string such as Europe/Berlin");
    return null;
  }
  const problem = timeZoneProblem(value);
  if (problem !== null) problems.add("timezone", problem);
  return problem === null ? value : null;
}

/**
 * An instant field. With `roundUp`, a fraction of a second moves it to the next whole second: the engine
 * keeps whole seconds (docs/schedules.md#precision), and the answer shows the instant kept.
 */
function readInstant(
  input: Fields,
  key: string,
  problems: Problems,
  roundUp: boolean,
): Instant | null {
  const value = valueOf(input, key);
  if (value === undefined) return null;
  if (typeof value !== "string") {
    problems.add(key, "must be an ISO-8601 instant such as 2026-12-01T09:00:00Z");
    return null;
  }
  const parsed = parseInstantText(value);
  if (parsed.ok) return instant(roundUp ? ceilSecond(parsed.value) : parsed.value);
  problems.add(key, parsed.problem);
  return null;
}

function readBounds(input: Fields, problems: Problems): ScheduleBounds {
  const startAt = readInstant(input, "start_at", problems, true);
  const endAt = readInstant(input, "end_at", problems, false);
  if (startAt !== null && endAt !== null && endAt <= startAt) {
    problems.add("end_at", "must be after start_at");
  }
  const maxRuns = valueOf(input, "max_runs");
  if (maxRuns !== undefined && !(Number.isSafeInteger(maxRuns) && Number(maxRuns) >= 1)) {
    problems.add("max_runs", "must be a whole number of at least 1");
  }
  return {
    startAt,
    endAt,
    maxRuns: typeof maxRuns === "number" ? maxRuns : null,
    jitterMs: readJitter(input, problems),
  };
}

function readJitter(input: Fields, problems: Problems): DurationMs {
  const value = valueOf(input, "jitter");
  if (value === undefined) return durationMs(0);
  const parsed = parseDuration(value, 0);
  if (parsed.ok) return durationMs(parsed.value);
  problems.add("jitter", parsed.problem);
  return durationMs(0);
}

/** The most expressions one cron schedule holds. */
export const MAX_CRON_RULES = 32;

function readRule(text: unknown, field: string, problems: Problems): CronExpression | null {
  if (typeof text !== "string") {
    problems.add(field, 'must be a cron expression such as "0 9 * * 1-5"');
    return null;
  }
  const parsed = parseCron(text);
  if (parsed.ok) return parsed.value;
  for (const problem of parsed.problems) problems.add(field, problem);
  return null;
}

/** `cron`: one expression, or a list of them in one zone (their fires are the union). */
function readRules(input: Fields, problems: Problems): CronExpression[] | null {
  const value = valueOf(input, "cron");
  if (typeof value === "string") {
    const rule = readRule(value, "cron", problems);
    return rule === null ? null : [rule];
  }
  if (!Array.isArray(value)) {
    problems.add("cron", 'is required: a cron expression such as "0 9 * * 1-5", or a list of them');
    return null;
  }
  if (value.length === 0 || value.length > MAX_CRON_RULES) {
    problems.add("cron", `must hold 1 to ${MAX_CRON_RULES} expressions`);
    return null;
  }
  const rules = value.map((text: unknown, i) => readRule(text, ruleField(true, i), problems));
  return rules.every((rule) => rule !== null) ? rules : null;
}

/** Resolves `run_at` (an instant, or a local wall time in `zone` under the fixed-time rule). */
function readRunAt(
  input: Fields,
  zone: string | null,
  problems: Problems,
): { runAt: Instant; localRunAt: string | null } | null {
  const value = valueOf(input, "run_at");
  if (typeof value !== "string") {
    problems.add("run_at", "is required: an ISO-8601 date and time such as 2026-12-01T09:00:00Z");
    return null;
  }
  const parsed = parseDateTime(value);
  if (!parsed.ok) {
    problems.add("run_at", parsed.problem);
    return null;
  }
  // docs/schedules.md#precision: a fraction of a second rounds up to the next whole second.
  const wall = ceilSecond(parsed.value.wall);
  const offsetMs = parsed.value.offsetMs;
  if (offsetMs !== null) return { runAt: instant(ceilSecond(wall - offsetMs)), localRunAt: null };
  if (zone === null) return null;
  const { instants, gap } = resolveWall(zone, wall);
  const localRunAt = formatWall(wall);
  // docs/schedules.md#once: an overlap resolves to the first occurrence, a DST gap to the transition instant.
  const [first] = instants;
  if (first !== undefined) return { runAt: instant(first), localRunAt };
  if (gap !== null && isDstGap(gap)) return { runAt: instant(gap.at), localRunAt };
  problems.add(
    "run_at",
    `${localRunAt} does not exist in ${zone}: the zone skipped that time (a change of more than 3 hours)`,
  );
  return null;
}

function readEvery(input: Fields, problems: Problems): DurationMs | null {
  const value = valueOf(input, "every");
  if (value === undefined) {
    problems.add("every", "is required: an ISO-8601 duration such as PT5M, or a number of seconds");
    return null;
  }
  const parsed = parseDuration(value, 1000);
  if (parsed.ok) return durationMs(parsed.value);
  problems.add("every", parsed.problem);
  return null;
}

/** `exclude`: dates, ranges, day rules and named calendars (docs/schedules.md#exclude). */
function readExclude(input: Fields, problems: Problems, ctx: ParseScheduleContext): Exclusion[] {
  const value = valueOf(input, "exclude");
  if (value === undefined) return [];
  const { exclusions, errors } = parseExclusions(value, "exclude", {
    referenceDay: Math.floor(ctx.referenceAt / MS_PER_DAY),
    calendars: ctx.calendars ?? null,
  });
  for (const error of errors) problems.add(error.field, error.message);
  return exclusions;
}

/** `on_excluded` (docs/schedules.md#moved-occurrences): absent for `skip`, the default. */
function readOnExcluded(input: Fields, problems: Problems): { onExcluded?: "previous" | "next" } {
  const value = valueOf(input, "on_excluded");
  if (value === undefined || value === "skip") return {};
  if (value === "previous" || value === "next") return { onExcluded: value };
  problems.add("on_excluded", `must be one of ${ON_EXCLUDED.map((v) => `"${v}"`).join(", ")}`);
  return {};
}

/** `rrule`: the RFC 5545 text (docs/schedules.md#rrule); each problem names its line, part and rule. */
function readRecurrence(input: Fields, problems: Problems): RecurrenceParts | null {
  const value = valueOf(input, "rrule");
  if (typeof value !== "string") {
    problems.add(
      "rrule",
      'is required: RFC 5545 text such as "DTSTART;TZID=Europe/Berlin:20260105T093000\\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"',
    );
    return null;
  }
  if (value.length > MAX_RRULE_TEXT) {
    problems.add("rrule", `must be at most ${MAX_RRULE_TEXT} characters`);
    return null;
  }
  const resolved = resolveRecurrence(value);
  if (resolved.ok) return resolved.value;
  for (const problem of resolved.problems) problems.add("rrule", problem);
  return null;
}

/** The longest recurrence text accepted. */
export const MAX_RRULE_TEXT = 32_768;

function build(
  input: Fields,
  type: ScheduleType,
  problems: Problems,
  ctx: ParseScheduleContext,
): ScheduleSpec | null {
  switch (type) {
    case "cron": {
      const rules = readRules(input, problems);
      const timezone = readZone(input, problems);
      const bounds = readBounds(input, problems);
      const exclude = readExclude(input, problems, ctx);
      const onExcluded = readOnExcluded(input, problems);
      if (rules === null || timezone === null) return null;
      return { type, rules, timezone, ...bounds, exclude, ...onExcluded };
    }
    case "once": {
      const timezone = readZone(input, problems);
      const runAt = readRunAt(input, timezone, problems);
      const jitterMs = readJitter(input, problems);
      if (runAt === null || timezone === null) return null;
      const none = { startAt: null, endAt: null, maxRuns: null };
      return { type, ...runAt, timezone, ...none, jitterMs };
    }
    case "interval": {
      const everyMs = readEvery(input, problems);
      const bounds = readBounds(input, problems);
      const exclude = readExclude(input, problems, ctx);
      const timezone = valueOf(input, "timezone") === undefined ? null : readZone(input, problems);
      const onExcluded = readOnExcluded(input, problems);
      if (everyMs === null) return null;
      const anchorAt = bounds.startAt ?? instant(floorSecond(ctx.anchorAt ?? ctx.referenceAt));
      return { type, everyMs, anchorAt, ...bounds, timezone, exclude, ...onExcluded };
    }
    case "rrule": {
      const recurrence = readRecurrence(input, problems);
      const bounds = readBounds(input, problems);
      const exclude = readExclude(input, problems, ctx);
      const onExcluded = readOnExcluded(input, problems);
      if (recurrence === null) return null;
      return { type, ...recurrence, ...bounds, exclude, ...onExcluded };
    }
    default:
      return assertNever(type);
  }
}

/**
 * Validates a schedule in its public shape and returns its `ScheduleSpec`.
 *
 * @throws ValidationError (`validation_failed`) listing every faulty field, e.g. `schedule.cron`:
 * "minute field: 60 is out of range 0-59"; LimitExceededError (`schedule_work`) for a schedule too
 * expensive to check (work-budget.ts).
 * @example
 * parseSchedule({ type: "cron", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }, { referenceAt })
 */
export function parseSchedule(input: unknown, ctx: ParseScheduleContext): ScheduleSpec {
  return withWorkBudget(() => parseWithin(input, ctx));
}

function parseWithin(input: unknown, ctx: ParseScheduleContext): ScheduleSpec {
  const problems = problemsUnder(ctx.field ?? "schedule");
  if (!isFields(input)) {
    throw ValidationError.of(
      ctx.field ?? "schedule",
      "must be an object with a type: cron, once, interval or rrule",
    );
  }
  const type = SCHEDULE_TYPES.find((t) => t === input.type);
  if (type === undefined) {
    problems.add(
      "type",
      input.type === undefined
        ? "is required: cron, once, interval or rrule"
        : `unknown schedule type ${JSON.stringify(input.type)}: expected cron, once, interval or rrule`,
    );
    throw new ValidationError(problems.list);
  }
  for (const key of Object.keys(input).filter((k) => !KEYS[type].includes(k))) {
    problems.add(key, `is not a field of a ${type} schedule`);
  }
  const spec = build(input, type, problems, ctx);
  if (spec !== null && problems.list.length === 0 && ctx.checkReachable !== false) {
    checkReachable(
      spec,
      {
        referenceAt: ctx.referenceAt,
        cronListed: Array.isArray(input.cron),
        acceptEnded: ctx.acceptEnded === true,
      },
      problems,
    );
  }
  if (spec === null || problems.list.length > 0) throw new ValidationError(problems.list);
  return spec;
}
