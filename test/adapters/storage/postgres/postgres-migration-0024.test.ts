/**
 * Migration 24 (docs/storage.md#the-run-model-on-postgresql) upgrades a database of schema 22 holding
 * queued (on a thread of their own and on a shared thread), launching, running, terminal and held
 * (cancelled, target not told) runs, written as schema 22 stores them: every run, task and slot keeps its
 * row, the queued runs are in `run_ready`, the hold in `run_holds`, each bound slot names its run's
 * task, no index of `runs` names a column a fire changes, and the store goes on where it stopped: the
 * shared thread's head waits for its active run, the held thread waits for the hold, the rest is
 * claimed, and a launching or running run without a slot is refused.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { ALL, handlerTarget, minute } from "../../../contract/fixtures.js";
import {
  claimDue,
  insertTask,
  recordCompletion,
  reloadRun,
} from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  schemaAtVersion,
  taskRows,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 24 (a narrow queue, a ledger indexed on nothing a fire changes)", () => {
  it("keeps every run, task and slot, fills run_ready and run_holds, and goes on", async () => {
    const older = await schemaAtVersion(database, 22);
    const { pool, schema, quoted: q, store: before, migrate } = older;
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    await before.close();
    // The rows below are written as schema 22 holds them, by SQL, on the bare schema.
    await older.withoutRunQueue();
    const at = (ms: number) => new Date(ms).toISOString();
    // id, status, thread id (shared: "shared-1", "held-1"), queued at, extra columns.
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
    for (const [id, status, thread, queuedAt] of seed) {
      const active = status === "running" || status === "launching";
      await pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind,` +
          ` claim_token, claim_expires_at, claimed_by, launched_at, deadline_at, finished_at, reason)` +
          ` VALUES ($1, $2, $3, 'manual', $4, $4, $5, $6, $4, 'run', $7, false, $1, $4, 'handler',` +
          ` $8, $9, $10, $11, $12, $13, $14)`,
        [
          id,
          task.id,
          task.owner,
          at(queuedAt),
          status,
          active || status === "succeeded" ? 1 : 0,
          thread,
          active ? `token-${id}` : null,
          active ? at(minute(30)) : null,
          active ? "replica-a" : null,
          status === "running" || status === "succeeded" ? at(queuedAt + 1000) : null,
          status === "running" || status === "cancelled" ? at(minute(60)) : null,
          status === "succeeded" || status === "cancelled" ? at(queuedAt + 2000) : null,
          status === "cancelled" ? "cancel_requested" : null,
        ],
      );
    }
    let slot = 0;
    for (const [id, status, thread] of seed) {
      if (status !== "running" && status !== "launching") continue;
      slot++;
      await pool.query(
        `INSERT INTO ${q}.claim_slots (slot, run_id, thread_scope, thread_id, task_id, owner, claimed_by)` +
          ` VALUES ($1, $2, 'run', $3, NULL, $4, 'replica-a')`,
        [slot, id, thread, task.owner],
      );
    }
    // `moved` is migration 29's column, lent to the older schema while its store writes: not compared.
    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) - 'moved' AS row FROM ${q}.${table} AS x ORDER BY (to_jsonb(x) - 'moved')::text`,
        )
      ).rows;
    const stored = { runs: await rows("runs"), tasks: await taskRows(pool, q) };

    await migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await taskRows(pool, q)).toEqual(stored.tasks);
    const ready = await pool.query(`SELECT run_id FROM ${q}.run_ready ORDER BY run_id`);
    expect(ready.rows.map((r) => (r as { run_id: string }).run_id)).toEqual([
      "r5-queued",
      "r6-shared",
      "r7-held",
      "r8-shared",
    ]);
    const holds = await pool.query(`SELECT run_id, thread_id FROM ${q}.run_holds`);
    expect(holds.rows).toEqual([{ run_id: "r4-held", thread_id: "held-1" }]);
    const slots = await pool.query(
      `SELECT run_id, run_task_id FROM ${q}.claim_slots WHERE run_id IS NOT NULL ORDER BY run_id`,
    );
    expect(slots.rows).toEqual([
      { run_id: "r1-running", run_task_id: task.id },
      { run_id: "r2-launching", run_task_id: task.id },
    ]);
    const indexes = await pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'`,
      [schema],
    );
    for (const row of indexes.rows as { indexname: string; indexdef: string }[]) {
      expect(row.indexdef, row.indexname).not.toMatch(
        /status|claim_|launched_at|finished_at|deadline_at/,
      );
    }

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await after.runs.queueStats(minute(1))).toMatchObject({ queued: 4, active: 2 });
    // The shared thread waits for its running run, the held thread for the hold's deadline.
    const first = await claimDue(after, minute(1), { limit: 10, handlerNames: HANDLERS });
    expect(first.map((c) => c.run.id)).toEqual(["r5-queued"]);
    await recordCompletion(after, "r1-running" as never, { status: "succeeded" }, minute(2));
    const second = await claimDue(after, minute(3), { limit: 10, handlerNames: HANDLERS });
    expect(second.map((c) => c.run.id)).toEqual(["r6-shared"]);
    const third = await claimDue(after, minute(61), { limit: 10, handlerNames: HANDLERS });
    expect(third.map((c) => c.run.id)).toEqual(["r7-held"]);
    expect((await reloadRun(after, "r8-shared" as never)).status).toBe("queued");
    expect((await after.runs.findRun(ALL, "r3-done" as never))?.status).toBe("succeeded");

    // No path moves a run to launching or running without a bound slot.
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'launching' WHERE id = 'r8-shared'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await expect(
      pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
          ` SELECT 'r9', task_id, owner, trigger, scheduled_for, fire_at, 'running', 1, not_before,` +
          ` thread_scope, 'r9', exclusive, 'r9', queued_at, target_kind FROM ${q}.runs WHERE id = 'r5-queued'`,
      ),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await after.close();
  });
});
