/**
 * The claim fused into admission on a real SQLite file (docs/storage.md#fused-admit-and-claim-on-sqlite):
 * the runs this process may launch at once are inserted already claimed (launching, their slot taken in
 * `run_active`, never a row of `run_ready`), chosen as a claim chooses; every other run is queued as
 * before. The budget stays exact, a queued run is never overtaken by a fused one of its owner or thread,
 * the owner's share and the handlers served are respected, and a fused claim is fenced and found after
 * its lease like any claim. Assertions are on the ledger and the queue tables, read by a second
 * connection; `run_ready`'s inserts are logged by a trigger the test adds to the file.
 */
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { admitTask } from "../../../../src/domain/admit-task.js";
import type { OwnerShare } from "../../../../src/domain/claim.js";
import { ownerId } from "../../../../src/domain/ids.js";
import type { TaskId } from "../../../../src/domain/ids.js";
import type { Instant } from "../../../../src/domain/time.js";
import {
  ALICE,
  ALL,
  BOB,
  agentTarget,
  handlerTarget,
  minute,
  onceAt,
  reuseThread,
} from "../../../contract/fixtures.js";
import {
  POLICY,
  admitAndClaim,
  claimDue,
  insertTask,
  ledger,
  recordLaunch,
  triggerRun,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const HANDLER = new Set(["h"]);

describe("sqlite: the claim fused into admission", () => {
  const files = tempFiles("fused-claim");
  let store: SqliteStore;
  let look: Database.Database;

  // A fresh file for each case: no slot or queued run left by another.
  beforeEach(async () => {
    const path = files.path();
    store = await openSqliteStore({ path, newId: createIdGenerator() });
    look = new Database(path);
    look.exec(
      `CREATE TABLE ready_log (run_id TEXT NOT NULL);
       CREATE TRIGGER ready_logged AFTER INSERT ON run_ready
       BEGIN INSERT INTO ready_log (run_id) VALUES (NEW.run_id); END;`,
    );
  });

  afterEach(async () => {
    look.close();
    await store.close();
  });

  afterAll(() => {
    files.remove();
  });

  /** How many of `runIds` ever entered `run_ready`, and how many hold a slot in `run_active`. */
  function places(runIds: readonly string[]): { everReady: number; active: number } {
    const ids = JSON.stringify(runIds);
    const everReady = look
      .prepare(`SELECT count(*) FROM ready_log WHERE run_id IN (SELECT value FROM json_each(?))`)
      .pluck()
      .get(ids) as number;
    const active = look
      .prepare(`SELECT count(*) FROM run_active WHERE run_id IN (SELECT value FROM json_each(?))`)
      .pluck()
      .get(ids) as number;
    return { everReady, active };
  }

  /** Once tasks on the handler `h`, due at `at`. */
  async function dueTasks(n: number, at: Instant, fixture = {}): Promise<TaskId[]> {
    const ids: TaskId[] = [];
    for (let i = 0; i < n; i++) {
      const task = await insertTask(store, {
        schedule: onceAt(at),
        target: handlerTarget("h"),
        ...fixture,
      });
      ids.push(task.id);
    }
    return ids;
  }

  async function runsOf(ids: readonly TaskId[]): Promise<{ id: string; status: string }[]> {
    const out: { id: string; status: string }[] = [];
    for (const id of ids) for (const run of await ledger(store, id)) out.push(run);
    return out;
  }

  async function statuses(ids: readonly TaskId[]): Promise<string[]> {
    return (await runsOf(ids)).map((run) => run.status).sort();
  }

  it("inserts a burst within the budget already claimed: launching, never a row of run_ready", async () => {
    const ids = await dueTasks(20, minute(1));
    const report = await admitAndClaim(store, minute(1, 10), {
      handlerNames: HANDLER,
      replicaId: "fuser",
      limit: 20,
      maxConcurrentRuns: 50,
    });
    expect(report.tasks).toBe(20);
    expect(report.claimed).toHaveLength(20);
    expect(report.claimed?.every((c) => c.run.status === "launching")).toBe(true);
    expect(report.claimed?.every((c) => c.run.claimedBy === "fuser")).toBe(true);
    // The runs as decided are still reported queued (the runtime counts them as admitted).
    expect(report.queuedRuns).toHaveLength(20);
    const runs = await runsOf(ids);
    expect(runs.map((run) => run.status)).toEqual(Array(20).fill("launching"));
    expect(places(runs.map((run) => run.id))).toEqual({ everReady: 0, active: 20 });
    // Nothing is left for the claim.
    expect(await claimDue(store, minute(1, 15), { handlerNames: HANDLER })).toEqual([]);
    // The claim's token fences the launch as any claim's does.
    for (const claimed of report.claimed!) {
      const launched = await recordLaunch(store, claimed, minute(1, 20));
      expect(launched?.run.status).toBe("running");
    }
    expect(places(runs.map((run) => run.id))).toEqual({ everReady: 0, active: 20 });
  });

  it("keeps the budget exact: the room is fused, the rest queued", async () => {
    const ids = await dueTasks(8, minute(2));
    const report = await admitAndClaim(store, minute(2, 10), {
      handlerNames: HANDLER,
      limit: 10,
      maxConcurrentRuns: 3,
    });
    expect(report.claimed).toHaveLength(3);
    expect(await statuses(ids)).toEqual([
      ...Array<string>(3).fill("launching"),
      ...Array<string>(5).fill("queued"),
    ]);
    // Nothing more fits until a run ends.
    expect(
      await claimDue(store, minute(2, 20), { handlerNames: HANDLER, maxConcurrentRuns: 3 }),
    ).toEqual([]);
  });

  it("fuses nothing while a queued run is ready to claim: the queue is served first (FIFO)", async () => {
    const first = await dueTasks(2, minute(3));
    // Admitted without a claim: queued, ready.
    const queued = await store.tasks.admitDueTasks(
      minute(3, 5),
      100,
      (task, active) => admitTask(task, active, minute(3, 5)).write,
    );
    expect(queued.claimed).toBeUndefined();
    expect(await statuses(first)).toEqual(["queued", "queued"]);
    const later = await dueTasks(2, minute(3));
    const report = await admitAndClaim(store, minute(3, 10), { handlerNames: HANDLER });
    expect(report.claimed).toEqual([]);
    expect(await statuses(later)).toEqual(["queued", "queued"]);
    // The claim takes the earlier ones first.
    const claimed = await claimDue(store, minute(3, 20), {
      handlerNames: HANDLER,
      limit: 2,
    });
    expect(claimed.map((c) => c.run.taskId).sort()).toEqual([...first].sort());
  });

  it("does not fuse a run of a handler this process does not serve: it is queued", async () => {
    const ids = await dueTasks(1, minute(4));
    const report = await admitAndClaim(store, minute(4, 10), { handlerNames: new Set() });
    expect(report.claimed).toEqual([]);
    expect(await statuses(ids)).toEqual(["queued"]);
  });

  it("never overtakes a queued run of its thread, even one not yet ready", async () => {
    const thread = { target: agentTarget("main"), context: reuseThread("shared") };
    const alices = await insertTask(store, {
      ...thread,
      owner: ALICE,
      schedule: onceAt(minute(600)),
      options: { overlap: "allow_all" },
    });
    const aliceRun = await triggerRun(store, ALL, alices.id, "first", minute(10));
    expect(aliceRun!.notBefore).toBe(minute(10));
    const bobs = await dueTasks(1, minute(5), { ...thread, owner: BOB });
    // Frank's task, on a thread of its own: the waiting run does not hold it back.
    const franks = await dueTasks(1, minute(5), { owner: ownerId("frank") });
    const report = await admitAndClaim(store, minute(5, 10), { handlerNames: HANDLER });
    expect(report.claimed?.map((c) => c.run.taskId)).toEqual(franks);
    expect(await statuses(bobs)).toEqual(["queued"]);
  });

  it("fuses the first of two new runs of one shared thread and queues the second behind it", async () => {
    const thread = { target: agentTarget("main"), context: reuseThread("shared") };
    // Two new runs of one shared thread in one batch: the first is fused, the second queued behind it.
    const pair = await dueTasks(2, minute(6), { ...thread, owner: BOB });
    const both = await admitAndClaim(store, minute(6, 10), { handlerNames: HANDLER });
    expect(both.claimed?.map((c) => c.run.taskId)).toEqual([pair[0]]);
    expect((await ledger(store, pair[1]!)).map((r) => r.status)).toEqual(["queued"]);
  });

  it("does not fuse a run whose thread a launching run holds: it is queued", async () => {
    const thread = { target: agentTarget("main"), context: reuseThread("busy") };
    const first = await dueTasks(1, minute(6), { ...thread, owner: BOB });
    const fused = await admitAndClaim(store, minute(6, 10), { handlerNames: HANDLER });
    expect(fused.claimed?.map((c) => c.run.taskId)).toEqual(first);
    const second = await dueTasks(1, minute(7), { ...thread, owner: ALICE });
    const report = await admitAndClaim(store, minute(7, 10), { handlerNames: HANDLER });
    expect(report.claimed).toEqual([]);
    expect(await statuses(second)).toEqual(["queued"]);
  });

  it("does not fuse the run of an exclusive task a cancelled run's hold holds, the queue empty: it is queued", async () => {
    // A once task's run is exclusive (its default overlap); the hold (a cancelled run whose target was
    // not told, until its deadline) has no key to refuse a second run: only the fused read keeps it out.
    const [held, free] = await dueTasks(2, minute(8));
    look
      .prepare(
        `INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
         VALUES ('cancelled-run', 'handler:alice', 'cancelled-run', ?, ?)`,
      )
      .run(held, minute(60));
    const report = await admitAndClaim(store, minute(8, 10), { handlerNames: HANDLER });
    expect(report.claimed?.map((c) => c.run.taskId)).toEqual([free]);
    expect(await statuses([held!])).toEqual(["queued"]);
    // Once the hold's deadline has passed, the claim takes it.
    expect(await claimDue(store, minute(61), { handlerNames: HANDLER })).toHaveLength(1);
  });

  it("keeps each owner within its share", async () => {
    const owner = ownerId("dave");
    const share: OwnerShare = { maxActiveRuns: 2, overrides: new Map() };
    const ids = await dueTasks(5, minute(7), { owner });
    const report = await admitAndClaim(store, minute(7, 10), {
      handlerNames: HANDLER,
      share,
      maxConcurrentRuns: 100,
    });
    expect(report.claimed).toHaveLength(2);
    expect(await statuses(ids)).toEqual(["launching", "launching", "queued", "queued", "queued"]);
  });

  it("leaves a fused claim whose process dies to be found after its lease, like any claim", async () => {
    await dueTasks(1, minute(8));
    const report = await admitAndClaim(store, minute(8, 10), {
      handlerNames: HANDLER,
      replicaId: "dies",
    });
    expect(report.claimed).toHaveLength(1);
    const run = report.claimed![0]!.run;
    const found = async (at: Instant) =>
      (await store.runs.findExpiredClaims(at, 100)).map((c) => c.run.id);
    expect(await found(minute(8, 20))).not.toContain(run.id);
    expect(run.claimExpiresAt).toBe(minute(8, 10) + POLICY.leaseMs);
    expect(await found((run.claimExpiresAt! + 1) as Instant)).toContain(run.id);
  });
});
