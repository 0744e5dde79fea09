/** The calendar repository port (docs/architecture.md#ports): an owner's named calendars. */
import type { Calendar } from "../calendar.js";
import type { OwnerId, TaskId } from "../ids.js";
import type { CalendarItem } from "../schedule/schedule-spec.js";
import type { Instant } from "../time.js";

/**
 * An owner's named calendars. Writes to one calendar are serialised with the task writes that check its
 * version (see `TaskRepository`).
 */
export interface CalendarRepository {
  /** The owner's calendars among `names` (the missing ones left out). */
  findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]>;
  /** Every calendar of the owner, by name. */
  listCalendars(owner: OwnerId): Promise<readonly Calendar[]>;
  /** Creates the calendar (version 1) or replaces its items (version + 1), and returns it. */
  putCalendar(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
  ): Promise<Calendar>;
  /**
   * Deletes the calendar; false when the owner has none of that name.
   * @throws calendar_in_use naming a task (not deleted) whose schedule names it; nothing is deleted
   */
  deleteCalendar(owner: OwnerId, name: string): Promise<boolean>;
  /** The owner's tasks (not deleted) whose schedule names the calendar, oldest first. */
  tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]>;
}
