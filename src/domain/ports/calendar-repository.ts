/** The calendar repository port (docs/architecture.md#ports): an owner's named calendars. */
import type { Calendar, CalendarHolidays } from "../calendar.js";
import type { OwnerId, TaskId } from "../ids.js";
import type { CalendarItem } from "../schedule/schedule-spec.js";
import type { Instant } from "../time.js";
import type { Page } from "./queries.js";

/** What an owner's calendars hold when a put is checked against the calendar quotas. */
export interface CalendarHoldings {
  /** The owner's calendars, the one being put included when it exists. */
  readonly calendars: number;
  /** The items of all of them together. */
  readonly items: number;
  /** The items of the calendar being put, or null when it does not exist yet. */
  readonly current: number | null;
}

/**
 * The calendar quota check a put runs in its transaction: the owner, what its calendars hold, and how
 * many items the put stores; it throws to refuse.
 */
export type CalendarQuotaCheck = (owner: OwnerId, held: CalendarHoldings, items: number) => void;

/** A page of an owner's calendars, by name. */
export interface CalendarQuery {
  /** Page size, 1..200. */
  readonly limit: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: string;
}

/**
 * An owner's named calendars. Writes to one calendar are serialised with the task writes that check its
 * version (see `TaskRepository`).
 */
export interface CalendarRepository {
  /** The owner's calendars among `names` (the missing ones left out). */
  findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]>;
  /**
   * A page of the owner's calendars, by name (byte order: the names are ASCII).
   * @throws validation_failed when the cursor is not one of this listing
   */
  listCalendars(owner: OwnerId, query: CalendarQuery): Promise<Page<Calendar>>;
  /**
   * Creates the calendar (version 1) or replaces its items (version + 1), and returns it. With `quota`,
   * it is called in the writing transaction with what the owner's calendars hold, under a lock that
   * the owner's other puts wait for, on every replica: a refusal it throws writes nothing (the
   * calendar quotas, exact under concurrency: docs/security.md#quotas).
   */
  putCalendar(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
    quota?: CalendarQuotaCheck,
    holidays?: CalendarHolidays | null,
  ): Promise<Calendar>;
  /**
   * Removes the stored versions of the calendar older than its current one (all of them once it is
   * deleted) that no task, deleted or not, references any more; returns how many. A put calls it once
   * the tasks naming the calendar have moved to the new version (docs/storage.md#calendar-versions).
   */
  pruneCalendarVersions(owner: OwnerId, name: string): Promise<number>;
  /**
   * The owners and names of the calendars following a region's holidays whose items end before
   * `throughYear`: the ones the runtime extends (docs/schedules.md#holidays), at most `limit`.
   */
  calendarsWithHolidaysBefore(
    throughYear: number,
    limit: number,
  ): Promise<readonly { readonly owner: OwnerId; readonly name: string }[]>;
  /**
   * Deletes the calendar; false when the owner has none of that name.
   * @throws calendar_in_use naming a task (not deleted) whose schedule names it; nothing is deleted
   */
  deleteCalendar(owner: OwnerId, name: string): Promise<boolean>;
  /** The owner's tasks (not deleted) whose schedule names the calendar, oldest first. */
  tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]>;
}
