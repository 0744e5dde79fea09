/**
 * SQLite migration 20 (docs/storage.md#the-claim-reads-narrow-rows) stamps a task's definition row: a
 * column every write of the row moves (by trigger, whatever statement wrote it). From a database of
 * migration 19 with a run in every state, every run is kept as it was and every task starts at stamp 0.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  edit,
  insertTask,
  recordCompletion,
  recordLaunch,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";
import { runLedger } from "./run-ledger-snapshot.js";

const files = tempFiles("sqlite-migration-0020");
afterAll(() => {
  files.remove();
});

describe("SQLite migration 20 (a task's definition row stamped on every write)", () => {
  it("keeps every run (queued, launching, running, terminal) of a database at migration 19", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    // Four tasks, so that each holds a run in one state.
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
    // The database as the code before migration 20 left it.
    db.exec(`DROP TRIGGER tasks_stamped;
      ALTER TABLE tasks DROP COLUMN stamp;
      DELETE FROM schema_migrations WHERE version = 20;`);
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
      expect(reopened.prepare("SELECT DISTINCT stamp FROM tasks").all()).toEqual([{ stamp: 0 }]);
      // Any write of a definition row moves its stamp, once per statement.
      const [task] = (await after.tasks.listTasks(ALL, { limit: 1 })).items;
      await edit(after, ALL, task!.id, { title: "renamed" }, minute(2));
      reopened
        .prepare("UPDATE tasks SET webhook_secret = webhook_secret WHERE id = ?")
        .run(task!.id);
      expect(reopened.prepare("SELECT stamp FROM tasks WHERE id = ?").get(task!.id)).toEqual({
        stamp: 2,
      });
    } finally {
      reopened.close();
    }
    // The runs carry on where they stopped: the queued one is claimed, the running one finishes.
    expect(await claimDue(after, minute(2))).toHaveLength(1);
    await recordCompletion(after, running!.run.id, { status: "succeeded" }, minute(2));
    await after.close();
  });
});
