/**
 * Calendars in memory: the reference semantics of `CalendarRepository`. Each method is one transaction
 * over `MemoryTables`, so a delete's in-use check and the delete are atomic.
 */
import type { Calendar, CalendarHolidays } from "../../../domain/calendar.js";
import { calendarStamps, namesCalendar } from "../../../domain/calendar.js";
import { CalendarChangedError, CalendarInUseError } from "../../../domain/errors.js";
import type { OwnerId, TaskId } from "../../../domain/ids.js";
import type {
  CalendarQuery,
  CalendarQuotaCheck,
  CalendarRepository,
} from "../../../domain/ports/calendar-repository.js";
import type { Page } from "../../../domain/ports/queries.js";
import { decodeCalendarItems, encodeCalendarItems } from "../../../domain/schedule-codec.js";
import type { CalendarItem } from "../../../domain/schedule/schedule-spec.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import type { CalendarStamp } from "../../../domain/calendar.js";
import type { MemoryTables } from "./memory-tables.js";
import { decodeNameCursor, nameKey, pageOf } from "../shared/page-cursor.js";

function calendarRow(calendar: Calendar): Calendar {
  const items = decodeCalendarItems(
    JSON.parse(JSON.stringify(encodeCalendarItems(calendar.items))),
  );
  return Object.freeze({ ...calendar, items: Object.freeze(items) });
}

/** The owner's tasks (not deleted) whose schedule names `name`, oldest first. */
export function memoryTasksUsing(tables: MemoryTables, owner: OwnerId, name: string): Task[] {
  return [...tables.tasks()]
    .filter((t) => t.owner === owner && t.deletedAt === null && namesCalendar(t.schedule, name))
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Refuses a task write whose calendar snapshots are not the calendars' current versions. */
export function checkMemoryStamps(
  tables: MemoryTables,
  owner: OwnerId,
  stamps: readonly CalendarStamp[],
): void {
  for (const stamp of stamps) {
    if (tables.calendar(owner, stamp.name)?.version !== stamp.version) {
      throw new CalendarChangedError(stamp.name);
    }
  }
}

export class MemoryCalendarRepository implements CalendarRepository {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]> {
    return this.#tables.atomically(() =>
      [...new Set(names)]
        .map((name) => this.#tables.calendar(owner, name))
        .filter((calendar): calendar is Calendar => calendar !== undefined)
        .sort(byName),
    );
  }

  listCalendars(owner: OwnerId, query: CalendarQuery): Promise<Page<Calendar>> {
    return this.#tables.atomically(() => {
      const after = query.cursor === undefined ? null : decodeNameCursor(query.cursor);
      const rows = [...this.#tables.calendars()]
        .filter((c) => c.owner === owner && (after === null || c.name > after))
        .sort(byName);
      return pageOf(rows, query.limit, (calendar) => nameKey(calendar.name));
    });
  }

  putCalendar(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
    quota?: CalendarQuotaCheck,
    holidays?: CalendarHolidays | null,
  ): Promise<Calendar> {
    return this.#tables.atomically(() => {
      const previous = this.#tables.calendar(owner, name);
      if (quota !== undefined) {
        const held = [...this.#tables.calendars()].filter((c) => c.owner === owner);
        quota(
          owner,
          {
            calendars: held.length,
            items: held.reduce((sum, c) => sum + c.items.length, 0),
            current: previous?.items.length ?? null,
          },
          items.length,
        );
      }
      const row = calendarRow({
        owner,
        name,
        items,
        version: (previous?.version ?? this.#referencedVersion(owner, name)) + 1,
        holidays: holidays == null ? null : { ...holidays },
        createdAt: previous?.createdAt ?? now,
        updatedAt: now,
      });
      this.#tables.putCalendar(owner, name, row);
      return row;
    });
  }

  deleteCalendar(owner: OwnerId, name: string): Promise<boolean> {
    return this.#tables.atomically(() => {
      if (this.#tables.calendar(owner, name) === undefined) return false;
      const [user] = memoryTasksUsing(this.#tables, owner, name);
      if (user !== undefined) throw new CalendarInUseError(name, user.id);
      this.#tables.putCalendar(owner, name, undefined);
      return true;
    });
  }

  /**
   * The highest version of a deleted calendar its deleted tasks still reference (0 for none): a
   * calendar made again starts after it, as on the SQL stores.
   */
  #referencedVersion(owner: OwnerId, name: string): number {
    let highest = 0;
    for (const task of this.#tables.tasks()) {
      if (task.owner !== owner) continue;
      for (const stamp of calendarStamps(task.schedule)) {
        if (stamp.name === name) highest = Math.max(highest, stamp.version);
      }
    }
    return highest;
  }

  /** Nothing to remove: the rows share each version's items list, which goes with its last task. */
  pruneCalendarVersions(): Promise<number> {
    return Promise.resolve(0);
  }

  calendarsWithHolidaysBefore(
    throughYear: number,
    limit: number,
  ): Promise<readonly { readonly owner: OwnerId; readonly name: string }[]> {
    return this.#tables.atomically(() =>
      [...this.#tables.calendars()]
        .filter((c) => c.holidays != null && c.holidays.throughYear < throughYear)
        .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : byName(a, b)))
        .slice(0, limit)
        .map((c) => ({ owner: c.owner, name: c.name })),
    );
  }

  tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]> {
    return this.#tables.atomically(() =>
      memoryTasksUsing(this.#tables, owner, name).map((task) => task.id),
    );
  }
}

function byName(a: Calendar, b: Calendar): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
