/**
 * Migration 18 (docs/storage.md#write-ahead-log-per-fire) upgrades a database of schema 17 holding
 * queued, launching, running and terminal runs: every run, task and slot keeps its row, `tasks` and
 * `runs` leave half of each new page free, and the store goes on where it stopped.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { RunId } from "../../../../src/domain/ids.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import {
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
  triggerRun,
} from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  schemaAtVersion,
  leaseRows,
  taskRows,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 18 (room on every page for a fire's next versions)", () => {
  it("keeps every run, task and slot, and leaves half of each new page free", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 17);
    const task = await insertTask(before, { options: { overlap: "allow_all" } });
    const runs: RunId[] = [];
    for (const key of ["a", "b", "c", "d"]) {
      runs.push((await triggerRun(before, ALL, task.id, key, minute(0, 1)))!.id);
    }
    const claimed = await claimDue(before, minute(1), { limit: 3 });
    expect(claimed).toHaveLength(3);
    await recordLaunch(before, claimed[0]!, minute(1, 1));
    await recordCompletion(before, claimed[1]!.run.id, { status: "succeeded" }, minute(1, 2));
    await before.close();
    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) - 'run_task_id' AS row FROM ${q}.${table} AS x ORDER BY (to_jsonb(x) - 'run_task_id')::text`,
        )
      ).rows;
    const stored = { runs: await rows("runs"), tasks: await taskRows(pool, q) };
    const slots = await leaseRows(pool, q);
    expect((stored.runs as { row: { status: string } }[]).map((r) => r.row.status).sort()).toEqual([
      "launching",
      "queued",
      "running",
      "succeeded",
    ]);

    await migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await taskRows(pool, q)).toEqual(stored.tasks);
    expect(await leaseRows(pool, q)).toEqual(slots);
    const options = await pool.query(
      `SELECT c.relname, c.reloptions FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace` +
        ` WHERE n.nspname = $1::text AND c.relname IN ('tasks', 'runs') ORDER BY c.relname`,
      [schema],
    );
    // Migration 28 later lowered the ledger's to 30 (three versions of a run on its page).
    expect(options.rows).toEqual([
      { relname: "runs", reloptions: ["fillfactor=30"] },
      { relname: "tasks", reloptions: ["fillfactor=50"] },
    ]);

    // The store goes on where it was: the running run completes, the queued one is claimed.
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    await recordCompletion(after, claimed[0]!.run.id, { status: "succeeded" }, minute(2));
    const next = await claimDue(after, minute(3), { maxConcurrentRuns: 3 });
    expect(next.map((c) => c.run.id)).toEqual([runs[3]]);
    await after.close();
  });
});
