/**
 * Migration 31 (docs/storage.md#the-run-model-on-postgresql) upgrades a database of schema 30 holding
 * queued, launching, running, terminal and held (cancelled, target not told) runs, with the budget's
 * slots as schema 30 keeps them (a row per number, bound and freed by updates): the unbound rows go,
 * every bound slot is kept as it was (a lease), every run keeps every column. The store then goes on:
 * the running run's verdict deletes its lease, a claim inserts one numbered within a lowered budget
 * while the leases above it drain, and the database still refuses an active run without a lease and a
 * second lease on a thread or a slot number.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { handlerTarget, minute } from "../../../contract/fixtures.js";
import { claimDue, insertTask, recordCompletion } from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  leaseRows,
  schemaAtVersion,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 31 (a budget slot is a lease row)", () => {
  it("keeps every run and bound slot, drops the free ones, and goes on with leases", async () => {
    const older = await schemaAtVersion(database, 30);
    const { pool, schema, quoted: q, store: before } = older;
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    await before.close();
    // Schema 30 exactly: its slot rows and triggers, nothing lent.
    await older.withoutRunQueue();
    const at = (ms: number) => new Date(ms).toISOString();
    // id, status, thread id (shared: "shared-1", "held-1"), queued at.
    const seed: [string, string, string, number][] = [
      ["r1-running", "running", "shared-1", minute(0, 1)],
      ["r2-launching", "launching", "r2-launching", minute(0, 2)],
      ["r3-done", "succeeded", "r3-done", minute(0, 3)],
      ["r4-held", "cancelled", "held-1", minute(0, 4)],
      ["r5-queued", "queued", "r5-queued", minute(0, 5)],
      ["r6-shared", "queued", "shared-1", minute(0, 6)],
      ["r7-queued", "queued", "r7-queued", minute(0, 7)],
    ];
    for (const [id, , thread, queuedAt] of seed) {
      await pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
          ` VALUES ($1, $2, $3, 'manual', $4, $4, 'queued', 0, $4, 'handler:' || $3, $5, false, $1, $4,` +
          ` 'handler')`,
        [id, task.id, task.owner, at(queuedAt), thread],
      );
    }
    // Schema 30's slots: a row per number of a budget of 4, bound by an update in the claim's
    // statement; the bound ones numbered 3 and 4 (a budget lowered to 2 below leaves them to drain).
    await pool.query(`INSERT INTO ${q}.claim_slots (slot) SELECT generate_series(1, 4)`);
    let slot = 2;
    for (const [id, status] of seed) {
      if (status === "running" || status === "launching" || status === "succeeded") {
        slot = status === "succeeded" ? 1 : slot + 1;
        await pool.query(
          `WITH bound AS (UPDATE ${q}.claim_slots AS s SET run_id = r.id,` +
            ` thread_scope = r.thread_scope, thread_id = r.thread_id, task_id = NULL, owner = r.owner,` +
            ` claimed_by = 'replica-a', run_task_id = r.task_id FROM ${q}.runs AS r` +
            ` WHERE r.id = $1::text AND s.slot = $2::int4)` +
            ` UPDATE ${q}.runs SET status = 'launching', attempt = 1, claim_token = 'token-' || id,` +
            ` claim_expires_at = $3::timestamptz, claimed_by = 'replica-a' WHERE id = $1::text`,
          [id, slot, at(minute(30))],
        );
      }
      if (status === "running" || status === "succeeded") {
        await pool.query(
          `UPDATE ${q}.runs SET status = $2::text, launched_at = queued_at + interval '1 second',` +
            ` deadline_at = CASE WHEN $2::text = 'running' THEN $3::timestamptz END,` +
            ` finished_at = CASE WHEN $2::text = 'succeeded' THEN queued_at + interval '2 seconds' END` +
            ` WHERE id = $1::text`,
          [id, status, at(minute(60))],
        );
      }
      if (status === "cancelled") {
        await pool.query(
          `UPDATE ${q}.runs SET status = 'cancelled', reason = 'cancel_requested',` +
            ` deadline_at = $2::timestamptz, finished_at = queued_at + interval '2 seconds',` +
            ` cancel_requested_at = queued_at + interval '1 second' WHERE id = $1::text`,
          [id, at(minute(60))],
        );
      }
    }
    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) AS row FROM ${q}.${table} AS x ORDER BY to_jsonb(x)::text`,
        )
      ).rows;
    // In one shape before and after migration 32 (which narrows the lease row).
    const slotRows = async () => (await leaseRows(pool, q)) as unknown as Record<string, unknown>[];
    const stored = {
      runs: await rows("runs"),
      ready: await rows("run_ready"),
      holds: await rows("run_holds"),
      slots: await slotRows(),
    };
    // Schema 30: four rows, two bound (3, 4), the succeeded run's slot freed by an update (1).
    expect(stored.slots.map((s) => [s["slot"], s["run_id"]])).toEqual([
      [1, null],
      [2, null],
      [3, "r1-running"],
      [4, "r2-launching"],
    ]);

    await older.migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await rows("run_ready")).toEqual(stored.ready);
    expect(await rows("run_holds")).toEqual(stored.holds);
    // The bound slots only, as they were.
    expect(await slotRows()).toEqual(stored.slots.filter((s) => s["run_id"] !== null));
    const nullable = await pool.query(
      `SELECT column_name, is_nullable FROM information_schema.columns WHERE table_schema = $1::text` +
        ` AND table_name = 'claim_slots' ORDER BY column_name`,
      [schema],
    );
    // As migration 32 leaves them: `thread_id` NULL for a run on its own thread, an `exclusive` flag
    // instead of `task_id`, no `claimed_by`.
    expect(nullable.rows).toEqual([
      { column_name: "exclusive", is_nullable: "NO" },
      { column_name: "owner", is_nullable: "NO" },
      { column_name: "run_id", is_nullable: "NO" },
      { column_name: "run_task_id", is_nullable: "NO" },
      { column_name: "slot", is_nullable: "NO" },
      { column_name: "thread_id", is_nullable: "YES" },
      { column_name: "thread_scope", is_nullable: "NO" },
    ]);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await after.runs.queueStats(minute(1))).toMatchObject({ queued: 3, active: 2 });
    // A budget lowered to 2 with leases 3 and 4 bound: full, nothing claimed, no lease inserted.
    const budget = { maxConcurrentRuns: 2, limit: 10, handlerNames: HANDLERS };
    expect(await claimDue(after, minute(1), budget)).toEqual([]);
    expect((await slotRows()).map((s) => s["slot"])).toEqual([3, 4]);
    // The running run's verdict deletes its lease (found by its thread key): no row is left for it.
    await recordCompletion(after, "r1-running" as never, { status: "succeeded" }, minute(2));
    expect((await slotRows()).map((s) => s["run_id"])).toEqual(["r2-launching"]);
    // One number free within the budget: the shared thread's next run (its head has ended) or the
    // queue's first, in claim order; its lease is numbered 1, never above the lowered budget.
    const next = await claimDue(after, minute(3), budget);
    expect(next.map((c) => c.run.id)).toEqual(["r5-queued"]);
    expect((await slotRows()).map((s) => [s["slot"], s["run_id"]])).toEqual([
      [1, "r5-queued"],
      [4, "r2-launching"],
    ]);
    expect(await claimDue(after, minute(3), budget)).toEqual([]);

    // Still refused: an active run without a lease, a second lease on a thread, a number taken twice.
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'launching' WHERE id = 'r6-shared'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    const lease = (slotNumber: number, run: string) =>
      pool.query(
        `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
          ` run_task_id) SELECT $1::int4, false, r.id, r.thread_scope, NULLIF(r.thread_id, r.id),` +
          ` r.owner, r.task_id FROM ${q}.runs AS r WHERE r.id = $2::text`,
        [slotNumber, run],
      );
    await expect(lease(2, "r5-queued")).rejects.toMatchObject({
      code: "23505",
      constraint: "claim_slots_thread_uq",
    });
    await expect(lease(1, "r6-shared")).rejects.toMatchObject({
      code: "23505",
      constraint: "claim_slots_pkey",
    });
    await after.close();
  });
});
