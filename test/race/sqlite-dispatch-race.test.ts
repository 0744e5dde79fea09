/**
 * The dispatch races of the reference scheduler (deerflow-scheduler.md 6.4), on a real SQLite file with
 * one connection per process: a manual trigger raced against another with the same idempotency key, and
 * against scheduled admission; the same with natural timing, five times; and the partial unique indexes
 * that back the single launching/running slot per exclusive task and per thread.
 */
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { TaskId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { ALL, at, minute, reuseThread } from "../contract/fixtures.js";
import type { TaskFixture } from "../contract/fixtures.js";
import {
  claimAndLaunch,
  insertTask,
  ledger,
  recordCompletion,
  triggerRun,
} from "../contract/store-steps.js";
import type { RaceOutcome } from "./sqlite-race-jobs.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-dispatch-race");
const stores: SqliteStore[] = [];

async function open(path: string): Promise<SqliteStore> {
  const store = await openSqliteStore({ path, newId: createIdGenerator() });
  stores.push(store);
  return store;
}

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

afterAll(() => {
  files.remove();
});

/** A file holding one task, and a store on it for the assertions. */
async function fileWithTask(
  fixture: TaskFixture,
): Promise<{ path: string; store: SqliteStore; id: TaskId }> {
  const path = files.path("dispatch");
  const store = await open(path);
  const task = await insertTask(store, fixture);
  return { path, store, id: task.id };
}

function decisions(outcomes: readonly RaceOutcome[]): string[] {
  return outcomes
    .map((outcome) => (outcome.op === "trigger" ? outcome.decision : outcome.op))
    .sort();
}

function launchedIds(outcomes: readonly RaceOutcome[]): string[] {
  return outcomes.flatMap((outcome) =>
    outcome.op === "trigger" || outcome.op === "admit" ? outcome.launched : [],
  );
}

function launched(runs: readonly Run[]): Run[] {
  return runs.filter((run) => run.attempt > 0);
}

async function raceTwoTriggers(fixture: TaskFixture, barrier: boolean) {
  const { path, store, id } = await fileWithTask(fixture);
  const job = {
    op: "trigger" as const,
    path,
    taskId: id,
    clientKey: "same-key",
    now: at(5),
    launch: true,
  };
  const outcomes = await runWorkers([job, job], { barrier });
  return { outcomes, runs: await ledger(store, id) };
}

describe("SQLite dispatch races (separate processes, one file)", () => {
  it("two concurrent manual triggers with one key under overlap skip make one run, launched once", async () => {
    const { outcomes, runs } = await raceTwoTriggers({}, true);
    // The loser either sees the winner's active run (skip refuses) or its key (repeated).
    expect(decisions(outcomes)[0]).toBe("inserted");
    expect(["repeated", "run_active"]).toContain(decisions(outcomes)[1]);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: "manual", status: "running", attempt: 1 });
    expect(launchedIds(outcomes)).toEqual([runs[0]!.id]);
  });

  it("two concurrent manual triggers with one key under allow_all collide on the key", async () => {
    const { outcomes, runs } = await raceTwoTriggers({ options: { overlap: "allow_all" } }, true);
    expect(decisions(outcomes)).toEqual(["inserted", "repeated"]);
    expect(runs).toHaveLength(1);
    expect(launchedIds(outcomes)).toEqual([runs[0]!.id]);
  });

  it("scheduled admission and a manual trigger on an exclusive skip task launch exactly one run", async () => {
    const { path, store, id } = await fileWithTask({});
    const outcomes = await runWorkers(
      [
        { op: "admit", path, rounds: [minute(1)], limit: 10, launch: true },
        { op: "trigger", path, taskId: id, clientKey: "manual", now: minute(1), launch: true },
      ],
      { barrier: true },
    );
    const runs = await ledger(store, id);
    expect(launched(runs)).toHaveLength(1);
    expect(launchedIds(outcomes)).toEqual([launched(runs)[0]!.id]);
    // The occurrence has exactly one decision: launched itself, or skipped for the manual run.
    const occurrence = runs.filter((run) => run.trigger === "scheduled");
    expect(occurrence).toHaveLength(1);
    expect(occurrence[0]!.scheduledFor).toBe(minute(1));
    const trigger = outcomes.find((outcome) => outcome.op === "trigger");
    if (occurrence[0]!.status === "skipped") {
      expect(occurrence[0]!.reason).toBe("overlap");
      expect(trigger).toMatchObject({ decision: "inserted" });
    } else {
      expect(occurrence[0]!.status).toBe("running");
      expect(trigger).toMatchObject({ decision: "run_active" });
    }
  });

  it.each([1, 2, 3, 4, 5])(
    "natural timing, round %i: concurrent dispatches of one key launch exactly once",
    async () => {
      const { outcomes, runs } = await raceTwoTriggers({}, false);
      expect(runs).toHaveLength(1);
      expect(launched(runs)).toHaveLength(1);
      expect(launchedIds(outcomes)).toEqual([runs[0]!.id]);
    },
  );
});

describe("SQLite slot keys: run_active, kept by triggers on runs (two connections, one file)", () => {
  function slotWriter(path: string) {
    const raw = new Database(path);
    const move = raw.prepare("UPDATE runs SET status = ? WHERE id = ?");
    return {
      move: (run: Run, status: string) => move.run(status, run.id),
      // A copy of the run by column name (migrations add and move columns): another id, status,
      // nominal time and idempotency key, everything else as it is.
      insertCopy: (run: Run, id: string, status: string) => {
        const columns = (raw.prepare("PRAGMA table_info(runs)").all() as { name: string }[]).map(
          (c) => c.name,
        );
        const copied: Record<string, string> = {
          id: "?",
          status: "?",
          scheduled_for: "scheduled_for + 1",
          idempotency_key: "idempotency_key || ?",
        };
        const values = columns.map((c) => copied[c] ?? `"${c}"`);
        const params = columns.flatMap((c) =>
          c === "id" ? [id] : c === "status" ? [status] : c === "idempotency_key" ? [id] : [],
        );
        return raw
          .prepare(
            `INSERT INTO runs (${columns.map((c) => `"${c}"`).join(", ")})
             SELECT ${values.join(", ")} FROM runs WHERE id = ?`,
          )
          .run(...params, run.id);
      },
      close: () => raw.close(),
    };
  }

  it("refuse a second launching run of an exclusive task, allow tombstones and other tasks", async () => {
    const { path, store, id } = await fileWithTask({ options: { overlap: "buffer_all" } });
    const other = await insertTask(store, { options: { overlap: "buffer_all" } });
    const [first, second] = [
      (await triggerRun(store, ALL, id, "one", at(1)))!,
      (await triggerRun(store, ALL, id, "two", at(2)))!,
    ];
    const elsewhere = (await triggerRun(store, ALL, other.id, "one", at(3)))!;
    const secondConnection = await open(path);
    const [running] = await claimAndLaunch(secondConnection, at(10), { limit: 1 });
    expect(running!.id).toBe(first.id);

    const writer = slotWriter(path);
    try {
      expect(() => writer.move(second, "launching")).toThrow(
        /UNIQUE constraint failed: index 'run_active_task_uq'/,
      );
      expect(() => writer.move(second, "running")).toThrow(
        /UNIQUE constraint failed: index 'run_active_task_uq'/,
      );
      writer.insertCopy(first, "tombstone-1", "succeeded");
      writer.insertCopy(first, "tombstone-2", "cancelled");
      expect(writer.move(elsewhere, "launching").changes).toBe(1);
      await recordCompletion(store, first.id, { status: "succeeded" }, at(20));
      expect(writer.move(second, "launching").changes).toBe(1);
    } finally {
      writer.close();
    }
  });

  it("refuse a second launching run on one thread, even across non-exclusive tasks", async () => {
    const fixture = { context: reuseThread("shared"), options: { overlap: "allow_all" as const } };
    const { path, store, id } = await fileWithTask(fixture);
    const other = await insertTask(store, fixture);
    const mine = (await triggerRun(store, ALL, id, "one", at(1)))!;
    const theirs = (await triggerRun(store, ALL, other.id, "one", at(2)))!;
    const onAnotherThread = await insertTask(store, { options: { overlap: "allow_all" } });
    const free = (await triggerRun(store, ALL, onAnotherThread.id, "one", at(3)))!;
    const writer = slotWriter(path);
    try {
      expect(writer.move(mine, "running").changes).toBe(1);
      expect(() => writer.move(theirs, "launching")).toThrow(
        /UNIQUE constraint failed: run_active.thread_scope, run_active.thread_id/,
      );
      writer.insertCopy(mine, "tombstone", "failed");
      expect(writer.move(free, "running").changes).toBe(1);
      expect(writer.move(mine, "succeeded").changes).toBe(1);
      expect(writer.move(theirs, "launching").changes).toBe(1);
    } finally {
      writer.close();
    }
  });

  it("let the store's own claims respect the slots: a later claimer gets the next run only", async () => {
    const { path, store, id } = await fileWithTask({ options: { overlap: "buffer_all" } });
    await triggerRun(store, ALL, id, "one", at(1));
    await triggerRun(store, ALL, id, "two", at(2));
    const replicaB = await open(path);
    const [a] = await claimAndLaunch(store, at(10));
    await expect(claimAndLaunch(replicaB, at(10))).resolves.toEqual([]);
    await recordCompletion(store, a!.id, { status: "succeeded" }, at(11));
    const [b] = await claimAndLaunch(replicaB, at(12));
    expect(b!.id).not.toBe(a!.id);
  });
});
