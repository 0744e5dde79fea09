import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { SQLITE_MIGRATIONS } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { NotFoundError, StaleVersionError } from "../../../../src/domain/errors.js";
import { runId, threadId } from "../../../../src/domain/ids.js";
import {
  ALICE_SCOPE,
  ALL,
  BOB,
  BOB_SCOPE,
  T0,
  at,
  cron,
  minute,
  reuseThread,
} from "../../../contract/fixtures.js";
import {
  admitDue,
  backfillRuns,
  claimAndLaunch,
  claimDue,
  edit,
  insertTask,
  ledger,
  recordCompletion,
  reload,
  reloadRun,
  remove,
  triggerRun,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-store");
const open: SqliteStore[] = [];

async function openStore(path = files.path()): Promise<SqliteStore> {
  const store = await openSqliteStore({ path, newId: createIdGenerator() });
  open.push(store);
  return store;
}

afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

afterAll(() => {
  files.remove();
});

describe("openSqliteStore", () => {
  it("opens a file in WAL mode with a busy timeout and foreign keys", async () => {
    const path = files.path();
    const store = await openStore(path);
    expect(store.kind).toBe("sqlite");
    // The optional ports it offers (docs/architecture.md#stores).
    expect({
      wakes: "wakes" in store,
      referenceClock: "referenceClock" in store,
    }).toEqual({
      wakes: false,
      referenceClock: false,
    });
    const raw = new Database(path);
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      raw.close();
    }
    await expect(store.migrationStatus()).resolves.toEqual({
      applied: SQLITE_MIGRATIONS.map((m) => m.version),
      pending: [],
      current: true,
    });
  });

  it("works on :memory: too", async () => {
    const store = await openStore(":memory:");
    const task = await insertTask(store);
    await expect(store.tasks.findTask(ALL, task.id)).resolves.toEqual(task);
  });

  it("rejects every call after close, and closes twice without error", async () => {
    const store = await openStore();
    await store.close();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
    await expect(store.tasks.nextDueAt()).rejects.toThrow();
  });
});

describe("SqliteStore round trips", () => {
  it("returns a task exactly as inserted, and hides it from other owners", async () => {
    const store = await openStore();
    const task = await insertTask(store, {
      description: "ünïcode ✓",
      metadata: { team: "ops" },
      schedule: cron("0 9 * * 1-5", "Europe/Berlin"),
      context: reuseThread("thread-1"),
    });
    await expect(store.tasks.findTask(ALICE_SCOPE, task.id)).resolves.toEqual(task);
    await expect(store.tasks.findTask(BOB_SCOPE, task.id)).resolves.toBeNull();
    const page = await store.tasks.listTasks(ALL, {
      limit: 10,
      thread: { threadId: threadId("thread-1") },
    });
    expect(page.items.map((t) => t.id)).toEqual([task.id]);
  });

  it("walks a task's life: admission, claim, launch, completion, history", async () => {
    const store = await openStore();
    const task = await insertTask(store);
    const report = await admitDue(store, minute(1));
    expect(report).toMatchObject({ tasks: 1, decisions: 1, skipped: 0, missed: 0 });
    const [launched] = await claimAndLaunch(store, minute(1, 50));
    expect(launched).toMatchObject({ status: "running", latenessMs: 50, attempt: 1 });
    await recordCompletion(
      store,
      launched!.id,
      { status: "succeeded", result: { ok: [1, "a"] } },
      minute(2),
    );
    const run = await reloadRun(store, launched!.id);
    expect(run).toMatchObject({
      status: "succeeded",
      result: { ok: [1, "a"] },
      finishedAt: minute(2),
    });
    const after = await reload(store, task.id);
    expect(after).toMatchObject({
      runCount: 1,
      lastRunId: run.id,
      lastRunAt: minute(1, 50),
      version: 1,
    });
    expect(after.nextRunAt).toBe(minute(2));
    await expect(ledger(store, task.id)).resolves.toEqual([run]);
  });

  it("refuses a stale version and writes nothing", async () => {
    const store = await openStore();
    const task = await insertTask(store);
    await edit(store, ALL, task.id, { title: "Renamed" }, at(1), 1);
    await expect(edit(store, ALL, task.id, { title: "Again" }, at(2), 1)).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    await expect(reload(store, task.id)).resolves.toMatchObject({ title: "Renamed", version: 2 });
  });

  it("answers not_found for another owner's task and for an unknown run", async () => {
    const store = await openStore();
    const task = await insertTask(store);
    await expect(triggerRun(store, BOB_SCOPE, task.id, "k", at(1))).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const [unknown] = await store.runs.changeRuns([{ id: runId("nope"), decide: () => null }]);
    expect(unknown?.kind === "refused" && unknown.error).toBeInstanceOf(NotFoundError);
  });

  it("inserts a repeated manual key or backfill time as null, not as an error", async () => {
    const store = await openStore();
    const task = await insertTask(store, { options: { overlap: "allow_all" } });
    const first = await triggerRun(store, ALL, task.id, "same", at(1));
    expect(first).not.toBeNull();
    await expect(triggerRun(store, ALL, task.id, "same", at(2))).resolves.toBeNull();
    await expect(store.runs.findManualRun(task.id, first!.idempotencyKey)).resolves.toEqual(first);
    const range = { from: minute(-3), to: T0 };
    const backfilled = await backfillRuns(store, ALL, task.id, range, at(3));
    expect(backfilled.filter((r) => r !== null)).toHaveLength(3);
    await expect(backfillRuns(store, ALL, task.id, range, at(4))).resolves.toEqual([
      null,
      null,
      null,
    ]);
  });

  it("purges a deleted task with its terminal runs once nothing of it is active", async () => {
    const store = await openStore();
    const task = await insertTask(store, { owner: BOB });
    await admitDue(store, minute(1));
    const [run] = await claimAndLaunch(store, minute(1));
    await recordCompletion(store, run!.id, { status: "succeeded" }, minute(2));
    await remove(store, task.id, minute(3));
    await expect(store.tasks.findTask(ALL, task.id)).resolves.toBeNull();
    await expect(store.runs.purge(minute(2), 100)).resolves.toBe(2);
    await expect(store.runs.findRun(ALL, run!.id)).resolves.toBeNull();
  });

  it("upserts replica heartbeats and finds handler runs of silent replicas", async () => {
    const store = await openStore();
    await store.replicas.heartbeat("replica-a", at(0));
    await store.replicas.heartbeat("replica-a", at(10));
    await expect(store.runs.findLostHandlerRuns(at(5), 10)).resolves.toEqual([]);
    await expect(claimDue(store, at(20))).resolves.toEqual([]);
  });
});
