/**
 * `parseSchedule`: turns the public schedule shape (unknown input) into a `ScheduleSpec`, checking every
 * field and collecting all problems into one `ValidationError` (docs/schedules.md).
 */
import type { FieldError } from "../errors.js";
import { ValidationError, assertNever } from "../errors.js";
import type { DurationMs, Instant } from "../time.js";
import { durationMs, instant } from "../time.js";
import {
  MS_PER_DAY,
  ceilSecond,
  floorSecond,
  formatInstant,
  formatWall,
  wallMs,
} from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { parseCron } from "./cron-expression.js";
import { firstMatchingWall } from "./cron-matcher.js";
import { nextCronFire } from "./cron-next.js";
import { parseDateTime, parseDuration, parseInstantText } from "./iso-text.js";
import type {
  RRuleSchedule,
  ScheduleBounds,
  ScheduleSpec,
  ScheduleType,
} from "./schedule-types.js";
import { nextAfter, nextRRuleInstanceOf } from "./next-after.js";
import type { RecurrenceParts } from "./rrule-next.js";
import { instantOfWall, nextRRuleInstance, resolveRecurrence } from "./rrule-next.js";
import { exclusionsOf, nextFireAfter } from "./next-fire.js";
import type { CalendarSnapshot, Exclusion } from "./exclusions.js";
import { parseExclusions } from "./exclusions.js";
import { SCHEDULE_TYPES } from "./schedule-types.js";
import { DEFAULT_TIME_ZONE, timeZoneProblem } from "./time-zone-name.js";
import { isDstGap, resolveWall } from "./wall-clock.js";
import { withWorkBudget } from "./work-budget.js";
import { MAX_YEAR, MIN_YEAR } from "./zone-offsets.js";

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
const KEYS: Readonly<Record<ScheduleType, readonly string[]>> = {
  cron: [...COMMON_KEYS, "cron", "timezone", "start_at", "end_at", "max_runs", "exclude"],
  once: [...COMMON_KEYS, "run_at", "timezone"],
  interval: [...COMMON_KEYS, "every", "start_at", "end_at", "max_runs", "exclude", "timezone"],
  rrule: [...COMMON_KEYS, "rrule", "start_at", "end_at", "max_runs", "exclude"],
};
const THIRTY_YEARS_MS = Math.round(30 * 365.2425 * MS_PER_DAY);

type Fields = Readonly<Record<string, unknown>>;

/** Field errors collected under one prefix (`schedule.cron`, ...). */
interface Problems {
  readonly list: FieldError[];
  add(name: string, message: string): void;
}

function problemsUnder(prefix: string): Problems {
  const list: FieldError[] = [];
  return {
    list,
    add: (name, message) =>
      list.push({ field: prefix === "" ? name : `${prefix}.${name}`, message }),
  };
}

function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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

/** The field naming rule `index` of a schedule: `cron`, or `cron.1` when `cron` is a list. */
function ruleField(listed: boolean, index: number): string {
  return listed ? `cron.${index}` : "cron";
}

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
      if (rules === null || timezone === null) return null;
      return { type, rules, timezone, ...bounds, exclude };
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
      if (everyMs === null) return null;
      const anchorAt = bounds.startAt ?? instant(floorSecond(ctx.anchorAt ?? ctx.referenceAt));
      return { type, everyMs, anchorAt, ...bounds, timezone, exclude };
    }
    case "rrule": {
      const recurrence = readRecurrence(input, problems);
      const bounds = readBounds(input, problems);
      const exclude = readExclude(input, problems, ctx);
      if (recurrence === null) return null;
      return { type, ...recurrence, ...bounds, exclude };
    }
    default:
      return assertNever(type);
  }
}

/**
 * Each cron expression must fire within 30 years (docs/schedules.md#cron), and every schedule before
 * its `end_at` (docs/schedules.md#bounds-and-jitter). `input` is the schedule as written (a list of
 * expressions names each one's field).
 */
function checkReachable(
  spec: ScheduleSpec,
  input: Fields,
  ctx: ParseScheduleContext,
  problems: Problems,
): void {
  const referenceAt = ctx.referenceAt;
  const from = spec.startAt === null ? referenceAt : Math.max(referenceAt, spec.startAt - 1);
  if (spec.type === "cron" && (from < wallMs(MIN_YEAR, 1, 2) || from > wallMs(MAX_YEAR, 1, 1))) {
    problems.add("cron", "cron schedules are evaluated only between the years 1 and 9999");
    return;
  }
  if (spec.type === "cron") {
    const until = from + THIRTY_YEARS_MS;
    const listed = Array.isArray(input.cron);
    spec.rules.forEach((rule, i) => {
      const fire = nextCronFire(rule, spec.timezone, from, until);
      if (fire !== null && fire.at <= until) return;
      const anyDate = firstMatchingWall(rule, from - MS_PER_DAY, until + MS_PER_DAY) !== null;
      problems.add(
        ruleField(listed, i),
        anyDate
          ? `the expression cannot fire in ${spec.timezone} within 30 years of ${formatInstant(from)}`
          : "the day-of-month, month and day-of-week fields never match a real date within 30 years",
      );
    });
    if (problems.list.length > 0) return;
  }
  if (spec.type === "rrule" && !rruleReachable(spec, from, problems, ctx.acceptEnded === true)) {
    return;
  }
  if (spec.endAt !== null && nextAfter(spec, referenceAt) === null) {
    const since = spec.startAt === null ? "now" : "start_at";
    problems.add("end_at", `the schedule has no occurrence between ${since} and end_at`);
    return;
  }
  if (exclusionsOf(spec).length > 0) checkNotAllExcluded(spec, from, problems);
}

/**
 * docs/schedules.md#rrule: each RRULE must have an instance within 30 years of DTSTART (a rule that never
 * fires would cost every later search its whole horizon), and the recurrence one within 30 years of
 * `from` or of DTSTART when that is later.
 */
function rruleReachable(
  spec: RRuleSchedule,
  from: number,
  problems: Problems,
  acceptEnded: boolean,
): boolean {
  const start = instantOfWall(spec.timezone, spec.dtstartWall);
  spec.rules.forEach((rule, i) => {
    const alone = { ...spec, rules: [rule], rdates: [], exdates: [], startAt: null, endAt: null };
    const first = nextRRuleInstance(alone, start - 1, start + THIRTY_YEARS_MS);
    if (first === null) {
      const line = spec.rules.length > 1 ? `RRULE ${i + 1} (${rule.text})` : "the RRULE";
      problems.add("rrule", `${line} has no instance within 30 years of DTSTART`);
    }
  });
  if (problems.list.length > 0) return false;
  const since = Math.max(from, start - 1);
  const first = nextRRuleInstanceOf({ ...spec, endAt: null }, since);
  if (first !== null && first.at <= since + THIRTY_YEARS_MS) return true;
  if (first === null && acceptEnded) return true;
  problems.add(
    "rrule",
    `the recurrence has no instance in ${spec.timezone} within 30 years of ${formatInstant(since)}`,
  );
  return false;
}

/** A schedule whose exclusions leave no fire (within 30 years, or before `end_at`) is refused. */
function checkNotAllExcluded(spec: ScheduleSpec, from: number, problems: Problems): void {
  // Searched over the 30 years only (plus a day for the zone's offset), not the stored task's horizon.
  const fire = nextFireAfter(spec, instant(from), Math.ceil(THIRTY_YEARS_MS / MS_PER_DAY) + 1);
  if (fire !== null && fire <= from + THIRTY_YEARS_MS) return;
  problems.add(
    "exclude",
    spec.endAt === null
      ? "excludes every occurrence within 30 years"
      : "excludes every occurrence before end_at",
  );
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
    checkReachable(spec, input, ctx, problems);
  }
  if (spec === null || problems.list.length > 0) throw new ValidationError(problems.list);
  return spec;
}
