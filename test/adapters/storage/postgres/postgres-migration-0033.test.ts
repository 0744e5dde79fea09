/**
 * Migration 33 (docs/storage.md#the-run-model-on-postgresql) replaces the triggers on `runs` with ones
 * that run only the statements a write needs. On a database of schema 32 holding queued, launching,
 * running, terminal and held runs, every row of `runs`, `run_ready`, `run_holds` and `claim_slots` is
 * kept; after it each move the triggers keep is still kept (a run queued, claimed, ended, queued again,
 * moved in the queue, cancelled with a deadline and released), by the store and by raw writes, and an
 * active run without a lease is still refused, inserted or updated.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { handlerTarget, minute } from "../../../contract/fixtures.js";
import { claimDue, insertTask, recordCompletion } from "../../../contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 33 (the triggers on runs run only the statements a write needs)", () => {
  it("keeps every row, and every move of a run still keeps the queue, the leases and the holds", async () => {
    const older = await schemaAtVersion(database, 32);
    const { pool, schema, quoted: q, store: before } = older;
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    const at = (ms: number) => new Date(ms).toISOString();
    const insertQueued = (id: string, thread: string, queuedAt: number) =>
      pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
          ` VALUES ($1, $2, $3, 'manual', $4, $4, 'queued', 0, $4, 'handler:' || $3, $5, false, $1, $4,` +
          ` 'handler')`,
        [id, task.id, task.owner, at(queuedAt), thread],
      );
    // Schema 32's triggers write the queue; its claims insert the leases.
    for (const [i, id] of ["r1", "r2", "r3", "r4", "r5"].entries()) {
      await insertQueued(id, id, minute(0, i + 1));
    }
    await insertQueued("r6-shared", "r1", minute(0, 6));
    const budget = { maxConcurrentRuns: 10, limit: 3, handlerNames: HANDLERS };
    expect((await claimDue(before, minute(1), budget)).map((c) => c.run.id)).toEqual([
      "r1",
      "r2",
      "r3",
    ]);
    await recordCompletion(before, "r3" as never, { status: "succeeded" }, minute(2));
    await pool.query(
      `UPDATE ${q}.runs SET status = 'cancelled', reason = 'cancel_requested',` +
        ` deadline_at = $1::timestamptz, finished_at = queued_at + interval '2 seconds',` +
        ` cancel_requested_at = queued_at + interval '1 second' WHERE id = 'r4'`,
      [at(minute(60))],
    );
    await before.close();
    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) AS row FROM ${q}.${table} AS x ORDER BY to_jsonb(x)::text`,
        )
      ).rows;
    const ids = async (table: string, column = "run_id") =>
      (await pool.query(`SELECT ${column} AS id FROM ${q}.${table} ORDER BY ${column}`)).rows.map(
        (r) => (r as Record<string, unknown>)["id"],
      );
    const stored = {
      runs: await rows("runs"),
      ready: await rows("run_ready"),
      holds: await rows("run_holds"),
      slots: await rows("claim_slots"),
    };
    expect(await ids("run_ready")).toEqual(["r5", "r6-shared"]);
    expect(await ids("claim_slots")).toEqual(["r1", "r2"]);
    expect(await ids("run_holds")).toEqual(["r4"]);

    await older.migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await rows("run_ready")).toEqual(stored.ready);
    expect(await rows("run_holds")).toEqual(stored.holds);
    expect(await rows("claim_slots")).toEqual(stored.slots);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    // A verdict deletes the lease; the shared thread's next run is then claimed (out of the queue,
    // a lease in).
    await recordCompletion(after, "r1" as never, { status: "succeeded" }, minute(3));
    expect(await ids("claim_slots")).toEqual(["r2"]);
    expect((await claimDue(after, minute(4), budget)).map((c) => c.run.id)).toEqual([
      "r5",
      "r6-shared",
    ]);
    expect(await ids("run_ready")).toEqual([]);
    expect(await ids("claim_slots")).toEqual(["r2", "r5", "r6-shared"]);
    // A run inserted queued enters the queue; moved in it (a later not_before), its row follows.
    await insertQueued("r7", "r7", minute(5));
    await pool.query(`UPDATE ${q}.runs SET not_before = $1::timestamptz WHERE id = 'r7'`, [
      at(minute(50)),
    ]);
    const ready = await pool.query(
      `SELECT run_id, not_before = $1::timestamptz AS moved FROM ${q}.run_ready`,
      [at(minute(50))],
    );
    expect(ready.rows).toEqual([{ run_id: "r7", moved: true }]);
    // Queued again (a retry): its lease out, its queue row in, in one statement.
    await pool.query(
      `UPDATE ${q}.runs SET status = 'queued', claim_token = NULL, claim_expires_at = NULL,` +
        ` claimed_by = NULL WHERE id = 'r2'`,
    );
    expect(await ids("claim_slots")).toEqual(["r5", "r6-shared"]);
    expect(await ids("run_ready")).toEqual(["r2", "r7"]);
    // The held run released (its deadline cleared): its hold goes; a cancel with a deadline holds.
    await pool.query(`UPDATE ${q}.runs SET deadline_at = NULL WHERE id = 'r4'`);
    await pool.query(
      `UPDATE ${q}.runs SET status = 'cancelled', reason = 'cancel_requested',` +
        ` deadline_at = $1::timestamptz, finished_at = queued_at + interval '2 seconds',` +
        ` cancel_requested_at = queued_at + interval '1 second' WHERE id = 'r7'`,
      [at(minute(60))],
    );
    expect(await ids("run_holds")).toEqual(["r7"]);
    expect(await ids("run_ready")).toEqual(["r2"]);
    // Still refused: an active run without a lease, written by an update or inserted.
    await expect(
      pool.query(`UPDATE ${q}.runs SET status = 'launching' WHERE id = 'r2'`),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await expect(
      pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, target_kind)` +
          ` VALUES ('r8', $1, $2, 'manual', $3, $3, 'launching', 1, $3, 'handler:' || $2, 'r8',` +
          ` false, 'r8', $3, 'handler')`,
        [task.id, task.owner, at(minute(6))],
      ),
    ).rejects.toMatchObject({ code: "23514", constraint: "runs_active_holds_slot" });
    await after.close();
  });
});
