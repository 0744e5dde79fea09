/**
 * Migration 34 (docs/storage.md#the-statements-of-one-fire-and-their-wal) puts a task's history and the
 * two occurrence keys in one index, `runs_occurrence_uq`. From a database of schema 33 holding runs of
 * every trigger (scheduled, backfill, manual) in every status, every row of `runs`, `run_ready`,
 * `claim_slots` and `run_holds` is kept, the old indexes are gone, and the duplicates are still refused:
 * a second scheduled run of an occurrence (written raw, or by an admission that finds it decided), a
 * backfill of an instant already backfilled, a manual run with a key already used; while a scheduled and a
 * backfilled run of one instant coexist as before. The store then carries on where it stopped.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { idempotencyKeyFor } from "../../../../src/domain/occurrence.js";
import { RUN_STATUSES } from "../../../../src/domain/run.js";
import { ALL, T0, handlerTarget, minute } from "../../../contract/fixtures.js";
import {
  admitDue,
  backfillRuns,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  recordLaunch,
  reload,
  scheduledDecisions,
  triggerRun,
} from "../../../contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);
const TERMINAL = ["succeeded", "failed", "timed_out", "cancelled", "skipped", "missed"] as const;

describe("postgres migration 34 (a task's history and its occurrence keys in one index)", () => {
  it("keeps every run of every trigger and status, and still refuses every duplicate", async () => {
    const older = await schemaAtVersion(database, 33);
    const { pool, schema, quoted: q, store: before } = older;
    const task = await insertTask(before, {
      target: handlerTarget("work"),
      options: { overlap: "allow_all" },
    });
    const at = (ms: number) => new Date(ms).toISOString();
    /** A run written as schema 33's code writes it (a scheduled or backfilled run's key NULL). */
    const insertRun = (
      id: string,
      trigger: "scheduled" | "backfill" | "manual",
      status: string,
      scheduledFor: number,
      clientKey = id,
    ) =>
      pool.query(
        `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
          ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, finished_at,` +
          ` target_kind) VALUES ($1, $2, $3, $4, $5, $5, $6, 0, $5, 'handler:' || $3, $1, false,` +
          ` $7, $5, CASE WHEN $6 <> 'queued' THEN $5::timestamptz END, 'handler')`,
        [
          id,
          task.id,
          task.owner,
          trigger,
          at(scheduledFor),
          status,
          trigger === "manual" ? idempotencyKeyFor(task.id, "manual", clientKey) : null,
        ],
      );
    // Schema 33's admission decides minutes 1 to 3 (scheduled, queued); a backfill and a manual run of
    // minute 2 beside them; four claimed (two then launched: running); and every terminal status of
    // every trigger, the three triggers of each at one instant.
    for (const m of [1, 2, 3]) await admitDue(before, minute(m));
    await insertRun("b-2", "backfill", "queued", minute(2));
    await insertRun("m-2", "manual", "queued", minute(2));
    const budget = { maxConcurrentRuns: 10, limit: 4, handlerNames: HANDLERS };
    const claimed = await claimDue(before, minute(3), budget);
    expect(claimed).toHaveLength(4);
    for (const run of claimed.slice(0, 2)) await recordLaunch(before, run, minute(3));
    await insertRun("b-5", "backfill", "queued", minute(5));
    await insertRun("m-5", "manual", "queued", minute(5));
    for (const [i, status] of TERMINAL.entries()) {
      for (const trigger of ["scheduled", "backfill", "manual"] as const) {
        await insertRun(`${trigger[0]!}-${status}`, trigger, status, minute(10 + i));
      }
    }
    await before.close();
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
      slots: await rows("claim_slots"),
    };
    const statuses = await pool.query(
      `SELECT trigger, array_agg(DISTINCT status ORDER BY status) AS statuses FROM ${q}.runs` +
        ` GROUP BY trigger ORDER BY trigger`,
    );
    const seen = new Set<string>();
    for (const row of statuses.rows as { trigger: string; statuses: string[] }[]) {
      // Queued or active, and every terminal status, for each trigger; all nine statuses in all.
      expect(row.statuses, row.trigger).toEqual(expect.arrayContaining([...TERMINAL]));
      expect(row.statuses.length, row.trigger).toBeGreaterThan(TERMINAL.length);
      for (const status of row.statuses) seen.add(status);
    }
    expect(statuses.rows).toHaveLength(3);
    expect([...seen].sort()).toEqual([...RUN_STATUSES].sort());
    await older.migrate();
    expect(await rows("runs")).toEqual(stored.runs);
    expect(await rows("run_ready")).toEqual(stored.ready);
    expect(await rows("run_holds")).toEqual(stored.holds);
    expect(await rows("claim_slots")).toEqual(stored.slots);
    const indexes = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'` +
        ` AND (indexname LIKE '%occurrence%' OR indexname = 'runs_history_idx') ORDER BY indexname`,
      [schema],
    );
    expect(indexes.rows).toEqual([{ indexname: "runs_occurrence_uq" }]);

    // A second scheduled or backfilled run of an occurrence, written raw: refused by the new key.
    await expect(insertRun("s-again", "scheduled", "queued", minute(1))).rejects.toMatchObject({
      code: "23505",
      constraint: "runs_occurrence_uq",
    });
    await expect(insertRun("b-again", "backfill", "queued", minute(2))).rejects.toMatchObject({
      code: "23505",
      constraint: "runs_occurrence_uq",
    });
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    // A backfill of minutes 2 and 3: minute 2 was backfilled already (refused: null); minute 3's
    // goes in beside its scheduled run.
    const backfilled = await backfillRuns(
      after,
      ALL,
      task.id,
      { from: minute(2), to: minute(4) },
      minute(6),
    );
    expect(backfilled.map((run) => run?.scheduledFor ?? null)).toEqual([null, minute(3)]);
    // A manual run with a key already used: refused (null); with a new key at the same instant: in.
    expect(await triggerRun(after, ALL, task.id, "m-2", minute(6))).toBeNull();
    const manual = await triggerRun(after, ALL, task.id, "m-6", minute(6));
    expect(manual?.trigger).toBe("manual");

    // The store carries on: the queued runs are claimed, the active ones finish.
    const queued = stored.ready.map((r) => (r as { row: { run_id: string } }).row.run_id);
    const next = await claimDue(after, minute(6), { ...budget, limit: 10 });
    expect(next.map((c) => c.run.id).sort()).toEqual(
      [...queued, backfilled[1]!.id, manual!.id].sort(),
    );
    for (const run of [...claimed, ...next]) {
      await recordCompletion(after, run.run.id, { status: "succeeded" }, minute(7));
    }
    expect(await pool.query(`SELECT run_id FROM ${q}.claim_slots`)).toMatchObject({ rowCount: 0 });

    // Admission meets an occurrence already decided (the task rewound to before minute 1): that task's
    // work is dropped, never a second scheduled run of minute 1.
    const decided = (await scheduledDecisions(after, task.id)).length;
    await after.tasks.mutateTask(ALL, task.id, ({ task: current }) => ({
      task: { ...current, decidedThrough: T0, nextRunAt: minute(1) },
      result: () => null,
    }));
    const rewound = await reload(after, task.id);
    const report = await admitDue(after, minute(8));
    expect(report.tasks).toBe(0);
    expect(await scheduledDecisions(after, task.id)).toHaveLength(decided);
    expect(await reload(after, task.id)).toEqual(rewound);
    // The task's history, newest first then by id, holds every run once.
    const history = await ledger(after, task.id);
    expect(history).toHaveLength(stored.runs.length + 2);
    await after.close();
  });
});
