/**
 * Migration 32 (docs/storage.md#the-run-model-on-postgresql) upgrades a database of schema 31 holding
 * queued, launching, running, terminal and held (cancelled, target not told) runs, leases on a shared
 * thread, on a run's own thread and of an exclusive run, and tasks in every state (enabled and due,
 * paused, completed, failed with an error, cancelled, defective, deleted). Every run, queue row, hold,
 * lease and task state is kept (a lease narrower: its own thread as NULL, its exclusive task as a flag),
 * `task_state`'s written columns come last, and the store goes on: claims find busy threads and
 * exclusive tasks by the new keys, verdicts delete leases by them, admission admits, and the database
 * still refuses a second lease on a thread or an exclusive task and an active run without a lease.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { handlerTarget, minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  reload,
} from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  leaseRows,
  schemaAtVersion,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 32 (a narrower lease; task_state's written columns last)", () => {
  it("keeps every run, lease and task state, and goes on with the new keys", async () => {
    const older = await schemaAtVersion(database, 31);
    const { pool, schema, quoted: q, store: before } = older;
    const shared = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    // Exclusive (overlap "skip"): one active run of the task at a time.
    const solo = await insertTask(before, { target: handlerTarget("work") });
    // Tasks in every state: one due once (admitted below, after the migration), the others moved by SQL.
    const due = await insertTask(before, {
      target: handlerTarget("work"),
      schedule: onceAt(minute(4)),
    });
    const states: [string, string][] = [
      ["paused", "paused"],
      ["completed", "completed"],
      ["failed", "failed"],
      ["cancelled", "cancelled"],
      ["defective", "enabled"],
      ["deleted", "enabled"],
    ];
    const others = new Map<string, string>();
    for (const [name] of states) {
      others.set(name, (await insertTask(before, { target: handlerTarget("work") })).id);
    }
    const taskBefore = new Map<string, unknown>();
    await before.close();
    await older.withoutRunQueue();
    for (const [name, status] of states) {
      const id = others.get(name)!;
      await pool.query(
        `UPDATE ${q}.task_state SET status = $2::text, run_count = 3, admitted_count = 4,` +
          ` last_run_at = now(), last_run_id = 'run-of-' || $1::text,` +
          ` last_error = CASE WHEN $2::text = 'failed' THEN 'it broke' END,` +
          ` defect_at = CASE WHEN $3::text = 'defective' THEN now() END,` +
          ` next_run_at = CASE WHEN $3::text = 'deleted' OR $2::text <> 'enabled' THEN NULL` +
          ` ELSE next_run_at END, version = version + 1 WHERE task_id = $1::text`,
        [id, status, name],
      );
      if (name === "deleted") {
        await pool.query(`UPDATE ${q}.tasks SET deleted_at = now() WHERE id = $1::text`, [id]);
      }
    }
    const at = (ms: number) => new Date(ms).toISOString();
    // id, task, exclusive, status, thread id (shared: "shared-1", "held-1"), queued at.
    const seed: [string, string, boolean, string, string, number][] = [
      ["r1-running", shared.id, false, "running", "shared-1", minute(0, 1)],
      ["r2-launching", solo.id, true, "launching", "r2-launching", minute(0, 2)],
      ["r3-done", shared.id, false, "succeeded", "r3-done", minute(0, 3)],
      ["r4-held", shared.id, false, "cancelled", "held-1", minute(0, 4)],
      ["r5-queued", shared.id, false, "queued", "r5-queued", minute(0, 5)],
      ["r6-shared", shared.id, false, "queued", "shared-1", minute(0, 6)],
      ["r7-solo", solo.id, true, "queued", "r7-solo", minute(0, 7)],
      ["r8-own", shared.id, false, "running", "r8-own", minute(0, 8)],
    ];
    for (const [id, task, exclusive, , thread, queuedAt] of seed) {
      await pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
          ` SELECT $1, $2, t.owner, 'manual', $3, $3, 'queued', 0, $3, 'handler:' || t.owner, $4, $5,` +
          ` $1, $3, 'handler' FROM ${q}.tasks AS t WHERE t.id = $2`,
        [id, task, at(queuedAt), thread, exclusive],
      );
    }
    // Schema 31's leases, as its claim inserts them in the statement that writes the run launching:
    // the thread id always stored, the task id too for an exclusive run, the claimer.
    let slot = 0;
    for (const [id, , , status] of seed) {
      if (status === "queued") continue;
      slot++;
      await pool.query(
        `WITH bound AS (INSERT INTO ${q}.claim_slots (slot, run_id, thread_scope, thread_id, task_id,` +
          ` owner, claimed_by, run_task_id) SELECT $2::int4, r.id, r.thread_scope, r.thread_id,` +
          ` CASE WHEN r.exclusive THEN r.task_id END, r.owner, 'replica-a', r.task_id` +
          ` FROM ${q}.runs AS r WHERE r.id = $1::text RETURNING run_id)` +
          ` UPDATE ${q}.runs SET status = 'launching', attempt = 1, claim_token = 'token-' || id,` +
          ` claim_expires_at = $3::timestamptz, claimed_by = 'replica-a'` +
          ` WHERE id IN (SELECT run_id FROM bound)`,
        [id, slot, at(minute(30))],
      );
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
    const stored = {
      runs: await rows("runs"),
      ready: await rows("run_ready"),
      holds: await rows("run_holds"),
      states: await rows("task_state"),
      leases: await leaseRows(pool, q),
    };
    // Schema 31: the active runs' leases (the succeeded and the cancelled runs' deleted by the trigger).
    expect(stored.leases.map((l) => [l.run_id, l.thread_id, l.task_id])).toEqual([
      ["r1-running", "shared-1", null],
      ["r2-launching", "r2-launching", solo.id],
      ["r8-own", "r8-own", null],
    ]);
    expect(stored.holds).toHaveLength(1);
    expect(stored.ready).toHaveLength(3);
    const reader = await openPostgresStore({
      newId: createIdGenerator(),
      pool,
      schema,
      migrate: false,
    });
    for (const id of [shared.id, solo.id, due.id, ...others.values()]) {
      taskBefore.set(id, await reader.tasks.findTask({ kind: "all" }, id as never));
    }
    await reader.close();

    await older.migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await rows("run_ready")).toEqual(stored.ready);
    expect(await rows("run_holds")).toEqual(stored.holds);
    expect(await rows("task_state")).toEqual(stored.states);
    expect(await leaseRows(pool, q)).toEqual(stored.leases);
    // Stored narrow: a run's own thread as NULL, an exclusive run's task as the flag.
    const raw = await pool.query(
      `SELECT run_id, thread_id, exclusive FROM ${q}.claim_slots ORDER BY slot`,
    );
    expect(raw.rows).toEqual([
      { run_id: "r1-running", thread_id: "shared-1", exclusive: false },
      { run_id: "r2-launching", thread_id: null, exclusive: true },
      { run_id: "r8-own", thread_id: null, exclusive: false },
    ]);
    const columns = async (table: string) =>
      (
        await pool.query(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = $1::text` +
            ` AND table_name = $2::text ORDER BY ordinal_position`,
          [schema, table],
        )
      ).rows.map((r) => (r as { column_name: string }).column_name);
    // The verdict's columns, then admission's, last.
    expect(await columns("task_state")).toEqual([
      "task_id",
      "version",
      "defect_at",
      "last_error",
      "status",
      "run_count",
      "last_run_at",
      "last_run_id",
      "next_run_at",
      "due_at",
      "decided_through",
      "admitted_count",
    ]);
    expect(await columns("claim_slots")).toEqual([
      "slot",
      "exclusive",
      "run_id",
      "thread_scope",
      "owner",
      "run_task_id",
      "thread_id",
    ]);
    // Only the due task is in the due index (the defective, deleted and stopped ones are not).
    const dueRows = await pool.query(
      `SELECT task_id FROM ${q}.task_state WHERE due_at IS NOT NULL ORDER BY task_id`,
    );
    const enabledDue = [shared.id, solo.id, due.id].sort();
    expect(dueRows.rows.map((r) => (r as { task_id: string }).task_id)).toEqual(enabledDue);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    for (const [id, task] of taskBefore) {
      expect(await after.tasks.findTask({ kind: "all" }, id as never)).toEqual(task);
    }
    expect(await after.runs.queueStats(minute(1))).toMatchObject({ queued: 3, active: 3 });
    const budget = { maxConcurrentRuns: 10, limit: 10, handlerNames: HANDLERS };
    // The shared thread waits for its running run, the exclusive task for its launching run (found
    // by the new keys): only the run on a thread of its own is claimed, its lease's thread NULL.
    const first = await claimDue(after, minute(1), budget);
    expect(first.map((c) => c.run.id)).toEqual(["r5-queued"]);
    const lease = await pool.query(
      `SELECT thread_id, exclusive FROM ${q}.claim_slots WHERE run_id = 'r5-queued'`,
    );
    expect(lease.rows).toEqual([{ thread_id: null, exclusive: false }]);
    // Verdicts delete their leases, found by the thread key (a shared thread, a thread of its own).
    await recordCompletion(after, "r1-running" as never, { status: "succeeded" }, minute(2));
    await recordCompletion(after, "r2-launching" as never, { status: "succeeded" }, minute(2));
    expect((await leaseRows(pool, q)).map((l) => l.run_id)).toEqual(["r5-queued", "r8-own"]);
    const second = await claimDue(after, minute(3), budget);
    expect(second.map((c) => c.run.id).sort()).toEqual(["r6-shared", "r7-solo"]);
    expect(
      (await leaseRows(pool, q)).filter((l) => l.run_id === "r7-solo").map((l) => l.task_id),
    ).toEqual([solo.id]);

    // Still refused: a second lease on an exclusive task or a thread, an active run without a lease.
    // A lease for another run, on `run`'s task, on `thread` (null: `run`'s thread).
    const insertLease = (
      slotNumber: number,
      run: string,
      exclusive: boolean,
      thread: string | null,
    ) =>
      pool.query(
        `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
          ` run_task_id) SELECT $1::int4, $3::bool, 'other-' || r.id, r.thread_scope,` +
          ` COALESCE($4::text, r.thread_id), r.owner, r.task_id FROM ${q}.runs AS r WHERE r.id = $2::text`,
        [slotNumber, run, exclusive, thread],
      );
    await pool.query(
      `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
        ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
        ` SELECT 'other-r7-solo', r.task_id, r.owner, 'manual', r.scheduled_for, r.fire_at, 'queued',` +
        ` 0, r.not_before, r.thread_scope, 'elsewhere', true, 'other-r7-solo', r.queued_at,` +
        ` 'handler' FROM ${q}.runs AS r WHERE r.id = 'r7-solo'`,
    );
    await expect(insertLease(90, "r7-solo", true, "elsewhere")).rejects.toMatchObject({
      code: "23505",
      constraint: "claim_slots_task_uq",
    });
    // A thread of its own, its id NULL in the lease: the key reads the run's id.
    await expect(insertLease(91, "r5-queued", false, null)).rejects.toMatchObject({
      code: "23505",
      constraint: "claim_slots_thread_uq",
    });
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'launching' WHERE id = 'other-r7-solo'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await expect(
      pool.query(`UPDATE ${q}.claim_slots SET thread_id = run_id WHERE run_id = 'r5-queued'`),
    ).rejects.toMatchObject({ code: "23514" });
    // The thread key hashes the scope length-prefixed: two (scope, thread) pairs whose texts join alike
    // are two threads, each leased.
    for (const [slotNumber, scope, thread] of [
      [92, "a", "bc"],
      [93, "ab", "c"],
    ] as const) {
      await pool.query(
        `INSERT INTO ${q}.claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
          ` run_task_id) VALUES ($1::int4, false, 'pair-' || $1::text, $2::text, $3::text, 'o', 't')`,
        [slotNumber, scope, thread],
      );
    }

    // Admission goes on: the due tasks are admitted (the once task due at minute 4 among them), their
    // state written.
    const report = await admitDue(after, minute(5));
    expect(report.tasks).toBe(3);
    const admitted = await reload(after, due.id);
    expect(admitted.nextRunAt).toBeNull();
    expect(admitted.admittedCount).toBe(1);
    await after.close();
  });
});
