/**
 * SQLite migration 22 (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal) declares
 * `runs_owner_listing_idx` ascending, so that a new run is appended to it. From a database of migration 21
 * with a run in every state, every run and place is kept, and the owner's listing still reads newest
 * first through the index, page after page.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";
import { runLedger } from "./run-ledger-snapshot.js";

const files = tempFiles("sqlite-migration-0022");
afterAll(() => {
  files.remove();
});

const LISTING = "SELECT sql FROM sqlite_schema WHERE name = 'runs_owner_listing_idx'";

describe("SQLite migration 22 (the owner listing index ascending, appended to)", () => {
  it("keeps every run (queued, launching, running, terminal) of a database at migration 21", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    for (let i = 0; i < 4; i++) await insertTask(before, { title: `t${String(i)}` });
    await admitDue(before, minute(1));
    const claimed = await claimDue(before, minute(1), { limit: 3 });
    expect(claimed).toHaveLength(3);
    const [finished, running] = claimed;
    await recordLaunch(before, finished!, minute(1));
    await recordCompletion(before, finished!.run.id, { status: "succeeded" }, minute(1));
    await recordLaunch(before, running!, minute(1));
    await before.close();

    const db = openSqliteDatabase(path);
    // The database as the code before migration 22 left it.
    db.exec(`DROP INDEX runs_owner_listing_idx;
      CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for DESC, id DESC);
      DELETE FROM schema_migrations WHERE version = 22;`);
    const { runs: runsBefore, places: placesBefore } = runLedger(db);
    expect(
      db.prepare("SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status").all(),
    ).toEqual([
      { status: "launching", n: 1 },
      { status: "queued", n: 1 },
      { status: "running", n: 1 },
      { status: "succeeded", n: 1 },
    ]);
    db.close();

    const after = await openSqliteStore({ path, newId: createIdGenerator() });
    const reopened = openSqliteDatabase(path);
    try {
      expect(runLedger(reopened)).toEqual({ runs: runsBefore, places: placesBefore });
      expect(reopened.prepare(LISTING).get()).toEqual({
        sql: "CREATE INDEX runs_owner_listing_idx ON runs (owner, target_kind, scheduled_for, id)",
      });
    } finally {
      reopened.close();
    }
    // The listing reads newest first (ties by id, descending), two runs a page.
    const ids = (runsBefore as { id: string }[])
      .map((run) => run.id)
      .sort()
      .reverse();
    const first = await after.runs.searchRuns(ALL, { limit: 2 });
    const second = await after.runs.searchRuns(ALL, { limit: 2, cursor: first.nextCursor! });
    expect([...first.items, ...second.items].map((run) => run.id)).toEqual(ids);
    // The runs carry on where they stopped: the queued one is claimed, the running one finishes.
    expect(await claimDue(after, minute(2))).toHaveLength(1);
    await recordCompletion(after, running!.run.id, { status: "succeeded" }, minute(2));
    await after.close();
  });
});
