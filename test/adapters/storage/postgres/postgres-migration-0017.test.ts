/**
 * Migrations 17 to 19 (docs/storage.md#write-ahead-log-per-fire) upgrade a database of schema 16 holding
 * queued, launching, running and terminal runs: every run, task and slot keeps its row; afterwards no
 * run insert locks its task (the foreign key is gone, and purge still takes a deleted task's runs with
 * it), the thread keys of `runs` (active and queued) hold only runs on a shared thread, one active
 * run per thread stays enforced by the database for both kinds of thread, and the store goes on where
 * it stopped.
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
import { ALL, minute, reuseThread } from "../../../contract/fixtures.js";
import {
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
  remove,
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

describe("postgres migrations 17 and 19 (no task key lock per run, no key for a run's own thread)", () => {
  it("keeps every run, task and slot, and goes on enforcing one active run per thread", async () => {
    const older = await schemaAtVersion(database, 16);
    const { pool, schema, quoted: q, store: before, migrate } = older;
    const fresh = await insertTask(before, { options: { overlap: "allow_all" } });
    const shared = await insertTask(before, {
      context: reuseThread("thread-1"),
      options: { overlap: "allow_all" },
    });
    const runs: RunId[] = [];
    for (const key of ["a", "b", "c", "d"]) {
      runs.push((await triggerRun(before, ALL, fresh.id, key, minute(0, 2)))!.id);
    }
    const sharedRuns: RunId[] = [];
    for (const key of ["a", "b"]) {
      sharedRuns.push((await triggerRun(before, ALL, shared.id, key, minute(0, 1)))!.id);
    }
    const claimed = await claimDue(before, minute(1), { limit: 4 });
    // Three of the fresh task's runs, and the shared thread's head (its second run waits behind it).
    expect(claimed.map((c) => c.run.id).sort()).toEqual(
      [...runs.slice(0, 3), sharedRuns[0]].sort(),
    );
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
    const stored = { runs: await rows("runs"), tasks: await taskRows(pool, q) };
    const slots = await leaseRows(pool, q);
    expect((stored.runs as { row: { status: string } }[]).map((r) => r.row.status).sort()).toEqual([
      "launching",
      "launching",
      "queued",
      "queued",
      "running",
      "succeeded",
    ]);

    // Up to migration 19 only: migration 24 drops the runs' thread keys (the slots' keys stay).
    await older.withoutRunQueue();
    await migratePostgres(
      pool,
      schemaName(schema),
      POSTGRES_MIGRATIONS.filter((m) => m.version <= 19),
    );
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await taskRows(pool, q)).toEqual(stored.tasks);
    expect(await leaseRows(pool, q)).toEqual(slots);
    const constraints = await pool.query(
      `SELECT conname FROM pg_constraint AS c JOIN pg_namespace AS n ON n.oid = c.connamespace` +
        ` WHERE n.nspname = $1::text AND c.contype = 'f'`,
      [schema],
    );
    // No foreign key from runs (checked at version 19: migration 23's task_state row references its task).
    expect(constraints.rows).toEqual([]);
    // Only the runs on a shared thread are in the runs' thread key: here the shared thread's claimed run.
    const predicate = await pool.query(
      `SELECT pg_get_expr(i.indpred, i.indrelid) AS predicate FROM pg_index AS i` +
        ` JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace` +
        ` WHERE n.nspname = $1::text AND c.relname = 'runs_thread_slot_uq'`,
      [schema],
    );
    expect((predicate.rows[0] as { predicate: string }).predicate).toContain("thread_id <> id");
    // Migration 19: the queue's thread index likewise holds only runs on a shared thread.
    const queued = await pool.query(
      `SELECT count(*)::int AS n FROM ${q}.runs WHERE (status || '') = 'queued' AND thread_id <> id`,
    );
    expect(queued.rows[0]).toEqual({ n: 1 });
    const queuePredicate = await pool.query(
      `SELECT pg_get_expr(i.indpred, i.indrelid) AS predicate FROM pg_index AS i` +
        ` JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace` +
        ` WHERE n.nspname = $1::text AND c.relname = 'runs_thread_queue_idx'`,
      [schema],
    );
    expect((queuePredicate.rows[0] as { predicate: string }).predicate).toContain(
      "thread_id <> id",
    );

    // A second active run on a run's own thread is refused by the slots' key...
    const launching = claimed[2]!.run.id;
    await expect(
      pool.query(
        // A lease (migration 31, lent to this schema) inserted for it.
        `INSERT INTO ${q}.claim_slots (slot, run_id, thread_scope, thread_id, owner)` +
          ` SELECT 99, 'x', s.thread_scope, s.thread_id, s.owner FROM ${q}.claim_slots AS s` +
          ` WHERE s.run_id = $1::text`,
        [launching],
      ),
    ).rejects.toThrow(/claim_slots_thread_uq/);
    // ...and one on a shared thread by the runs' key as well.
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'running' WHERE id = $1::text`, [sharedRuns[1]]),
    ).rejects.toThrow(/runs_thread_slot_uq/);

    // The store goes on where it was: the running run completes, the queued ones are claimed.
    await migrate();
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    await recordCompletion(after, claimed[0]!.run.id, { status: "succeeded" }, minute(2));
    const sharedHead = claimed.find((c) => c.run.id === sharedRuns[0])!;
    await recordCompletion(after, sharedHead.run.id, { status: "succeeded" }, minute(2));
    const next = await claimDue(after, minute(3), { maxConcurrentRuns: 4 });
    expect(next.map((c) => c.run.id).sort()).toEqual([runs[3], sharedRuns[1]].sort());

    // Purge takes a deleted task's runs with it, as the cascade did.
    for (const c of next)
      await recordCompletion(after, c.run.id, { status: "succeeded" }, minute(4));
    await recordCompletion(after, launching, { status: "succeeded" }, minute(4));
    await remove(after, shared.id, minute(5));
    const purged = await after.runs.purge(minute(0), 100);
    expect(purged).toBe(3); // the deleted task and its two runs
    const left = await pool.query(
      `SELECT count(*)::int AS n FROM ${q}.runs WHERE task_id = $1::text`,
      [shared.id],
    );
    expect(left.rows[0]).toEqual({ n: 0 });
    await after.close();
  });
});
