/**
 * Named calendars (docs/schedules.md#calendars): an owner's list of days to skip, which schedules name in
 * `exclude` as `{calendar: NAME}`. A schedule references the calendar at one version (the store keeps
 * each version's items once, and hands them back with the task it reads); editing the calendar moves
 * the references of the tasks that name it to the new version.
 */
import type { OwnerId } from "./ids.js";
import type { CalendarItem, Exclusion, ScheduleSpec } from "./schedule/schedule-spec.js";
import { exclusionsOf } from "./schedule/schedule-spec.js";
import type { Instant } from "./time.js";

/**
 * The region whose public holidays a calendar follows (docs/schedules.md#holidays): its items hold the
 * holidays of `fromYear` through `throughYear`, both included, extended as years pass.
 */
export interface CalendarHolidays {
  /** `DE-BY`, `US-CA`, ...: what the holiday source takes. */
  readonly region: string;
  readonly fromYear: number;
  readonly throughYear: number;
}

export interface Calendar {
  readonly owner: OwnerId;
  /** Unique per owner (`CALENDAR_NAME_PATTERN`). */
  readonly name: string;
  readonly items: readonly CalendarItem[];
  /** 1 when created, + 1 on each edit. */
  readonly version: number;
  /** The region whose public holidays the items follow, or null (undefined where a caller builds one). */
  readonly holidays?: CalendarHolidays | null;
  readonly createdAt: Instant;
  readonly updatedAt: Instant;
}

/** A calendar a schedule names, at the version its snapshot holds. */
export interface CalendarStamp {
  readonly name: string;
  readonly version: number;
}

/** The calendar snapshots a schedule holds. */
export function calendarStamps(spec: ScheduleSpec): CalendarStamp[] {
  return exclusionsOf(spec).flatMap((exclusion: Exclusion) =>
    exclusion.kind === "calendar" ? [{ name: exclusion.name, version: exclusion.version }] : [],
  );
}

/**
 * The distinct calendar snapshots a set of tasks holds, by owner: what a bulk insert checks once for
 * every task naming them.
 */
export function stampsByOwner(
  tasks: readonly { readonly owner: OwnerId; readonly schedule: ScheduleSpec }[],
): Map<OwnerId, CalendarStamp[]> {
  const byOwner = new Map<OwnerId, Map<string, CalendarStamp>>();
  for (const task of tasks) {
    for (const stamp of calendarStamps(task.schedule)) {
      const held = byOwner.get(task.owner) ?? new Map<string, CalendarStamp>();
      held.set(stampKey(stamp), stamp);
      byOwner.set(task.owner, held);
    }
  }
  return new Map([...byOwner].map(([owner, held]) => [owner, [...held.values()]]));
}

/**
 * The snapshots `after` holds that `before` did not (a new calendar, or another version): the ones a
 * write must check are still current, so that a write that does not touch them never conflicts.
 */
export function changedStamps(before: ScheduleSpec | null, after: ScheduleSpec): CalendarStamp[] {
  const held = new Set((before === null ? [] : calendarStamps(before)).map(stampKey));
  return calendarStamps(after).filter((stamp) => !held.has(stampKey(stamp)));
}

function stampKey(stamp: CalendarStamp): string {
  return `${stamp.version}:${stamp.name}`;
}

/** How many exclusion items a schedule holds with its calendars expanded. */
export function expandedExclusionItems(spec: ScheduleSpec): number {
  let count = 0;
  for (const exclusion of exclusionsOf(spec)) {
    count += exclusion.kind === "calendar" ? exclusion.items.length : 1;
  }
  return count;
}

/** Whether a schedule names the calendar `name`. */
export function namesCalendar(spec: ScheduleSpec, name: string): boolean {
  return calendarStamps(spec).some((stamp) => stamp.name === name);
}

/** The schedule with the snapshot of `calendar` replaced (a schedule that does not name it is unchanged). */
export function withCalendar(spec: ScheduleSpec, calendar: Calendar): ScheduleSpec {
  if (spec.type === "once") return spec;
  const exclude = spec.exclude.map((exclusion) =>
    exclusion.kind === "calendar" && exclusion.name === calendar.name
      ? { ...exclusion, version: calendar.version, items: calendar.items }
      : exclusion,
  );
  return { ...spec, exclude };
}
