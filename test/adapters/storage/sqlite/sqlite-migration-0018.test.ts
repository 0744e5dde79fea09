/**
 * SQLite migration 18 (docs/storage.md#calendars) upgrades a database whose tasks hold copies of their
 * calendars' items: each version a task holds is kept once in `calendar_versions`, the copies leave the
 * schedules, and each task still reads the items of the version it held (not the calendar's current one).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { calendarItemInput } from "../../../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../../../src/domain/task.js";
import { ALL } from "../../../contract/fixtures.js";
import { writeCalendarCopies } from "../../../helpers/calendar-copies-fixture.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-migration-0018");
afterAll(() => {
  files.remove();
});

const itemsOf = (task: Task | null) =>
  task?.schedule.type === "cron" && task.schedule.exclude[0]?.kind === "calendar"
    ? task.schedule.exclude[0].items.map(calendarItemInput)
    : null;

describe("SQLite migration 18 (calendars referenced by version)", () => {
  it("keeps each version a task held once, drops the copies, and each task reads the version it held", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    const { old, current, copies } = await writeCalendarCopies(before);
    await before.close();

    const db = openSqliteDatabase(path);
    // The database as the code before migration 18 left it.
    for (const { id, itemsJson } of copies) {
      db.prepare(
        "UPDATE tasks SET schedule = json_set(schedule, '$.exclude[0].itemsJson', ?) WHERE id = ?",
      ).run(itemsJson, id);
    }
    db.exec(`DROP TABLE calendar_versions;
      ALTER TABLE calendars DROP COLUMN holiday_region;
      ALTER TABLE calendars DROP COLUMN holiday_from_year;
      ALTER TABLE calendars DROP COLUMN holiday_to_year;
      DELETE FROM schema_migrations WHERE version = 18;`);
    db.close();

    const after = await openSqliteStore({ path, newId: createIdGenerator() });
    const reopened = openSqliteDatabase(path);
    try {
      const schedules = reopened.prepare("SELECT schedule FROM tasks").all() as {
        schedule: string;
      }[];
      expect(schedules.every((row) => !row.schedule.includes("itemsJson"))).toBe(true);
      expect(
        reopened.prepare("SELECT name, version FROM calendar_versions ORDER BY version").all(),
      ).toEqual([
        { name: "holidays", version: 1 },
        { name: "holidays", version: 2 },
      ]);
    } finally {
      reopened.close();
    }
    expect(itemsOf(await after.tasks.findTask(ALL, old.id))).toEqual(["2030-01-09"]);
    expect(itemsOf(await after.tasks.findTask(ALL, current.id))).toEqual(["2030-01-10"]);
    await after.close();
  });
});
