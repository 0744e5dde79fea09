/**
 * Contract: `claimRuns` serialises the global budget across every trigger, offers `select` the queued runs
 * in FIFO order with the busy threads and tasks, and claims with a fresh fencing token and a lease.
 */
import { describe, expect, it } from "vitest";
import type { ClaimSelectionInput } from "../../../src/domain/claim.js";
import { threadKey } from "../../../src/domain/claim.js";
import type { TaskId } from "../../../src/domain/ids.js";
import { claimRun } from "../../../src/domain/run-transitions.js";
import type { Run } from "../../../src/domain/run.js";
import type { Store } from "../../../src/domain/ports/store.js";
import { durationMs } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";
import {
  ALICE,
  ALL,
  BOB,
  HOUR,
  T0,
  agentTarget,
  at,
  cron,
  handlerTarget,
  minute,
  onceAt,
  reuseThread,
  webhookTarget,
} from "../fixtures.js";
import {
  REPLICA,
  admitDue,
  backfillRuns,
  claimAndLaunch,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  recordLaunch,
  reload,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

/** A task that admission leaves alone (its one occurrence is far ahead) and that takes any trigger. */
const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

async function triggerMany(store: Store, id: TaskId, count: number, from: Instant): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < count; i++) {
    runs.push((await triggerRun(store, ALL, id, `key-${i}`, at(from - T0 + i)))!);
  }
  return runs;
}

async function slotsHeld(store: Store, ids: readonly TaskId[]): Promise<number> {
  let held = 0;
  for (const id of ids) {
    const runs = await ledger(store, id);
    held += runs.filter((run) => run.status === "launching" || run.status === "running").length;
  }
  return held;
}

export function describeClaims(ctx: ContractContext): void {
  describe("claimRuns", () => {
    it("claims a due queued run with a fresh fencing token and a lease", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const now = minute(1, 5000);
      const [claimed, ...rest] = await claimDue(store, now, { leaseMs: durationMs(30_000) });
      expect(rest).toEqual([]);
      expect(claimed!.run).toMatchObject({
        status: "launching",
        attempt: 1,
        claimExpiresAt: now + 30_000,
        claimedBy: REPLICA,
      });
      expect(typeof claimed!.run.claimToken).toBe("string");
      expect(claimed!.run.claimToken).not.toBe("");
      expect(claimed!.task).toEqual(await reload(store, task.id));
      expect(await store.runs.findRun(ALL, claimed!.run.id)).toEqual(claimed!.run);
    });

    it("gives every claim its own fencing token", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerMany(store, task.id, 3, minute(0, 1));
      const claimed = await claimDue(store, minute(1));
      const tokens = claimed.map((c) => c.run.claimToken);
      expect(new Set(tokens).size).toBe(3);
      await recordLaunch(store, claimed[0]!, minute(1), { kind: "busy", message: "busy" });
      const [again] = await claimDue(store, minute(1, 5000));
      expect(again!.run.id).toBe(claimed[0]!.run.id);
      expect(again!.run.attempt).toBe(2);
      expect(tokens).not.toContain(again!.run.claimToken);
    });

    it("keeps the global budget across manual, scheduled and backfill runs", async () => {
      const store = ctx.store();
      const scheduled = await insertTask(store);
      const manual = await insertTask(store, IDLE);
      const backfilled = await insertTask(store, {
        schedule: cron("0 * * * *"),
        options: { overlap: "allow_all" },
      });
      const tasks = [scheduled.id, manual.id, backfilled.id];
      await admitDue(store, minute(1));
      const [firstManual] = await triggerMany(store, manual.id, 1, minute(1, 1));
      await backfillRuns(store, ALL, backfilled.id, { from: at(-3 * HOUR), to: T0 }, minute(1, 2));
      await triggerRun(store, ALL, manual.id, "late", minute(1, 3));
      const budget = { maxConcurrentRuns: 3 };
      const launched = await claimAndLaunch(store, minute(1, 10), budget);
      expect(launched.map((run) => run.trigger)).toEqual(["scheduled", "manual", "backfill"]);
      expect(await claimDue(store, minute(1, 20), budget)).toEqual([]);
      expect(await slotsHeld(store, tasks)).toBe(3);
      await recordCompletion(store, firstManual!.id, { status: "succeeded" }, minute(1, 30));
      const next = await claimDue(store, minute(1, 40), budget);
      expect(next.map((c) => c.run.trigger)).toEqual(["backfill"]);
      expect(await slotsHeld(store, tasks)).toBe(3);
    });

    it("never claims beyond the budget, whatever select returns", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerMany(store, task.id, 4, minute(0, 1));
      const now = minute(1);
      const claimed = await store.runs.claimRuns(
        {
          now,
          replicaId: REPLICA,
          leaseMs: durationMs(60_000),
          maxConcurrentRuns: 2,
          limit: 10,
          handlerNames: new Set(),
        },
        (input) => input.candidates,
        (run, current, token) =>
          claimRun(
            run,
            { now, token, leaseMs: durationMs(60_000), replicaId: REPLICA },
            current.options,
          ),
      );
      expect(claimed).toHaveLength(2);
      expect(await slotsHeld(store, [task.id])).toBe(2);
    });

    it("never exceeds the budget under concurrent claimers", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerMany(store, task.id, 8, minute(0, 1));
      const claims = await Promise.all(
        ["a", "b", "c", "d"].map((replica) =>
          claimDue(store, minute(1), { maxConcurrentRuns: 3, limit: 3, replicaId: replica }),
        ),
      );
      expect(claims.flat()).toHaveLength(3);
      expect(await slotsHeld(store, [task.id])).toBe(3);
    });

    it("claims nothing when the budget is spent", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerMany(store, task.id, 2, minute(0, 1));
      expect(await claimAndLaunch(store, minute(1), { maxConcurrentRuns: 1 })).toHaveLength(1);
      expect(await claimDue(store, minute(2), { maxConcurrentRuns: 1 })).toEqual([]);
    });

    it("hands select the queued runs in FIFO order with the busy threads and tasks", async () => {
      const store = ctx.store();
      const exclusive = await insertTask(store, {
        schedule: onceAt(minute(600)),
        options: { overlap: "buffer_all" },
        context: reuseThread("t-x"),
      });
      const handler = await insertTask(store, { ...IDLE, target: handlerTarget("report") });
      await triggerRun(store, ALL, exclusive.id, "x1", minute(0, 1));
      await claimAndLaunch(store, minute(0, 2));
      const [y1, y2] = await triggerMany(store, handler.id, 2, minute(0, 3));
      const x2 = await triggerRun(store, ALL, exclusive.id, "x2", minute(0, 5));
      let seen: Omit<ClaimSelectionInput, "now" | "handlerNames"> | undefined;
      await store.runs.claimRuns(
        {
          now: minute(1),
          replicaId: REPLICA,
          leaseMs: durationMs(60_000),
          maxConcurrentRuns: 16,
          limit: 10,
          handlerNames: new Set(),
        },
        (input) => {
          seen = input;
          return [];
        },
        (run) => run,
      );
      expect(seen!.candidates.map((c) => c.id)).toEqual([y1!.id, y2!.id, x2!.id]);
      expect(seen!.candidates[0]).toEqual({
        id: y1!.id,
        taskId: handler.id,
        owner: handler.owner,
        threadScope: `handler:${handler.owner}`,
        threadId: y1!.threadId,
        exclusive: false,
        notBefore: y1!.notBefore,
        queuedAt: y1!.queuedAt,
        handlerName: "report",
      });
      expect(seen!.candidates[2]).toMatchObject({ exclusive: true, handlerName: null });
      expect([...seen!.busyThreads]).toEqual([threadKey("agent:main", "t-x")]);
      expect([...seen!.busyTasks]).toEqual([exclusive.id]);
      expect(seen!.budget).toBe(10);
      expect(await slotsHeld(store, [handler.id])).toBe(0);
    });

    it("keeps a run sent back as busy at the head of its thread until its not_before", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { ...IDLE, context: reuseThread("t-1") });
      const [first, second] = await triggerMany(store, task.id, 2, minute(0, 1));
      const [claimed, ...others] = await claimDue(store, minute(1));
      expect(others).toEqual([]);
      expect(claimed!.run.id).toBe(first!.id);
      await recordLaunch(store, claimed!, minute(1), { kind: "busy", message: "thread busy" });
      expect(await claimDue(store, minute(1, 1000))).toEqual([]);
      expect(await claimDue(store, minute(1, 4999))).toEqual([]);
      const [again] = await claimDue(store, minute(1, 5000));
      expect(again!.run).toMatchObject({ id: first!.id, attempt: 2 });
      expect((await store.runs.findRun(ALL, second!.id))?.status).toBe("queued");
    });

    it("serves each thread in FIFO order, across tasks", async () => {
      const store = ctx.store();
      const onThread = { ...IDLE, target: agentTarget("main"), context: reuseThread("shared") };
      const a = await insertTask(store, onThread);
      const b = await insertTask(store, onThread);
      const a1 = await triggerRun(store, ALL, a.id, "a1", minute(0, 1));
      const b1 = await triggerRun(store, ALL, b.id, "b1", minute(0, 2));
      const a2 = await triggerRun(store, ALL, a.id, "a2", minute(0, 3));
      const order: string[] = [];
      for (let step = 0; step < 3; step++) {
        const launched = await claimAndLaunch(store, minute(1, step * 10));
        expect(launched).toHaveLength(1);
        order.push(launched[0]!.id);
        await recordCompletion(
          store,
          launched[0]!.id,
          { status: "succeeded" },
          minute(1, step * 10 + 5),
        );
      }
      expect(order).toEqual([a1!.id, b1!.id, a2!.id]);
    });

    it("gives two owners naming one webhook or handler label a thread each", async () => {
      // docs/semantics.md#threads: Bob naming Alice's label gets a thread of his own, never holds hers.
      const store = ctx.store();
      for (const target of [handlerTarget("report"), webhookTarget()]) {
        const nightly = { ...IDLE, target, context: reuseThread("nightly") };
        const alice = await insertTask(store, { ...nightly, owner: ALICE });
        const bob = await insertTask(store, { ...nightly, owner: BOB });
        const mine = await triggerRun(store, ALL, alice.id, `a-${target.kind}`, minute(0, 1));
        const his = await triggerRun(store, ALL, bob.id, `b-${target.kind}`, minute(0, 2));
        expect(mine!.threadScope).toBe(`${target.kind}:${ALICE}`);
        expect(his!.threadScope).toBe(`${target.kind}:${BOB}`);
        expect(his!.threadId).toBe(mine!.threadId);
        // Bob's run is held by nothing of Alice's: both launch at once, one per thread.
        const claimed = await claimDue(store, minute(1), { handlerNames: new Set(["report"]) });
        expect(claimed.map((c) => c.run.id).sort()).toEqual([mine!.id, his!.id].sort());
        for (const c of claimed) {
          await recordCompletion(store, c.run.id, { status: "succeeded" }, minute(1, 1));
        }
      }
    });

    it("keeps FIFO on a shared thread named like a run's own thread", async () => {
      // A run on a fresh thread is on the thread named by its own id; another owner's task may bind that
      // name on the same agent server (agent threads are the server's, shared across owners). Here that
      // run is beyond its owner's widest claim window (more than 1,000 runs this replica cannot launch
      // are queued before it), so only the store's probe of the thread can hold the run behind it.
      const store = ctx.store();
      const report = { ...IDLE, owner: BOB, target: handlerTarget("report") };
      const many = await insertTask(store, { ...report, schedule: cron("* * * * *") });
      const ahead = [
        ...(await backfillRuns(
          store,
          ALL,
          many.id,
          { from: minute(-1100), to: minute(-600) },
          minute(0, 1),
        )),
        ...(await backfillRuns(store, ALL, many.id, { from: minute(-599), to: T0 }, minute(0, 1))),
      ];
      expect(ahead.length).toBeGreaterThan(1000);
      const fresh = await insertTask(store, { ...report, target: agentTarget("main") });
      const [own] = await triggerMany(store, fresh.id, 1, minute(0, 2));
      const bound = await insertTask(store, {
        ...IDLE,
        owner: ALICE,
        target: agentTarget("main"),
        context: reuseThread(own!.threadId),
      });
      const [behind] = await triggerMany(store, bound.id, 1, minute(0, 3));
      expect(behind!.threadId).toBe(own!.threadId);
      expect(
        await claimDue(store, minute(1), { limit: 1, handlerNames: new Set(["other"]) }),
      ).toEqual([]);
    });

    it("claims one run at a time of an exclusive buffer_all task", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "buffer_all" } });
      const runs = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: minute(-3), to: T0 },
        minute(0, 1),
      );
      const [first] = await claimAndLaunch(store, minute(0, 2));
      expect(first!.id).toBe(runs[0]!.id);
      expect(await claimDue(store, minute(0, 3))).toEqual([]);
      await recordCompletion(store, first!.id, { status: "succeeded" }, minute(0, 4));
      const [second, ...rest] = await claimDue(store, minute(0, 5));
      expect(rest).toEqual([]);
      expect(second!.run.id).toBe(runs[1]!.id);
    });

    it("holds a cancel_other successor until the superseded run ends", async () => {
      const store = ctx.store();
      await insertTask(store, { options: { overlap: "cancel_other" } });
      await admitDue(store, minute(1));
      const [old] = await claimAndLaunch(store, minute(1, 1));
      const report = await admitDue(store, minute(2));
      expect(report.cancellations[0]).toMatchObject({ id: old!.id, status: "running" });
      expect(report.cancellations[0]!.cancelRequestedAt).toBe(minute(2));
      expect(await claimDue(store, minute(2, 1))).toEqual([]);
      await recordCompletion(store, old!.id, { status: "cancelled" }, minute(2, 2));
      const [successor] = await claimDue(store, minute(2, 3));
      expect(successor!.run.id).toBe(report.queuedRuns[0]!.id);
    });

    it("looks past a queue head it cannot claim, up to the limit", async () => {
      const store = ctx.store();
      const busy = await insertTask(store, { ...IDLE, context: reuseThread("busy") });
      const free = await insertTask(store, IDLE);
      await triggerRun(store, ALL, busy.id, "running", minute(0, 1));
      expect(await claimAndLaunch(store, minute(0, 2))).toHaveLength(1);
      // More runs waiting on the busy thread than one claim may take, then runs it can claim.
      await triggerMany(store, busy.id, 5, minute(0, 3));
      const claimable = await triggerMany(store, free.id, 3, minute(0, 10));
      const claimed = await claimDue(store, minute(1), { limit: 2 });
      expect(claimed.map((c) => c.run.id)).toEqual(claimable.slice(0, 2).map((r) => r.id));
      expect((await claimDue(store, minute(1), { limit: 2 })).map((c) => c.run.id)).toEqual([
        claimable[2]!.id,
      ]);
    });

    it("leaves handler runs to replicas that have the handler", async () => {
      const store = ctx.store();
      const handler = await insertTask(store, { ...IDLE, target: handlerTarget("report") });
      const agent = await insertTask(store, IDLE);
      const [handlerRun] = await triggerMany(store, handler.id, 1, minute(0, 1));
      const [agentRun] = await triggerMany(store, agent.id, 1, minute(0, 2));
      const without = await claimDue(store, minute(1), { handlerNames: new Set(["other"]) });
      expect(without.map((c) => c.run.id)).toEqual([agentRun!.id]);
      const withIt = await claimDue(store, minute(1), { handlerNames: new Set(["report"]) });
      expect(withIt.map((c) => c.run.id)).toEqual([handlerRun!.id]);
    });
  });
}
