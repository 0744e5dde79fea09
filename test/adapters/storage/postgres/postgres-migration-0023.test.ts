/**
 * Migration 23 (docs/storage.md#tasks-and-task_state) upgrades a database of schema 22 holding tasks in
 * every state a fire leaves them (admitted and launched, a once task completed, a failed run's error,
 * paused, deleted, not yet due) and runs queued, running and terminal: every task reads exactly as before
 * and every column value is kept, now split between `tasks` and `task_state`; only due tasks are in
 * `task_state_due_idx`; a migration killed half-way leaves schema 22 as it was and is applied again from
 * the start; then the store goes on where it stopped (the next due instant, admission, claims).
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { POSTGRES_MIGRATION_0023 } from "../../../../src/adapters/storage/postgres/postgres-migration-0023.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { TaskId } from "../../../../src/domain/ids.js";
import type { Task } from "../../../../src/domain/task.js";
import { ALL, handlerTarget, minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  pause,
  recordCompletion,
  recordLaunch,
  reload,
  remove,
  triggerRun,
} from "../../../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  schemaAtVersion,
  taskRows,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 23 (a narrow task_state row for what a fire writes)", () => {
  it("keeps every task as it reads, indexes only the due ones, survives an interruption, and goes on", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 22);
    const options = { overlap: "allow_all" as const };
    const cron = await insertTask(before, { target: handlerTarget("work"), options });
    const once = await insertTask(before, {
      target: handlerTarget("work"),
      schedule: onceAt(minute(1)),
      options,
    });
    const failing = await insertTask(before, { target: handlerTarget("work"), options });
    const paused = await insertTask(before, { options });
    const deleted = await insertTask(before, { options });
    const later = await insertTask(before, { createdAt: minute(10), options });
    // Every due task admitted at minute 1 and its run launched; two of them judged; a manual run left
    // queued.
    expect((await admitDue(before, minute(1))).tasks).toBe(5);
    const claimed = await claimDue(before, minute(1), { handlerNames: HANDLERS });
    expect(claimed).toHaveLength(5);
    for (const c of claimed) await recordLaunch(before, c, minute(1, 1));
    const runOf = (task: TaskId) => claimed.find((c) => c.run.taskId === task)!.run.id;
    await recordCompletion(before, runOf(once.id), { status: "succeeded" }, minute(1, 2));
    await recordCompletion(
      before,
      runOf(failing.id),
      { status: "failed", error: "boom", retry: { kind: "never", reason: "non_retryable" } },
      minute(1, 3),
    );
    await triggerRun(before, ALL, paused.id, "manual-1", minute(1, 4));
    await pause(before, paused.id, minute(1, 5));
    await remove(before, deleted.id, minute(1, 6), true);
    const ids = [cron.id, once.id, failing.id, paused.id, later.id];
    const read = new Map<TaskId, Task>();
    for (const id of ids) read.set(id, await reload(before, id));
    expect(read.get(once.id)!.status).toBe("completed");
    expect(read.get(failing.id)!.lastError).toBe("boom");
    expect(read.get(paused.id)!.status).toBe("paused");
    expect(read.get(paused.id)!.nextRunAt).toBe(minute(2));
    expect(read.get(cron.id)!.runCount).toBe(1);
    await before.close();

    const runRows = async () =>
      (await pool.query(`SELECT to_jsonb(r) AS row FROM ${q}.runs AS r ORDER BY id`)).rows;
    const stored = { tasks: await taskRows(pool, q), runs: await runRows() };
    expect(stored.tasks).toHaveLength(6);

    // A runner killed half-way through migration 23 (its table made and filled, not yet committed).
    if (database.url !== null) {
      const client = new pg.Client({ connectionString: database.url });
      client.on("error", () => undefined);
      await client.connect();
      const pid = (
        (await client.query("SELECT pg_backend_pid() AS pid")).rows[0] as { pid: number }
      ).pid;
      await client.query("BEGIN");
      await client.query(`SET LOCAL search_path TO ${q}`);
      const halfway = POSTGRES_MIGRATION_0023.slice(
        0,
        POSTGRES_MIGRATION_0023.indexOf("CREATE INDEX"),
      );
      await client.query(halfway);
      await pool.query("SELECT pg_terminate_backend($1::int4)", [pid]);
      await client.end().catch(() => undefined);
      const left = await pool.query("SELECT to_regclass($1::text) IS NULL AS gone", [
        `${q}.task_state`,
      ]);
      expect(left.rows[0]).toEqual({ gone: true });
      expect(await taskRows(pool, q)).toEqual(stored.tasks);
    }

    await migrate();
    // Every column of every task and run kept, the state now on task_state.
    expect(await taskRows(pool, q)).toEqual(stored.tasks);
    expect(await runRows()).toEqual(stored.runs);
    const columns = await pool.query(
      `SELECT column_name FROM information_schema.columns` +
        ` WHERE table_schema = $1::text AND table_name = 'tasks'`,
      [schema],
    );
    const names = (columns.rows as { column_name: string }[]).map((r) => r.column_name);
    for (const moved of ["status", "next_run_at", "decided_through", "run_count", "version"]) {
      expect(names).not.toContain(moved);
    }
    const indexes = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1::text` +
        ` AND tablename IN ('tasks', 'task_state') ORDER BY indexname`,
      [schema],
    );
    const indexNames = (indexes.rows as { indexname: string }[]).map((r) => r.indexname);
    expect(indexNames).toContain("task_state_due_idx");
    expect(indexNames).not.toContain("tasks_due_idx");
    // Only the enabled tasks with a next occurrence are due: not the paused, completed or deleted ones.
    const due = await pool.query(
      `SELECT task_id FROM ${q}.task_state WHERE due_at IS NOT NULL ORDER BY task_id`,
    );
    expect((due.rows as { task_id: string }[]).map((r) => r.task_id)).toEqual(
      [cron.id, failing.id, later.id].sort(),
    );

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    for (const id of ids) expect(await reload(after, id)).toEqual(read.get(id));
    expect(await after.tasks.findTask(ALL, deleted.id)).toBeNull();
    // The store goes on where it was: minute 2 is next, and admitting it decides only what is due.
    expect(await after.tasks.nextDueAt()).toBe(minute(2));
    expect((await admitDue(after, minute(2))).tasks).toBe(2);
    expect((await reload(after, cron.id)).admittedCount).toBe(2);
    expect((await reload(after, paused.id)).admittedCount).toBe(1);
    await recordCompletion(after, runOf(cron.id), { status: "succeeded" }, minute(2, 1));
    const next = await claimDue(after, minute(2, 2), { handlerNames: HANDLERS });
    // The two scheduled occurrences of minute 2, and the paused task's manual run.
    expect(next.map((c) => c.run.taskId).sort()).toEqual([cron.id, failing.id, paused.id].sort());
    const resumed = await reload(after, cron.id);
    expect(resumed.runCount).toBe(1);
    expect(resumed.lastRunId).toBe(runOf(cron.id));
    await after.close();
  });
});
