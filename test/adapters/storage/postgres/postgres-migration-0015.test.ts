/**
 * Migration 15 (docs/storage.md#the-claim-path-on-postgresql) upgrades a database of schema 14 holding
 * queued, launching, running and terminal runs: every run keeps its row and every taken slot its binding;
 * afterwards the statement-level trigger frees a slot whenever its run leaves launching/running, one run
 * or many in one statement, and only then, and the slots' unique keys still refuse a second holder.
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
  leaseRows,
  schemaAtVersion,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 15 (cheaper budget slots)", () => {
  it("keeps every run and slot, then frees slots by statement, one run or many", async () => {
    // The store's writes are the same on schema 14: make the rows as it would.
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 14);
    const task = await insertTask(before, { options: { overlap: "allow_all" } });
    const runs: RunId[] = [];
    for (const key of ["a", "b", "c", "d", "e"]) {
      runs.push((await triggerRun(before, ALL, task.id, key, minute(0, 1)))!.id);
    }
    const claimed = await claimDue(before, minute(1), { limit: 4 });
    expect(claimed).toHaveLength(4);
    await recordLaunch(before, claimed[0]!, minute(1, 1));
    await recordCompletion(before, claimed[1]!.run.id, { status: "succeeded" }, minute(1, 2));
    await before.close();
    const rows = async () =>
      (await pool.query(`SELECT to_jsonb(r) AS row FROM ${q}.runs AS r ORDER BY id`)).rows;
    // The leases by run, without their numbers (migration 31 keeps them; a claim picks any free one).
    const slotRows = async () =>
      (await leaseRows(pool, q, "s.run_id IS NOT NULL"))
        .map(({ slot: _slot, ...lease }) => lease)
        .sort((a, b) => String(a.run_id).localeCompare(String(b.run_id)));
    const stored = await rows();
    const slots = await slotRows();
    // One running, two launching: three slots taken; one succeeded, one still queued.
    expect(slots.map((s) => s.run_id)).toEqual(
      [claimed[0]!.run.id, claimed[2]!.run.id, claimed[3]!.run.id].sort(),
    );

    await migrate();
    expect(await rows()).toEqual(stored);
    expect(await slotRows()).toEqual(slots);
    // The keys index taken slots only (the run key went in migration 28: a run's thread key keeps it
    // to one slot; since migration 31 every row is a taken slot, and since 32 the thread key reads a
    // run's own thread from its id and the task key holds exclusive runs only, each as a hash).
    const keys = await pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1::text` +
        ` AND indexname IN ('claim_slots_run_uq', 'claim_slots_thread_uq', 'claim_slots_task_uq')` +
        ` ORDER BY indexname`,
      [schema],
    );
    expect((keys.rows as { indexdef: string }[]).map((k) => k.indexdef)).toEqual([
      expect.stringMatching(
        /^CREATE UNIQUE INDEX claim_slots_task_uq .* \(hashtextextended\(run_task_id, .*\) WHERE exclusive$/,
      ),
      expect.stringMatching(
        /^CREATE UNIQUE INDEX claim_slots_thread_uq .*hashtextextended\(.*COALESCE\(thread_id, run_id\).*\)$/,
      ),
    ]);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    // A budget of 3 is full.
    expect(await claimDue(after, minute(2), { maxConcurrentRuns: 3 })).toEqual([]);
    // Launching -> running keeps its slot.
    await recordLaunch(after, claimed[2]!, minute(2, 1));
    expect((await slotRows()).map((s) => s.run_id)).toContain(claimed[2]!.run.id);
    // A verdict frees one slot.
    await recordCompletion(after, claimed[0]!.run.id, { status: "succeeded" }, minute(2, 2));
    expect((await slotRows()).map((s) => s.run_id)).not.toContain(claimed[0]!.run.id);
    // One statement moving two runs out of launching/running frees both; the queued run it also
    // touches holds no slot and takes none.
    await pool.query(
      `UPDATE ${q}.runs SET status = 'failed', reason = 'replica_lost', finished_at = now()` +
        ` WHERE id = ANY($1::text[])`,
      [[claimed[2]!.run.id, claimed[3]!.run.id]],
    );
    await pool.query(`UPDATE ${q}.runs SET error = NULL WHERE id = $1::text`, [runs[4]]);
    expect(await slotRows()).toEqual([]);
    // A freed slot keeps nothing of its run.
    const stale = await pool.query(
      `SELECT count(*)::int4 AS n FROM ${q}.claim_slots WHERE run_id IS NULL` +
        ` AND num_nonnulls(thread_scope, thread_id, owner, run_task_id) > 0`,
    );
    expect(stale.rows[0]).toEqual({ n: 0 });
    // The freed slots are used again, and a slot's key still refuses a second run in one thread.
    const next = await claimDue(after, minute(3), { maxConcurrentRuns: 3 });
    expect(next.map((c) => c.run.id)).toEqual([runs[4]]);
    const bound = (await slotRows())[0] as unknown as { thread_scope: string; thread_id: string };
    await expect(
      pool.query(
        // A lease (migration 31) inserted for another run on that thread.
        `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
          ` run_task_id) VALUES (99, false, 'other', $1::text, $2::text, 'someone', 'another')`,
        [bound.thread_scope, bound.thread_id],
      ),
    ).rejects.toMatchObject({ constraint: "claim_slots_thread_uq" });
    await after.close();
  });
});
