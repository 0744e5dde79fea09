/**
 * Reading the calendars a schedule names before it is parsed, and writing a task again when one of
 * them changed meanwhile (the store refuses a stale snapshot: see `TaskRepository`).
 */
import { CalendarChangedError, ValidationError } from "../../domain/errors.js";
import type { OwnerId } from "../../domain/ids.js";
import { calendarNamesIn } from "../../domain/schedule/schedule-spec.js";
import type { Store } from "../../domain/ports/store.js";
import type { CalendarsByName } from "../shapes/task-input.js";

/** How many times a task write is tried while the calendars it names keep changing. */
export const CALENDAR_WRITE_ATTEMPTS = 3;

/** The schedule field of a task input (or the schedule itself), as written. */
export function scheduleOfInput(input: unknown): unknown {
  return typeof input === "object" && input !== null && "schedule" in input
    ? input.schedule
    : undefined;
}

/**
 * The owner's calendars that `schedule` (a public schedule shape) names, or undefined when it names
 * none. A missing calendar is left out: parsing then names it in a validation error.
 */
export async function readCalendars(
  store: Store,
  owner: OwnerId,
  schedule: unknown,
): Promise<CalendarsByName | undefined> {
  const names = calendarNamesIn(schedule);
  if (names.length === 0) return undefined;
  if (store.calendars === undefined) {
    throw ValidationError.of("schedule.exclude", `the ${store.kind} store keeps no calendars`);
  }
  const found = await store.calendars.findCalendars(owner, names);
  return new Map(found.map((calendar) => [calendar.name, calendar]));
}

/** Runs `write` again (reading the calendars again) when a calendar changed under it. */
export async function retryOnCalendarChange<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof CalendarChangedError) || attempt >= CALENDAR_WRITE_ATTEMPTS)
        throw error;
    }
  }
}
