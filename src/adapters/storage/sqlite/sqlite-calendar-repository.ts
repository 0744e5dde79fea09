/**
 * Calendars on SQLite (`calendars`, migration 0004; `calendar_versions` and the holiday region,
 * migration 0018). Each version's items are kept once in `calendar_versions`, written with the put,
 * and joined by every task read that names it (`CALENDAR_ITEMS_COLUMN`). Every write runs in one `BEGIN IMMEDIATE`
 * transaction, so a delete's in-use check, and a task write's check of its calendar snapshots
 * (`SqliteCalendarStamps`), are serialised against every other writer.
 */
import type { Calendar, CalendarHolidays, CalendarStamp } from "../../../domain/calendar.js";
import { CalendarChangedError, CalendarInUseError } from "../../../domain/errors.js";
import type { OwnerId, TaskId } from "../../../domain/ids.js";
import { ownerId, taskId } from "../../../domain/ids.js";
import type {
  CalendarHoldings,
  CalendarQuery,
  CalendarQuotaCheck,
  CalendarRepository,
} from "../../../domain/ports/calendar-repository.js";
import type { Page } from "../../../domain/ports/queries.js";
import { decodeNameCursor, nameKey, pageOf } from "../shared/page-cursor.js";
import {
  calendarItemsText,
  decodeCalendarItems,
  encodeCalendarItems,
} from "../../../domain/schedule-codec.js";
import type { CalendarItem } from "../../../domain/schedule/schedule-spec.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";

interface CalendarRow {
  readonly owner: string;
  readonly name: string;
  readonly items: string;
  readonly version: number;
  readonly created_at: number;
  readonly updated_at: number;
  readonly holiday_region: string | null;
  readonly holiday_from_year: number | null;
  readonly holiday_to_year: number | null;
}

const COLUMNS =
  "owner, name, items, version, created_at, updated_at, holiday_region, holiday_from_year, holiday_to_year";

function calendarFromRow(row: CalendarRow): Calendar {
  return {
    holidays:
      row.holiday_region === null
        ? null
        : {
            region: row.holiday_region,
            fromYear: row.holiday_from_year ?? 0,
            throughYear: row.holiday_to_year ?? 0,
          },
    owner: ownerId(row.owner),
    name: row.name,
    items: decodeCalendarItems(JSON.parse(row.items)),
    version: row.version,
    createdAt: instant(row.created_at),
    updatedAt: instant(row.updated_at),
  };
}

/**
 * The tasks (not deleted) of an owner whose schedule's `exclude` names a calendar, oldest first: the
 * schedule is JSON, its exclusions `{kind: "calendar", name, ...}` objects.
 */
const TASKS_USING = `SELECT t.id FROM tasks AS t
  WHERE t.owner = @owner AND t.deleted_at IS NULL
    AND EXISTS (SELECT 1 FROM json_each(t.schedule, '$.exclude') AS e
                WHERE json_extract(e.value, '$.kind') = 'calendar'
                  AND json_extract(e.value, '$.name') = @name)
  ORDER BY t.created_at, t.id`;

/** Whether a task of the owner, deleted or not, references version `v.version` of `v.name`. */
const REFERENCED = `EXISTS (SELECT 1 FROM tasks AS t, json_each(t.schedule, '$.exclude') AS e
  WHERE t.owner = v.owner AND json_extract(e.value, '$.kind') = 'calendar'
    AND json_extract(e.value, '$.name') = v.name AND json_extract(e.value, '$.version') = v.version)`;

/** The check a task write makes of its calendar snapshots, inside its own write transaction. */
export class SqliteCalendarStamps {
  readonly #version: Statement<[{ owner: string; name: string }], { version: number }>;

  constructor(db: SqliteDatabase) {
    this.#version = db.prepare(
      "SELECT version FROM calendars WHERE owner = @owner AND name = @name",
    );
  }

  /** @throws CalendarChangedError when a snapshot is not its calendar's current version */
  check(owner: OwnerId, stamps: readonly CalendarStamp[]): void {
    for (const stamp of stamps) {
      const row = this.#version.get({ owner, name: stamp.name });
      if (row?.version !== stamp.version) throw new CalendarChangedError(stamp.name);
    }
  }
}

export class SqliteCalendarRepository implements CalendarRepository {
  readonly #tx: SqliteTransactions;
  readonly #find: Statement<[{ owner: string; name: string }], CalendarRow>;
  readonly #list: Statement<[{ owner: string; after: string | null; limit: number }], CalendarRow>;
  readonly #holdings: Statement<[{ owner: string; name: string }], CalendarHoldings>;
  readonly #upsert: Statement<[CalendarRow], CalendarRow>;
  readonly #delete: Statement<[{ owner: string; name: string }]>;
  readonly #using: Statement<[{ owner: string; name: string }], { id: string }>;
  readonly #addVersion: Statement<
    [{ owner: string; name: string; version: number; items: string }]
  >;
  readonly #prune: Statement<[{ owner: string; name: string }]>;
  readonly #withHolidays: Statement<
    [{ through: number; limit: number }],
    { owner: string; name: string }
  >;

  constructor(options: { db: SqliteDatabase; tx: SqliteTransactions }) {
    const db = options.db;
    this.#tx = options.tx;
    this.#find = db.prepare(
      `SELECT ${COLUMNS} FROM calendars WHERE owner = @owner AND name = @name`,
    );
    // Names compare by bytes (SQLite's BINARY collation), as the memory store's and PostgreSQL's "C".
    this.#list = db.prepare(
      `SELECT ${COLUMNS} FROM calendars
       WHERE owner = @owner AND (@after IS NULL OR name > @after)
       ORDER BY name LIMIT @limit`,
    );
    this.#holdings = db.prepare(
      `SELECT count(*) AS calendars, coalesce(sum(json_array_length(items)), 0) AS items,
              max(CASE WHEN name = @name THEN json_array_length(items) END) AS current
       FROM calendars WHERE owner = @owner`,
    );
    // A calendar made again after a delete starts after the versions deleted tasks still reference,
    // so a (name, version) never stands for two lists of items.
    this.#upsert = db.prepare(
      `INSERT INTO calendars (${COLUMNS})
       VALUES (@owner, @name, @items,
               1 + coalesce((SELECT max(version) FROM calendar_versions
                             WHERE owner = @owner AND name = @name), 0),
               @created_at, @updated_at, @holiday_region, @holiday_from_year, @holiday_to_year)
       ON CONFLICT (owner, name) DO UPDATE SET
         items = excluded.items, version = calendars.version + 1, updated_at = excluded.updated_at,
         holiday_region = excluded.holiday_region, holiday_from_year = excluded.holiday_from_year,
         holiday_to_year = excluded.holiday_to_year
       RETURNING ${COLUMNS}`,
    );
    this.#addVersion = db.prepare(
      `INSERT INTO calendar_versions (owner, name, version, items)
       VALUES (@owner, @name, @version, @items)`,
    );
    this.#prune = db.prepare(
      `DELETE FROM calendar_versions AS v WHERE v.owner = @owner AND v.name = @name
         AND v.version < coalesce((SELECT version FROM calendars
                                   WHERE owner = @owner AND name = @name), 2147483647)
         AND NOT ${REFERENCED}`,
    );
    this.#withHolidays = db.prepare(
      `SELECT owner, name FROM calendars
       WHERE holiday_region IS NOT NULL AND holiday_to_year < @through
       ORDER BY owner, name LIMIT @limit`,
    );
    this.#delete = db.prepare("DELETE FROM calendars WHERE owner = @owner AND name = @name");
    this.#using = db.prepare(TASKS_USING);
  }

  findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]> {
    return settle(() =>
      this.#tx.read(() =>
        [...new Set(names)]
          .sort()
          .map((name) => this.#find.get({ owner, name }))
          .filter((row): row is CalendarRow => row !== undefined)
          .map(calendarFromRow),
      ),
    );
  }

  listCalendars(owner: OwnerId, query: CalendarQuery): Promise<Page<Calendar>> {
    return settle(() => {
      const after = query.cursor === undefined ? null : decodeNameCursor(query.cursor);
      const rows = this.#list.all({ owner, after, limit: query.limit + 1 }).map(calendarFromRow);
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
    return settle(() =>
      this.#tx.write(() => {
        // In the write transaction: SQLite's single writer makes the count and the upsert one step.
        if (quota !== undefined) {
          const held = this.#holdings.get({ owner, name });
          if (held === undefined) throw new Error("sqlite: the calendar count returned no row");
          quota(owner, held, items.length);
        }
        const row = this.#upsert.get({
          owner,
          name,
          items: JSON.stringify(encodeCalendarItems(items)),
          version: 1,
          created_at: now,
          updated_at: now,
          holiday_region: holidays?.region ?? null,
          holiday_from_year: holidays?.fromYear ?? null,
          holiday_to_year: holidays?.throughYear ?? null,
        });
        if (row === undefined) throw new Error("sqlite: the calendar upsert returned no row");
        this.#addVersion.run({
          owner,
          name,
          version: row.version,
          items: calendarItemsText(items),
        });
        return calendarFromRow(row);
      }),
    );
  }

  deleteCalendar(owner: OwnerId, name: string): Promise<boolean> {
    return settle(() =>
      this.#tx.write(() => {
        if (this.#find.get({ owner, name }) === undefined) return false;
        const user = this.#using.get({ owner, name });
        if (user !== undefined) throw new CalendarInUseError(name, user.id);
        this.#delete.run({ owner, name });
        // The versions deleted tasks still reference stay (reading such a task resolves them).
        this.#prune.run({ owner, name });
        return true;
      }),
    );
  }

  pruneCalendarVersions(owner: OwnerId, name: string): Promise<number> {
    return settle(() => this.#tx.write(() => this.#prune.run({ owner, name }).changes));
  }

  calendarsWithHolidaysBefore(
    throughYear: number,
    limit: number,
  ): Promise<readonly { readonly owner: OwnerId; readonly name: string }[]> {
    return settle(() =>
      this.#withHolidays
        .all({ through: throughYear, limit })
        .map((row) => ({ owner: ownerId(row.owner), name: row.name })),
    );
  }

  tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]> {
    return settle(() => this.#using.all({ owner, name }).map((row) => taskId(row.id)));
  }
}
