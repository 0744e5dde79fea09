/**
 * Migration 21 (docs/storage.md#write-ahead-log-per-fire) upgrades a database of schema 20 holding
 * queued, launching, running and terminal runs: every run, task and slot keeps its row, the two indexes
 * of `runs` on the claim's and the launch's state are gone, and every sweep that read them (expired
 * claims, claims of silent replicas, past deadline, lost handler runs, the watchers' running runs), the
 * queue statistics and the next wake-up give the same answers through the slots as before; then the store
 * goes on where it stopped.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import type { PostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { RunId } from "../../../../src/domain/ids.js";
import { durationMs } from "../../../../src/domain/time.js";
import { ALL, handlerTarget, minute } from "../../../contract/fixtures.js";
import {
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
  reloadRun,
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
const HANDLERS = new Set(["work"]);

/** What the sweeps and reads that used the dropped indexes answer, at an instant past every lease. */
async function sweeps(store: PostgresStore) {
  const later = minute(24 * 60);
  const ids = (runs: readonly { run: { id: RunId } }[]) => runs.map((c) => c.run.id).sort();
  return {
    expired: ids(await store.runs.findExpiredClaims(later, 100)),
    silent: ids(await store.runs.findExpiredClaims(minute(1), 100, later)),
    pastDeadline: [...(await store.runs.findPastDeadline(later, 100))].sort(),
    lost: [...(await store.runs.findLostHandlerRuns(later, 100))].sort(),
    running: ids(await store.runs.findRunningRuns("handler", null, 100)),
    stats: await store.runs.queueStats(minute(2)),
    wake: await store.runs.nextRunWakeAt(),
  };
}

describe("postgres migration 21 (active runs found through their slots)", () => {
  it("keeps every run, task and slot, and the sweeps answer as before", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 20);
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all", runTimeoutMs: durationMs(5 * 60_000) },
    });
    const runs: RunId[] = [];
    for (const key of ["a", "b", "c", "d", "e"]) {
      runs.push((await triggerRun(before, ALL, task.id, key, minute(0, 1)))!.id);
    }
    const claimed = await claimDue(before, minute(1), { limit: 4, handlerNames: HANDLERS });
    expect(claimed).toHaveLength(4);
    // Two launched (one of them then finished), two left launching, one left queued.
    await recordLaunch(before, claimed[0]!, minute(1, 1));
    await recordLaunch(before, claimed[1]!, minute(1, 1));
    await recordCompletion(before, claimed[1]!.run.id, { status: "succeeded" }, minute(1, 2));
    const answers = await sweeps(before);
    expect(answers.expired).toHaveLength(2);
    expect(answers.pastDeadline).toEqual([claimed[0]!.run.id]);
    expect(answers.running).toEqual([claimed[0]!.run.id]);
    expect(answers.stats).toMatchObject({ queued: 1, active: 3 });
    await before.close();

    const rows = async (table: string) =>
      (
        await pool.query(
          `SELECT to_jsonb(x) - 'run_task_id' AS row FROM ${q}.${table} AS x ORDER BY (to_jsonb(x) - 'run_task_id')::text`,
        )
      ).rows;
    const stored = {
      runs: await rows("runs"),
      tasks: await taskRows(pool, q),
      slots: await leaseRows(pool, q),
    };
    expect((stored.runs as { row: { status: string } }[]).map((r) => r.row.status).sort()).toEqual([
      "launching",
      "launching",
      "queued",
      "running",
      "succeeded",
    ]);

    await migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await taskRows(pool, q)).toEqual(stored.tasks);
    expect(await leaseRows(pool, q)).toEqual(stored.slots);
    const indexes = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'`,
      [schema],
    );
    const names = indexes.rows.map((row) => (row as { indexname: string }).indexname);
    expect(names).not.toContain("runs_claim_expiry_idx");
    expect(names).not.toContain("runs_deadline_idx");

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await sweeps(after)).toEqual(answers);
    // The store goes on where it was: the running and launching runs end, the queued one is claimed.
    for (const c of [claimed[0]!, claimed[2]!, claimed[3]!]) {
      await recordCompletion(after, c.run.id, { status: "succeeded" }, minute(2));
    }
    const next = await claimDue(after, minute(3), { limit: 4, handlerNames: HANDLERS });
    expect(next.map((c) => c.run.id)).toEqual([runs[4]]);
    expect((await reloadRun(after, runs[4]!)).status).toBe("launching");
    expect((await sweeps(after)).stats).toMatchObject({ queued: 0, active: 1 });
    await after.close();
  });
});
