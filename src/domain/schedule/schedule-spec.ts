/**
 * The schedule engine's entry point for the rest of punctual (docs/schedules.md): the `ScheduleSpec` types and the
 * functions over them. Each lives in its own module; this one only names them in one place.
 */
export type {
  CronSchedule,
  IntervalSchedule,
  OnceSchedule,
  RRuleSchedule,
  ScheduleBounds,
  ScheduleSpec,
  ScheduleType,
} from "./schedule-types.js";
export { ON_EXCLUDED, SCHEDULE_TYPES } from "./schedule-types.js";
export type { OnExcluded } from "./schedule-types.js";
export { MAX_MOVE_DAYS, movedFireOf } from "./moved-occurrence.js";
export type { OccurrenceFire } from "./moved-occurrence.js";
export { nextAfter } from "./next-after.js";
export { MAX_CRON_RULES, parseSchedule } from "./parse-schedule.js";
export type { ParseScheduleContext } from "./parse-schedule.js";
export { scheduleToInput } from "./schedule-input.js";
export type {
  CronScheduleInput,
  IntervalScheduleInput,
  OnceScheduleInput,
  RRuleScheduleInput,
  ScheduleInput,
} from "./schedule-input.js";
export { describeOccurrences } from "./describe-occurrences.js";
export type { DescribedOccurrence, DstNote, SuppressedFire } from "./describe-occurrences.js";
export { dstWarnings } from "./dst-warnings.js";
export {
  excludedAt,
  exclusionsOf,
  exclusionZoneOf,
  nextDueAfter,
  nextFireAfter,
  nextFireOccurrenceAfter,
  nextOccurrenceAfter,
} from "./next-fire.js";
export {
  calendarItemInput,
  calendarNamesIn,
  formatLocalDate,
  parseCalendarItems,
  CALENDAR_NAME_PATTERN,
  MAX_EXCLUSION_ITEMS,
  MAX_EXPANDED_EXCLUSION_ITEMS,
} from "./exclusions.js";
export { SCHEDULE_WORK_STEPS, STORED_SCHEDULE_WORK_STEPS, withWorkBudget } from "./work-budget.js";
export type {
  CalendarExclusion,
  CalendarItem,
  CalendarItemInput,
  CalendarSnapshot,
  Exclusion,
  ExclusionHit,
  ExclusionInput,
} from "./exclusions.js";
