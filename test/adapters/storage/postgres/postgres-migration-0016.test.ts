/**
 * Migration 16 (docs/storage.md#write-ahead-log-per-fire) upgrades a database of schema 15 holding
 * queued, launching, running and terminal runs: every run and task keeps its row and every taken slot
 * its binding; afterwards `tasks` leaves room on its pages for the next versions of its rows (so a cron
 * task's bookkeeping update is heap-only), the unread replica index of the slots is gone, and the store
 * claims, launches and completes as before.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
} from "../../../../src/adapters/storage/postgres/postgres-migrations.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
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
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 16 (less write-ahead log per fire)", () => {
  it("keeps every run, task and slot, and leaves room on the tasks' pages", async () => {
    const older = await schemaAtVersion(database, 15);
    const { pool, schema, quoted: q, store: before } = older;
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
    // `moved` is migration 29's column, lent to the older schema while its store writes: not compared.
    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) - 'run_task_id' - 'moved' AS row FROM ${q}.${table} AS x ORDER BY (to_jsonb(x) - 'run_task_id' - 'moved')::text`,
        )
      ).rows;
    const stored = { runs: await rows("runs"), tasks: await rows("tasks") };
    const slots = await leaseRows(pool, q);
    // One queued, one launching, one running, one succeeded.
    expect((stored.runs as { row: { status: string } }[]).map((r) => r.row.status).sort()).toEqual([
      "launching",
      "queued",
      "running",
      "succeeded",
    ]);

    // Up to this migration only: migration 18 leaves more room still.
    await older.withoutRunQueue();
    await migratePostgres(
      pool,
      schemaName(schema),
      POSTGRES_MIGRATIONS.filter((m) => m.version <= 16),
    );
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await rows("tasks")).toEqual(stored.tasks);
    expect(await leaseRows(pool, q)).toEqual(slots);
    const options = await pool.query(
      `SELECT c.reloptions FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace` +
        ` WHERE n.nspname = $1::text AND c.relname = 'tasks'`,
      [schema],
    );
    expect(options.rows[0]).toEqual({ reloptions: ["fillfactor=70"] });
    const indexes = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'claim_slots'`,
      [schema],
    );
    expect((indexes.rows as { indexname: string }[]).map((r) => r.indexname)).not.toContain(
      "claim_slots_replica_idx",
    );

    // The store goes on where it was: the running run completes, the queued one is claimed.
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    await recordCompletion(after, claimed[0]!.run.id, { status: "succeeded" }, minute(2));
    const next = await claimDue(after, minute(3), { maxConcurrentRuns: 3 });
    expect(next.map((c) => c.run.id)).toEqual([runs[3]]);
    await after.close();
  });

  it("keeps a task's next version on its page when the page is otherwise full", async () => {
    const pool = database.pool(2);
    const schema = database.freshSchema();
    const q = `"${schema}"`;
    await migratePostgres(pool, schemaName(schema));
    const store = await database.openStore({ schema });
    // Enough tasks to fill the first pages: at fillfactor 100 the first page would have no room left.
    for (let i = 0; i < 40; i++) await insertTask(store, { options: { overlap: "allow_all" } });
    const block = (ctid: string) => Number(/^\((\d+),/.exec(ctid)?.[1] ?? -1);
    // Since migration 23 the bookkeeping is on the task's `task_state` row, whose table keeps the room.
    const first = await pool.query(
      `SELECT task_id, ctid::text AS ctid FROM ${q}.task_state ORDER BY ctid LIMIT 1`,
    );
    const { task_id: id, ctid } = first.rows[0] as { task_id: string; ctid: string };
    expect(block(ctid)).toBe(0);
    // A launch's bookkeeping: no indexed column changes, so the new version may stay on the page
    // (a heap-only update) when the page has room for it.
    const updated = await pool.query(
      `UPDATE ${q}.task_state SET run_count = run_count + 1, last_run_at = now(), last_run_id = 'r'` +
        ` WHERE task_id = $1::text RETURNING ctid::text AS ctid`,
      [id],
    );
    expect(block((updated.rows[0] as { ctid: string }).ctid)).toBe(0);
    await store.close();
  });
});
