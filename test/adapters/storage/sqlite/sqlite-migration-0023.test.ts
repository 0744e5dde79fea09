/**
 * SQLite migration 23 (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal) leaves a task with
 * no next run out of `task_state_due_idx`. From a database of migration 22 with a run in every state, every
 * run, place and task state is kept, the index holds only the tasks with a next run, and a task due later
 * is still admitted through it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";
import { runLedger } from "./run-ledger-snapshot.js";

const files = tempFiles("sqlite-migration-0023");
afterAll(() => {
  files.remove();
});

/** The due index's entries, read from the index alone. */
const DUE_ENTRIES = `SELECT count(*) AS n FROM task_state INDEXED BY task_state_due_idx
  WHERE status = 'enabled' AND defect_at IS NULL AND next_run_at IS NOT NULL`;

describe("SQLite migration 23 (a task with no next run out of the due index)", () => {
  it("keeps every run (queued, launching, running, terminal) of a database at migration 22", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    for (let i = 0; i < 4; i++) {
      await insertTask(before, { title: `t${String(i)}`, schedule: onceAt(minute(1)) });
    }
    await admitDue(before, minute(1));
    const claimed = await claimDue(before, minute(1), { limit: 3 });
    expect(claimed).toHaveLength(3);
    const [finished, running] = claimed;
    await recordLaunch(before, finished!, minute(1));
    await recordCompletion(before, finished!.run.id, { status: "succeeded" }, minute(1));
    await recordLaunch(before, running!, minute(1));
    await before.close();

    const db = openSqliteDatabase(path);
    // The database as the code before migration 23 left it.
    db.exec(`DROP INDEX task_state_due_idx;
      CREATE INDEX task_state_due_idx ON task_state (next_run_at, task_id)
        WHERE status = 'enabled' AND defect_at IS NULL;
      DELETE FROM schema_migrations WHERE version = 23;`);
    const statesBefore = db.prepare("SELECT * FROM task_state ORDER BY task_id").all();
    // Once tasks admitted, none with a next run: those still enabled are held by the index (under NULL).
    expect(
      db
        .prepare(
          `SELECT count(*) AS n FROM task_state INDEXED BY task_state_due_idx
            WHERE status = 'enabled' AND defect_at IS NULL`,
        )
        .get(),
    ).toEqual({ n: 3 });
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
      expect(reopened.prepare("SELECT * FROM task_state ORDER BY task_id").all()).toEqual(
        statesBefore,
      );
      expect(reopened.prepare(DUE_ENTRIES).get()).toEqual({ n: 0 });
      // A task due later enters the index and is admitted through it.
      await insertTask(after, { schedule: onceAt(minute(3)) });
      expect(reopened.prepare(DUE_ENTRIES).get()).toEqual({ n: 1 });
      expect((await admitDue(after, minute(3))).queuedRuns).toHaveLength(1);
      expect(reopened.prepare(DUE_ENTRIES).get()).toEqual({ n: 0 });
    } finally {
      reopened.close();
    }
    // The runs carry on where they stopped: the queued one is claimed, the running one finishes.
    expect(await claimDue(after, minute(2))).toHaveLength(1);
    await recordCompletion(after, running!.run.id, { status: "succeeded" }, minute(2));
    await after.close();
  });
});
