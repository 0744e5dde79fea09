/**
 * Migration 27 (docs/storage.md#calendars) upgrades a database whose tasks hold copies of their
 * calendars' items: each version a task holds is kept once in `calendar_versions`, the copies leave the
 * schedules, and each task still reads the items of the version it held (not the calendar's current one).
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
} from "../../../../src/adapters/storage/postgres/postgres-migrations.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { calendarItemInput } from "../../../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../../../src/domain/task.js";
import { ALL } from "../../../contract/fixtures.js";
import { writeCalendarCopies } from "../../../helpers/calendar-copies-fixture.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

const itemsOf = (task: Task | null) =>
  task?.schedule.type === "cron" && task.schedule.exclude[0]?.kind === "calendar"
    ? task.schedule.exclude[0].items.map(calendarItemInput)
    : null;

describe("postgres migration 27 (calendars referenced by version)", () => {
  it("keeps each version a task held once, drops the copies, and each task reads the version it held", async () => {
    const pool = database.pool(2);
    const schema = database.freshSchema();
    const q = `"${schema}"`;
    const before = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    const { old, current, copies } = await writeCalendarCopies(before);
    await before.close();
    // The database as the code before migration 27 left it.
    for (const { id, itemsJson } of copies) {
      await pool.query(
        `UPDATE ${q}.tasks SET schedule = jsonb_set(schedule, '{exclude,0,itemsJson}', to_jsonb($1::text))
         WHERE id = $2::text`,
        [itemsJson, id],
      );
    }
    await pool.query(`DROP TABLE ${q}.calendar_versions;
      ALTER TABLE ${q}.calendars DROP COLUMN holiday_region, DROP COLUMN holiday_from_year,
        DROP COLUMN holiday_to_year;
      DELETE FROM ${q}.schema_migrations WHERE version = 27`);

    await migratePostgres(pool, schemaName(schema), POSTGRES_MIGRATIONS);
    const stored = await pool.query(`SELECT schedule::text AS s FROM ${q}.tasks`);
    expect((stored.rows as { s: string }[]).every((row) => !row.s.includes("itemsJson"))).toBe(
      true,
    );
    const versions = await pool.query(
      `SELECT name, version FROM ${q}.calendar_versions ORDER BY version`,
    );
    expect(versions.rows).toEqual([
      { name: "holidays", version: 1 },
      { name: "holidays", version: 2 },
    ]);
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(itemsOf(await after.tasks.findTask(ALL, old.id))).toEqual(["2030-01-09"]);
    expect(itemsOf(await after.tasks.findTask(ALL, current.id))).toEqual(["2030-01-10"]);
    await after.close();
  });
});
