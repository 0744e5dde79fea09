/**
 * How the SQLite store turns unique violations into outcomes, at its edge: an occurrence already decided
 * rolls back that task's admission only (a savepoint per task); a slot index refusing a claim skips that
 * run. Both are forced here with rows that the domain would never produce on its own.
 */
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { claimRun } from "../../../../src/domain/run-transitions.js";
import { durationMs } from "../../../../src/domain/time.js";
import { ALL, T0, at, minute, reuseThread } from "../../../contract/fixtures.js";
import { admitDue, insertTask, ledger, reload, triggerRun } from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-unique");
const LEASE = durationMs(60_000);
const closers: (() => Promise<void> | void)[] = [];

async function openPair(): Promise<{ store: SqliteStore; raw: Database.Database }> {
  const path = files.path();
  const store = await openSqliteStore({ path, newId: createIdGenerator() });
  const raw = new Database(path);
  closers.push(
    () => store.close(),
    () => {
      raw.close();
    },
  );
  return { store, raw };
}

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

afterAll(() => {
  files.remove();
});

describe("SqliteTaskRepository.admitDueTasks", () => {
  it("rolls back only the task whose occurrence was already decided, and goes on", async () => {
    const { store, raw } = await openPair();
    const decided = await insertTask(store);
    const other = await insertTask(store);
    raw
      .prepare(
        `INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, reason,
           not_before, thread_scope, thread_id, "exclusive", idempotency_key, queued_at, finished_at)
         VALUES ('earlier', ?, 'alice', 'scheduled', ?, ?, 'skipped', 'overlap', ?, 'agent:main',
           'earlier', 0, 'earlier-key', ?, ?)`,
      )
      .run(decided.id, minute(1), minute(1), minute(1), T0, T0);

    const report = await admitDue(store, minute(1));

    expect(report).toMatchObject({ tasks: 1, decisions: 1 });
    expect(report.queuedRuns.map((run) => run.taskId)).toEqual([other.id]);
    await expect(reload(store, decided.id)).resolves.toEqual(decided);
    expect((await ledger(store, decided.id)).map((run) => run.id)).toEqual(["earlier"]);
    await expect(reload(store, other.id)).resolves.toMatchObject({
      decidedThrough: minute(1),
      nextRunAt: minute(2),
    });
  });
});

describe("SqliteRunRepository.claimRuns", () => {
  async function claimEverything(store: SqliteStore, now = at(10)) {
    return store.runs.claimRuns(
      {
        now,
        replicaId: "replica-a",
        leaseMs: LEASE,
        maxConcurrentRuns: 10,
        limit: 10,
        handlerNames: new Set(),
      },
      // A careless selector: every candidate, busy or not. The indexes must still hold.
      (input) => input.candidates,
      (run, task, token) =>
        claimRun(run, { now, token, leaseMs: LEASE, replicaId: "replica-a" }, task.options),
    );
  }

  it("skips a run whose thread slot is taken instead of failing the claim", async () => {
    const { store } = await openPair();
    const task = await insertTask(store, {
      context: reuseThread("shared"),
      options: { overlap: "allow_all" },
    });
    const first = await triggerRun(store, ALL, task.id, "one", at(1));
    const second = await triggerRun(store, ALL, task.id, "two", at(2));
    const claimed = await claimEverything(store);
    expect(claimed.map((c) => c.run.id)).toEqual([first!.id]);
    const runs = await ledger(store, task.id);
    expect(runs.find((run) => run.id === second!.id)?.status).toBe("queued");
  });

  it("skips a run whose exclusive task slot is taken instead of failing the claim", async () => {
    const { store } = await openPair();
    const task = await insertTask(store, { options: { overlap: "buffer_all" } });
    const first = await triggerRun(store, ALL, task.id, "one", at(1));
    await triggerRun(store, ALL, task.id, "two", at(2));
    const claimed = await claimEverything(store);
    expect(claimed.map((c) => c.run.id)).toEqual([first!.id]);
  });
});
