/**
 * How a ScheduleSpec is stored: a JSON value that restores the same spec without re-running the checks
 * that depend on the current time. Storage adapters use only these two functions. Values stored by
 * earlier versions (without the fields added since) decode to the spec they meant.
 */
import { NO_DAY_ITEMS } from "./schedule/cron-day-items.js";
import type { CronExpression } from "./schedule/cron-expression.js";
import type {
  CalendarItem,
  CronSchedule,
  IntervalSchedule,
  ScheduleSpec,
} from "./schedule/schedule-spec.js";

/** The JSON value stored for `spec`. */
export function encodeSchedule(spec: ScheduleSpec): unknown {
  return spec;
}

/** A stored expression from before the day items (`L`, `W`, `#`) names none. */
function upgradeExpression(value: CronExpression): CronExpression {
  return (value as Partial<CronExpression>).dayItems === undefined
    ? { ...value, dayItems: NO_DAY_ITEMS }
    : value;
}

/** A cron spec stored before several rules per schedule held one expression in `cron`. */
interface StoredCronSpec extends Omit<CronSchedule, "rules" | "exclude"> {
  readonly rules?: readonly CronExpression[];
  readonly cron?: CronExpression;
  readonly exclude?: CronSchedule["exclude"];
}

/** The JSON value stored for a calendar's items. */
export function encodeCalendarItems(items: readonly CalendarItem[]): unknown {
  return items;
}

/** The items stored as `value` by `encodeCalendarItems`. */
export function decodeCalendarItems(value: unknown): CalendarItem[] {
  return (value as CalendarItem[]).map((item) =>
    item.kind === "days" ? { ...item, rule: upgradeExpression(item.rule) } : item,
  );
}

/** The spec stored as `value` by `encodeSchedule` (or by an earlier version of it). */
export function decodeSchedule(value: unknown): ScheduleSpec {
  const spec = value as ScheduleSpec;
  switch (spec.type) {
    case "once":
    case "rrule":
      return spec;
    case "interval": {
      const stored = spec as Partial<IntervalSchedule>;
      return { ...spec, timezone: stored.timezone ?? null, exclude: stored.exclude ?? [] };
    }
    case "cron": {
      const { cron, rules, exclude, ...rest } = spec as StoredCronSpec;
      const stored = rules ?? (cron === undefined ? [] : [cron]);
      return { ...rest, rules: stored.map(upgradeExpression), exclude: exclude ?? [] };
    }
  }
}
