/**
 * Whether a parsed schedule can still fire (docs/schedules.md): the checks `parseSchedule` runs last,
 * unless a stored schedule is reloaded (parse-schedule.ts `checkReachable: false`).
 */
import type { Instant } from "../time.js";
import { instant } from "../time.js";
import { MS_PER_DAY, formatInstant, wallMs } from "./civil-time.js";
import { firstMatchingWall } from "./cron-matcher.js";
import { nextCronFire } from "./cron-next.js";
import { nextAfter, nextRRuleInstanceOf } from "./next-after.js";
import { exclusionsOf, nextFireAfter } from "./next-fire.js";
import { instantOfWall, nextRRuleInstance } from "./rrule-next.js";
import type { RRuleSchedule, ScheduleSpec } from "./schedule-types.js";
import type { Problems } from "./schedule-problems.js";
import { ruleField } from "./schedule-problems.js";
import { MAX_YEAR, MIN_YEAR } from "./zone-offsets.js";

/** How far ahead a schedule must fire: 30 years. */
export const THIRTY_YEARS_MS = Math.round(30 * 365.2425 * MS_PER_DAY);

/** What the checks need of the caller. */
export interface ReachableContext {
  /** "Now" of the caller. */
  readonly referenceAt: Instant;
  /** Whether `cron` was written as a list (each expression's field is then `cron.N`). */
  readonly cronListed: boolean;
  /** A recurrence whose instances all lie before `referenceAt` is accepted. */
  readonly acceptEnded: boolean;
}

/**
 * Each cron expression must fire within 30 years (docs/schedules.md#cron), and every schedule before
 * its `end_at` (docs/schedules.md#bounds-and-jitter).
 */
export function checkReachable(
  spec: ScheduleSpec,
  ctx: ReachableContext,
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
    const listed = ctx.cronListed;
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
  if (spec.type === "rrule" && !rruleReachable(spec, from, problems, ctx.acceptEnded)) {
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
