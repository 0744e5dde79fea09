/**
 * SQLite migration 21 (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal) puts a task's history
 * and the two occurrence keys in one index, `runs_occurrence_uq`. From a database of migration 20 with a run
 * in every state, every run and place is kept, the old indexes are gone, and the new one refuses a second
 * run of an occurrence and trigger while a manual run of the same instant and a backfilled one go in.
 */
import { afterAll, describe, expect, it } from "vitest";
import { brokenRunKey } from "../../../../src/adapters/storage/sqlite/sqlite-errors.js";
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

const files = tempFiles("sqlite-migration-0021");
afterAll(() => {
  files.remove();
});

const RUN_INDEXES = `SELECT name FROM sqlite_schema
  WHERE type = 'index' AND tbl_name = 'runs' AND sql IS NOT NULL ORDER BY name`;

describe("SQLite migration 21 (a task's history and its occurrence keys in one index)", () => {
  it("keeps every run (queued, launching, running, terminal) of a database at migration 20", async () => {
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
    // The database as the code before migration 21 left it.
    db.exec(`DROP INDEX runs_occurrence_uq;
      CREATE UNIQUE INDEX runs_scheduled_occurrence_uq ON runs (task_id, scheduled_for)
        WHERE "trigger" = 'scheduled';
      CREATE UNIQUE INDEX runs_backfill_occurrence_uq ON runs (task_id, scheduled_for)
        WHERE "trigger" = 'backfill';
      CREATE INDEX runs_history_idx ON runs (task_id, scheduled_for DESC, id DESC);
      DELETE FROM schema_migrations WHERE version = 21;`);
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
      expect(reopened.prepare(RUN_INDEXES).all()).toEqual(
        [
          "runs_manual_key_uq",
          "runs_occurrence_uq",
          "runs_owner_listing_idx",
          "runs_owner_rare_idx",
          "runs_owner_requested_idx",
          "runs_queued_at_idx",
        ].map((name) => ({ name })),
      );
      // A copy of the succeeded run under another id: refused as a scheduled run, kept as a backfilled
      // one (once) and as manual ones (each its own key), all at the same task and instant.
      const copy = (id: string, trigger: string, key: string): void => {
        reopened.exec(`CREATE TEMP TABLE IF NOT EXISTS c AS SELECT * FROM runs WHERE 0;
          DELETE FROM c;
          INSERT INTO c SELECT * FROM runs WHERE id = '${finished!.run.id}';
          UPDATE c SET id = '${id}', "trigger" = '${trigger}', idempotency_key = '${key}';
          INSERT INTO runs SELECT * FROM c;`);
      };
      const refusal = (id: string, trigger: "scheduled" | "backfill"): unknown => {
        try {
          copy(id, trigger, "");
          return null;
        } catch (error) {
          return brokenRunKey(error, trigger);
        }
      };
      expect(refusal("again", "scheduled")).toBe("runs_scheduled_occurrence_uq");
      copy("backfilled", "backfill", "");
      expect(refusal("backfilled-again", "backfill")).toBe("runs_backfill_occurrence_uq");
      copy("manual-1", "manual", "k1");
      copy("manual-2", "manual", "k2");
      const history = await after.runs.listRuns(ALL, finished!.run.taskId, { limit: 10 });
      expect(history.items.map((run) => run.id)).toEqual(
        [finished!.run.id, "backfilled", "manual-1", "manual-2"].sort().reverse(),
      );
    } finally {
      reopened.close();
    }
    // The runs carry on where they stopped: the queued one is claimed, the running one finishes.
    expect(await claimDue(after, minute(2))).toHaveLength(1);
    await recordCompletion(after, running!.run.id, { status: "succeeded" }, minute(2));
    await after.close();
  });
});
