/**
 * Migration 28 (docs/storage.md#the-run-model-on-postgresql) upgrades a database of schema 27 holding
 * queued (on a thread of their own and on a shared thread), launching, running, terminal and held
 * (cancelled, target not told) runs: `runs` is rebuilt with the columns a fire writes last and every run
 * keeps every column, index, constraint and trigger; the slots lose their run key but keep their
 * bindings; and the store goes on where it stopped: the running run's verdict frees its slot (found by its
 * thread key), the shared thread's next run is claimed, the hold still holds, and the database still
 * refuses an active run without a slot and a second active run on a thread.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { ALL, handlerTarget, minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  reloadRun,
} from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  leaseRows,
  schemaAtVersion,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 28 (mutable run columns last, one slot key fewer)", () => {
  it("keeps every run and slot, reorders the ledger's columns, and goes on", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 27);
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    await before.close();
    const at = (ms: number) => new Date(ms).toISOString();
    // id, status, thread id (shared: "shared-1", "held-1"), queued at.
    const seed: [string, string, string, number][] = [
      ["r1-running", "running", "shared-1", minute(0, 1)],
      ["r2-launching", "launching", "r2-launching", minute(0, 2)],
      ["r3-done", "succeeded", "r3-done", minute(0, 3)],
      ["r4-held", "cancelled", "held-1", minute(0, 4)],
      ["r5-queued", "queued", "r5-queued", minute(0, 5)],
      ["r6-shared", "queued", "shared-1", minute(0, 6)],
      ["r7-held", "queued", "held-1", minute(0, 7)],
      ["r8-shared", "queued", "shared-1", minute(0, 8)],
    ];
    // Written queued (schema 27's triggers add them to run_ready), then moved as a claim, a verdict or
    // a cancel moves them.
    for (const [id, , thread, queuedAt] of seed) {
      await pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind,` +
          ` result)` +
          ` VALUES ($1, $2, $3, 'manual', $4, $4, 'queued', 0, $4, 'handler:' || $3, $5, false, $1, $4,` +
          ` 'handler', $6::jsonb)`,
        [id, task.id, task.owner, at(queuedAt), thread, JSON.stringify({ seeded: id })],
      );
    }
    await pool.query(
      `INSERT INTO ${q}.claim_slots (slot) SELECT generate_series(1, 4) ON CONFLICT (slot) DO NOTHING`,
    );
    let slot = 0;
    for (const [id, status] of seed) {
      if (status === "queued") continue;
      const claimed = status === "running" || status === "launching" || status === "succeeded";
      if (claimed) {
        slot++;
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
            ` finished_at = CASE WHEN $2::text = 'succeeded' THEN queued_at + interval '2 seconds' END,` +
            ` lateness_ms = 1000 WHERE id = $1::text`,
          [id, status, at(minute(60))],
        );
      }
      if (status === "cancelled") {
        await pool.query(
          `UPDATE ${q}.runs SET status = 'cancelled', reason = 'cancel_requested',` +
            ` deadline_at = $2::timestamptz, finished_at = queued_at + interval '2 seconds',` +
            ` cancel_requested_at = queued_at + interval '1 second', error = 'target not told'` +
            ` WHERE id = $1::text`,
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
    const slotRows = async () => ({ rows: await leaseRows(pool, q, "s.run_id IS NOT NULL") });
    const stored = {
      runs: await rows("runs"),
      ready: await rows("run_ready"),
      holds: await rows("run_holds"),
      slots: (await slotRows()).rows,
    };
    expect(stored.slots.map((s) => (s as { run_id: string }).run_id)).toEqual([
      "r1-running",
      "r2-launching",
    ]);
    const indexesBefore = await pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'` +
        ` ORDER BY indexname`,
      [schema],
    );

    await migrate();
    // Every run kept as it was; migration 29 adds the moved marker, NULL (unmarked).
    expect(await rows("runs")).toEqual(
      stored.runs.map((r) => ({ row: { ...(r as { row: object }).row, moved: null } })),
    );
    // A queued run keeps its row; its thread is written only for a shared thread.
    const byRun = (rs: readonly unknown[]) =>
      [...rs]
        .map((r) => (r as { row: Record<string, unknown> }).row)
        .sort((a, b) => String(a["run_id"]).localeCompare(String(b["run_id"])));
    expect(byRun(await rows("run_ready"))).toEqual(
      byRun(stored.ready).map((row) =>
        row["thread_id"] === row["run_id"] ? { ...row, thread_scope: null, thread_id: null } : row,
      ),
    );
    expect(await rows("run_holds")).toEqual(stored.holds);
    expect((await slotRows()).rows).toEqual(stored.slots);
    // The same indexes, the mutable columns last, room for a fire's versions.
    const indexesAfter = await pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'` +
        ` ORDER BY indexname`,
      [schema],
    );
    // (Migration 34 then folds a task's history and its occurrence keys into runs_occurrence_uq, and
    // migration 35 rebuilds runs_owner_listing_idx ascending.)
    const folded = [
      "runs_backfill_occurrence_uq",
      "runs_history_idx",
      "runs_scheduled_occurrence_uq",
    ];
    const named = (rs: readonly unknown[], leave: readonly string[]) =>
      rs.filter((r) => !leave.includes((r as { indexname: string }).indexname));
    expect(named(indexesAfter.rows, ["runs_occurrence_uq", "runs_owner_listing_idx"])).toEqual(
      named(indexesBefore.rows, [...folded, "runs_owner_listing_idx"]),
    );
    const columns = await pool.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1::text` +
        ` AND table_name = 'runs' ORDER BY ordinal_position`,
      [schema],
    );
    const order = columns.rows.map((c) => (c as { column_name: string }).column_name);
    const lastImmutable = Math.max(
      ...["id", "task_id", "owner", "scheduled_for", "thread_id", "queued_at"].map((c) =>
        order.indexOf(c),
      ),
    );
    for (const mutable of ["status", "claim_token", "claimed_by", "finished_at", "result"]) {
      expect(order.indexOf(mutable), mutable).toBeGreaterThan(lastImmutable);
    }
    const options = await pool.query(
      `SELECT c.relname, c.reloptions FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace` +
        ` WHERE n.nspname = $1::text AND c.relname IN ('runs', 'claim_slots') ORDER BY c.relname`,
      [schema],
    );
    expect(options.rows).toEqual([
      // Migration 31 makes the slots lease rows, never updated: back to fillfactor 100.
      { relname: "claim_slots", reloptions: ["fillfactor=100"] },
      { relname: "runs", reloptions: ["fillfactor=30"] },
    ]);
    const slotIndexes = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'claim_slots'` +
        ` ORDER BY indexname`,
      [schema],
    );
    expect(slotIndexes.rows.map((r) => (r as { indexname: string }).indexname)).toEqual([
      "claim_slots_pkey",
      "claim_slots_task_uq",
      "claim_slots_thread_uq",
    ]);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await after.runs.queueStats(minute(1))).toMatchObject({ queued: 4, active: 2 });
    // The shared thread waits for its running run, the held thread for the hold's deadline.
    const first = await claimDue(after, minute(1), { limit: 10, handlerNames: HANDLERS });
    expect(first.map((c) => c.run.id)).toEqual(["r5-queued"]);
    // The running run's verdict finds its slot by its thread key and frees it.
    await recordCompletion(after, "r1-running" as never, { status: "succeeded" }, minute(2));
    const freed = await pool.query(
      `SELECT count(*)::int AS n FROM ${q}.claim_slots WHERE run_id = 'r1-running'`,
    );
    expect(freed.rows).toEqual([{ n: 0 }]);
    const second = await claimDue(after, minute(3), { limit: 10, handlerNames: HANDLERS });
    expect(second.map((c) => c.run.id)).toEqual(["r6-shared"]);
    const third = await claimDue(after, minute(61), { limit: 10, handlerNames: HANDLERS });
    expect(third.map((c) => c.run.id)).toEqual(["r7-held"]);
    expect((await reloadRun(after, "r8-shared" as never)).status).toBe("queued");
    expect((await after.runs.findRun(ALL, "r3-done" as never))?.status).toBe("succeeded");

    // A scheduled run's derived key is not stored, and reads back whole; a manual run's key is stored.
    const due = await insertTask(after, {
      schedule: onceAt(minute(70)),
      target: handlerTarget("work"),
    });
    await admitDue(after, minute(70));
    const keys = await pool.query(
      `SELECT id, trigger, idempotency_key FROM ${q}.runs WHERE task_id = $1::text`,
      [due.id],
    );
    expect(keys.rows).toMatchObject([{ trigger: "scheduled", idempotency_key: null }]);
    const scheduled = await reloadRun(after, (keys.rows[0] as { id: string }).id as never);
    expect(scheduled.idempotencyKey).toBe(`punctual:${due.id}:scheduled:${minute(70)}`);
    expect((await reloadRun(after, "r8-shared" as never)).idempotencyKey).toBe("r8-shared");
    await expect(
      pool.query(`UPDATE ${q}.runs SET idempotency_key = NULL WHERE id = 'r8-shared'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_manual_key_check" });

    // No path moves a run to launching or running without a bound slot, nor binds a second slot to a
    // thread that has an active run.
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'launching' WHERE id = 'r8-shared'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await expect(
      pool.query(
        // A lease (migration 31) inserted for it.
        `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
          ` run_task_id) SELECT 99, false, r.id, r.thread_scope, r.thread_id, r.owner, r.task_id` +
          ` FROM ${q}.runs AS r WHERE r.id = 'r8-shared'`,
      ),
    ).rejects.toMatchObject({ code: "23505", constraint: "claim_slots_thread_uq" });
    await after.close();
  });
});
