/**
 * Calendars on PostgreSQL (`calendars`, migration 0005; `calendar_versions` and the holiday region,
 * migration 0027). Each version's items are kept once in `calendar_versions`, written in the put's
 * transaction, and joined by every task read that names it (`calendarItemsColumn`). A calendar's writes lock its row (`FOR UPDATE`,
 * or the upsert's own lock); a task write that brings a calendar snapshot locks the same row `FOR SHARE`
 * while it checks the version (`checkPostgresStamps`), so a delete's in-use check sees every task
 * committed before it and a task never keeps a snapshot of a calendar edited or deleted meanwhile.
 */
import type { Calendar, CalendarHolidays, CalendarStamp } from "../../../domain/calendar.js";
import { CalendarChangedError, CalendarInUseError } from "../../../domain/errors.js";
import type { OwnerId, TaskId } from "../../../domain/ids.js";
import { ownerId, taskId } from "../../../domain/ids.js";
import type {
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
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresQueryable } from "./postgres-pool.js";
import { instantOf, integer, record, text } from "./postgres-rows.js";
import { msToTimestamp, timestampToMs } from "./postgres-sql.js";
import { withTransaction } from "./with-transaction.js";

const COLUMNS = `owner, name, items, version, ${timestampToMs("created_at")} AS created_at,
  ${timestampToMs("updated_at")} AS updated_at, holiday_region, holiday_from_year, holiday_to_year`;

function holidaysOf(row: Record<string, unknown>): CalendarHolidays | null {
  const region = row["holiday_region"];
  if (typeof region !== "string") return null;
  return {
    region,
    fromYear: integer(row, "holiday_from_year"),
    throughYear: integer(row, "holiday_to_year"),
  };
}

function calendarFromRow(value: unknown): Calendar {
  const row = record(value);
  return {
    holidays: holidaysOf(row),
    owner: ownerId(text(row, "owner")),
    name: text(row, "name"),
    items: decodeCalendarItems(row["items"]),
    version: integer(row, "version"),
    createdAt: instantOf(row, "created_at"),
    updatedAt: instantOf(row, "updated_at"),
  };
}

/** `[{"kind": "calendar", "name": NAME}]`: what a schedule's `exclude` contains when it names NAME. */
function naming(name: string): string {
  return JSON.stringify([{ kind: "calendar", name }]);
}

/**
 * Refuses (CalendarChangedError) a task write whose calendar snapshots are not the current versions,
 * inside the writer's transaction; the rows stay share-locked until it ends.
 */
export async function checkPostgresStamps(
  ctx: PostgresContext,
  db: PostgresQueryable,
  owner: OwnerId,
  stamps: readonly CalendarStamp[],
): Promise<void> {
  if (stamps.length === 0) return;
  const result = await db.query(
    `SELECT name, version FROM ${ctx.schema.quoted}.calendars
     WHERE owner = $1::text AND name = ANY($2::text[]) ORDER BY name FOR SHARE`,
    [owner, stamps.map((stamp) => stamp.name)],
  );
  const current = new Map(
    result.rows.map((value) => {
      const row = record(value);
      return [text(row, "name"), integer(row, "version")] as const;
    }),
  );
  for (const stamp of stamps) {
    if (current.get(stamp.name) !== stamp.version) throw new CalendarChangedError(stamp.name);
  }
}

export class PostgresCalendarRepository implements CalendarRepository {
  readonly #ctx: PostgresContext;
  readonly #table: string;
  readonly #using: string;
  readonly #versions: string;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#table = `${ctx.schema.quoted}.calendars`;
    this.#versions = `${ctx.schema.quoted}.calendar_versions`;
    this.#using =
      `SELECT t.id FROM ${ctx.tasksTable} AS t` +
      ` WHERE t.owner = $1::text AND t.deleted_at IS NULL AND t.schedule -> 'exclude' @> $2::jsonb` +
      ` ORDER BY t.created_at, t.id`;
  }

  async findCalendars(owner: OwnerId, names: readonly string[]): Promise<readonly Calendar[]> {
    const result = await this.#ctx.pool.query(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE owner = $1::text AND name = ANY($2::text[])
       ORDER BY name`,
      [owner, [...new Set(names)]],
    );
    return result.rows.map(calendarFromRow);
  }

  async listCalendars(owner: OwnerId, query: CalendarQuery): Promise<Page<Calendar>> {
    const after = query.cursor === undefined ? null : decodeNameCursor(query.cursor);
    // COLLATE "C": byte order, as the other stores list, whatever the database's collation.
    const result = await this.#ctx.pool.query(
      `SELECT ${COLUMNS} FROM ${this.#table}
       WHERE owner = $1::text AND ($2::text IS NULL OR name COLLATE "C" > $2::text)
       ORDER BY name COLLATE "C" LIMIT $3::int`,
      [owner, after, query.limit + 1],
    );
    return pageOf(result.rows.map(calendarFromRow), query.limit, (c) => nameKey(c.name));
  }

  async putCalendar(
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
    quota?: CalendarQuotaCheck,
    holidays?: CalendarHolidays | null,
  ): Promise<Calendar> {
    return withTransaction(this.#ctx.pool, async (client) => {
      if (quota !== undefined) await this.#checkHoldings(client, owner, name, items.length, quota);
      const calendar = await this.#upsert(client, owner, name, items, now, holidays ?? null);
      await client.query(
        `INSERT INTO ${this.#versions} (owner, name, version, items)
         VALUES ($1::text, $2::text, $3::int4, $4::text)`,
        [owner, name, calendar.version, calendarItemsText(items)],
      );
      return calendar;
    });
  }

  async pruneCalendarVersions(owner: OwnerId, name: string): Promise<number> {
    const result = await this.#ctx.pool.query(
      `DELETE FROM ${this.#versions} AS v
       WHERE v.owner = $1::text AND v.name = $2::text
         AND v.version < COALESCE((SELECT version FROM ${this.#table}
                                   WHERE owner = $1::text AND name = $2::text), 2147483647)
         AND NOT EXISTS (SELECT 1 FROM ${this.#ctx.tasksTable} AS t
                         WHERE t.owner = $1::text AND t.schedule -> 'exclude' @> jsonb_build_array(
                           jsonb_build_object('kind', 'calendar', 'name', v.name, 'version', v.version)))`,
      [owner, name],
    );
    return result.rowCount ?? 0;
  }

  async calendarsWithHolidaysBefore(
    throughYear: number,
    limit: number,
  ): Promise<readonly { readonly owner: OwnerId; readonly name: string }[]> {
    const result = await this.#ctx.pool.query(
      `SELECT owner, name FROM ${this.#table}
       WHERE holiday_region IS NOT NULL AND holiday_to_year < $1::int4
       ORDER BY owner, name LIMIT $2::int4`,
      [throughYear, limit],
    );
    return result.rows.map((value) => {
      const row = record(value);
      return { owner: ownerId(text(row, "owner")), name: text(row, "name") };
    });
  }

  /**
   * The calendar quotas of a put, in its transaction: a transaction-scoped advisory lock keyed by the
   * schema and the owner makes every replica's puts for one owner take turns between the count and
   * the commit. Only puts with a quota take it.
   */
  async #checkHoldings(
    client: PostgresQueryable,
    owner: OwnerId,
    name: string,
    items: number,
    quota: CalendarQuotaCheck,
  ): Promise<void> {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [
      `punctual.calendars_per_owner:${this.#ctx.schema.name}:${owner}`,
    ]);
    const result = await client.query(
      `SELECT count(*)::int8 AS calendars,
              coalesce(sum(jsonb_array_length(items)), 0)::int8 AS items,
              max(CASE WHEN name = $2::text THEN jsonb_array_length(items) END)::int8 AS current
       FROM ${this.#table} WHERE owner = $1::text`,
      [owner, name],
    );
    const row = record(result.rows[0]);
    const current = row["current"];
    quota(
      owner,
      {
        calendars: integer(row, "calendars"),
        items: integer(row, "items"),
        current: current === null ? null : integer(row, "current"),
      },
      items,
    );
  }

  async #upsert(
    db: PostgresQueryable,
    owner: OwnerId,
    name: string,
    items: readonly CalendarItem[],
    now: Instant,
    holidays: CalendarHolidays | null,
  ): Promise<Calendar> {
    // A calendar made again after a delete starts after the versions deleted tasks still reference,
    // so a (name, version) never stands for two lists of items.
    const result = await db.query(
      `INSERT INTO ${this.#table} AS c (owner, name, items, version, created_at, updated_at,
                                        holiday_region, holiday_from_year, holiday_to_year)
       VALUES ($1::text, $2::text, $3::jsonb,
               1 + COALESCE((SELECT max(version) FROM ${this.#versions}
                             WHERE owner = $1::text AND name = $2::text), 0),
               ${msToTimestamp("$4::int8")}, ${msToTimestamp("$4::int8")},
               $5::text, $6::int4, $7::int4)
       ON CONFLICT (owner, name) DO UPDATE SET
         items = excluded.items, version = c.version + 1, updated_at = excluded.updated_at,
         holiday_region = excluded.holiday_region, holiday_from_year = excluded.holiday_from_year,
         holiday_to_year = excluded.holiday_to_year
       RETURNING ${COLUMNS}`,
      [
        owner,
        name,
        JSON.stringify(encodeCalendarItems(items)),
        now,
        holidays?.region ?? null,
        holidays?.fromYear ?? null,
        holidays?.throughYear ?? null,
      ],
    );
    return calendarFromRow(result.rows[0]);
  }

  deleteCalendar(owner: OwnerId, name: string): Promise<boolean> {
    return withTransaction(this.#ctx.pool, async (client) => {
      const locked = await client.query(
        `SELECT 1 FROM ${this.#table} WHERE owner = $1::text AND name = $2::text FOR UPDATE`,
        [owner, name],
      );
      if (locked.rows.length === 0) return false;
      // A new statement: it sees every task committed while this one waited for the row lock.
      const users = await client.query(`${this.#using} LIMIT 1`, [owner, naming(name)]);
      const user = users.rows[0];
      if (user !== undefined) throw new CalendarInUseError(name, text(record(user), "id"));
      await client.query(`DELETE FROM ${this.#table} WHERE owner = $1::text AND name = $2::text`, [
        owner,
        name,
      ]);
      // The versions deleted tasks still reference stay (reading such a task resolves them).
      await client.query(
        `DELETE FROM ${this.#versions} AS v WHERE v.owner = $1::text AND v.name = $2::text
           AND NOT EXISTS (SELECT 1 FROM ${this.#ctx.tasksTable} AS t
                           WHERE t.owner = $1::text AND t.schedule -> 'exclude' @> jsonb_build_array(
                             jsonb_build_object('kind', 'calendar', 'name', v.name, 'version', v.version)))`,
        [owner, name],
      );
      return true;
    });
  }

  async tasksUsingCalendar(owner: OwnerId, name: string): Promise<readonly TaskId[]> {
    const result = await this.#ctx.pool.query(this.#using, [owner, naming(name)]);
    return result.rows.map((row) => taskId(text(record(row), "id")));
  }
}
