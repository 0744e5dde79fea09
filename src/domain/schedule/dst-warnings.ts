/**
 * `dstWarnings`: human sentences about the fires a zone transition will move, suppress or repeat within a
 * horizon (docs/schedules.md#cron: returned as `warnings[]` when a task is created or edited; never an error).
 */
import { assertNever } from "../errors.js";
import type { Instant } from "../time.js";
import { formatInstant, formatWall } from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { countMatchingWalls } from "./cron-matcher.js";
import { rruleWallsBetween } from "./rrule-next.js";
import type { CronSchedule, OnceSchedule, RRuleSchedule, ScheduleSpec } from "./schedule-types.js";
import type { WallResolution } from "./wall-clock.js";
import { MAX_DST_SHIFT_MS, resolveWall, wallOf } from "./wall-clock.js";
import type { Transition } from "./zone-offsets.js";
import { transitionsBetween } from "./zone-offsets.js";

/** `2024-03-10 02:00` (seconds shown only when not zero). */
function wallText(wall: number): string {
  const text = formatWall(wall).replace("T", " ");
  return text.endsWith(":00") ? text.slice(0, -3) : text;
}

function fires(n: number): string {
  return n === 1 ? "1 fire" : `${n} fires`;
}

/** Picks the singular or plural form of a verb phrase for `n` fires. */
function verb(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/** `on 2024-03-10 clocks jump from 02:00 to 03:00`, with dates on both ends when they differ. */
function change(motion: string, from: number, to: number): string {
  const [a, b] = [wallText(from), wallText(to)];
  if (a.slice(0, 10) === b.slice(0, 10)) {
    return `on ${a.slice(0, 10)} clocks ${motion} from ${a.slice(11)} to ${b.slice(11)}`;
  }
  return `clocks ${motion} from ${a} to ${b}`;
}

function forwardWarning(rule: CronExpression, t: Transition): string | null {
  const from = t.at + t.offsetBefore;
  const to = t.at + t.offsetAfter;
  const { first, count: n } = countMatchingWalls(rule, from, to);
  if (first === null) return null;
  const where = change("jump", from, to);
  if (to - from > MAX_DST_SHIFT_MS) {
    return `${where} (a change of clock, not DST): ${fires(n)} in the skipped time ${verb(n, "does", "do")} not happen and ${verb(n, "is", "are")} not caught up`;
  }
  if (!rule.fixedTime) {
    return `${where}: ${fires(n)} in the skipped time ${verb(n, "does", "do")} not happen`;
  }
  const moved =
    n === 1
      ? `the fire at ${wallText(first).slice(11)} does not exist and runs`
      : `the ${n} fires from ${wallText(first).slice(11)} do not exist and run once`;
  return `${where}: ${moved} at ${wallText(to).slice(11)} (${formatInstant(t.at)}) instead`;
}

function backwardWarning(rule: CronExpression, t: Transition): string | null {
  const from = t.at + t.offsetAfter;
  const to = t.at + t.offsetBefore;
  const { count: n } = countMatchingWalls(rule, from, to);
  if (n === 0) return null;
  const where = change("go back", to, from);
  if (to - from > MAX_DST_SHIFT_MS) {
    return `${where} (a change of clock, not DST): ${fires(n)} in the repeated time ${verb(n, "runs", "run")} twice`;
  }
  if (rule.fixedTime) {
    return `${where}: ${fires(n)} in the repeated time ${verb(n, "runs", "run")} once, on the first pass`;
  }
  return `${where}: ${fires(n)} in the repeated time ${verb(n, "runs", "run")} twice, once on each pass`;
}

/**
 * The most DST sentences one schedule gets (docs/security.md#bounded-work): 32 expressions in a zone
 * with two changes a year would otherwise answer 64 per task, 64,000 for a batch.
 */
export const MAX_DST_WARNINGS = 8;

/** The sentences, each once, the first `MAX_DST_WARNINGS` of them and how many more there are. */
function bounded(warnings: readonly string[]): string[] {
  const distinct = [...new Set(warnings)];
  if (distinct.length <= MAX_DST_WARNINGS) return distinct;
  const more = distinct.length - (MAX_DST_WARNINGS - 1);
  return [
    ...distinct.slice(0, MAX_DST_WARNINGS - 1),
    `${more} more changes of clock in the next year move, skip or repeat fires of this schedule: its preview lists them.`,
  ];
}

function cronWarnings(spec: CronSchedule, from: number, to: number): string[] {
  const low = spec.startAt === null ? from : Math.max(from, spec.startAt);
  const high = spec.endAt === null ? to : Math.min(to, spec.endAt);
  const warnings: string[] = [];
  // With several expressions, each sentence says which one it is about.
  const listed = spec.rules.length > 1;
  for (const t of transitionsBetween(spec.timezone, low, high)) {
    for (const rule of spec.rules) {
      const warning =
        t.offsetAfter > t.offsetBefore ? forwardWarning(rule, t) : backwardWarning(rule, t);
      const which = listed ? `for "${rule.text}", ` : "";
      if (warning !== null) warnings.push(`In ${spec.timezone}, ${which}${warning}.`);
    }
  }
  return bounded(warnings);
}

/** `1 hour`, `30 minutes`, `1 day`: the length of a gap. */
function lengthText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes % 1440 === 0) return minutes === 1440 ? "1 day" : `${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? "1 hour" : `${minutes / 60} hours`;
  return `${minutes} minutes`;
}

/** The most instances of a rule collected around one transition (a SECONDLY rule has 3,600 an hour). */
const MAX_RRULE_WALLS = 100_000;

/** docs/schedules.md#rrule: a gap's instances run later by the gap's length; a repeated one runs once. */
function rruleWarnings(spec: RRuleSchedule, from: number, to: number): string[] {
  const low = spec.startAt === null ? from : Math.max(from, spec.startAt);
  const high = spec.endAt === null ? to : Math.min(to, spec.endAt);
  const warnings: string[] = [];
  for (const t of transitionsBetween(spec.timezone, low, high)) {
    const forward = t.offsetAfter > t.offsetBefore;
    const [a, b] = forward
      ? [t.at + t.offsetBefore, t.at + t.offsetAfter]
      : [t.at + t.offsetAfter, t.at + t.offsetBefore];
    const walls = rruleWallsBetween(spec, a, b, MAX_RRULE_WALLS);
    const [first] = walls;
    if (first === undefined) continue;
    const n = walls.length;
    if (forward) {
      const shift = lengthText(b - a);
      const where = change("jump", a, b);
      warnings.push(
        n === 1
          ? `In ${spec.timezone}, ${where}: the instance at ${wallText(first).slice(11)} does not exist and runs at ${wallText(first + b - a).slice(11)} (${formatInstant(first - t.offsetBefore)}) instead, read with the offset before the gap (RFC 5545 3.3.5).`
          : `In ${spec.timezone}, ${where}: ${fires(n)} from ${wallText(first).slice(11)} do not exist and run ${shift} later, read with the offset before the gap (RFC 5545 3.3.5); one that meets another instance runs once.`,
      );
    } else {
      warnings.push(
        `In ${spec.timezone}, ${change("go back", b, a)}: ${fires(n)} in the repeated time ${verb(n, "runs", "run")} once, on the first pass (RFC 5545 3.3.5).`,
      );
    }
  }
  return bounded(warnings);
}

function onceWarnings(spec: OnceSchedule, from: number, to: number): string[] {
  if (spec.localRunAt === null || spec.runAt <= from || spec.runAt > to) return [];
  const wall = wallOf(spec.timezone, spec.runAt);
  const local = spec.localRunAt.replace("T", " ");
  if (formatWall(wall) !== spec.localRunAt) {
    return [
      `run_at ${local} does not exist in ${spec.timezone} (clocks jump forward): it runs at ${wallText(wall)} (${formatInstant(spec.runAt)}) instead.`,
    ];
  }
  const resolution: WallResolution = resolveWall(spec.timezone, wall);
  if (resolution.instants.length > 1) {
    return [
      `run_at ${local} happens twice in ${spec.timezone} (clocks go back): it runs once, at the first (${formatInstant(spec.runAt)}).`,
    ];
  }
  return [];
}

/**
 * Sentences about the fires that zone transitions in `(from, from + horizonMs]` move, suppress or
 * repeat. Empty for intervals (elapsed time knows no DST) and for schedules DST does not touch.
 */
export function dstWarnings(spec: ScheduleSpec, from: Instant, horizonMs: number): string[] {
  const to = from + horizonMs;
  switch (spec.type) {
    case "cron":
      return cronWarnings(spec, from, to);
    case "once":
      return onceWarnings(spec, from, to);
    case "interval":
      return [];
    case "rrule":
      return rruleWarnings(spec, from, to);
    // Unreachable by type (the switch is exhaustive): not measured.
    /* v8 ignore next 2 */
    default:
      return assertNever(spec);
  }
}
