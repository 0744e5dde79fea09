/**
 * SQLite migration 19 (docs/schedules.md#moved-occurrences) adds the marker of a run from a moved
 * occurrence: a nullable column placed last; the runs of an existing database read back unmarked.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import { admitDue, insertTask } from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-migration-0019");
afterAll(() => {
  files.remove();
});

describe("SQLite migration 19 (a run from a moved occurrence says so)", () => {
  it("adds a nullable column last, and the runs already stored read back unmarked", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    await insertTask(before, { options: { overlap: "allow_all" } });
    await admitDue(before, minute(1));
    const [run] = (await admitDue(before, minute(2))).queuedRuns;
    await before.close();

    const db = openSqliteDatabase(path);
    // The database as the code before migration 19 left it.
    db.exec(`ALTER TABLE runs DROP COLUMN moved;
      DELETE FROM schema_migrations WHERE version = 19;`);
    db.close();

    const after = await openSqliteStore({ path, newId: createIdGenerator() });
    const reopened = openSqliteDatabase(path);
    try {
      const columns = reopened.prepare("PRAGMA table_info(runs)").all() as {
        name: string;
        notnull: number;
        dflt_value: unknown;
      }[];
      expect(columns.at(-1)).toMatchObject({ name: "moved", notnull: 0, dflt_value: null });
      expect(reopened.prepare("SELECT count(*) AS n FROM runs WHERE moved IS NULL").get()).toEqual({
        n: 2,
      });
    } finally {
      reopened.close();
    }
    expect(await after.runs.findRun(ALL, run!.id)).toEqual({ ...run, moved: false });
    await after.close();
  });
});
