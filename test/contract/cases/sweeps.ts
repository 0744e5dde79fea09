/**
 * Contract: the sweeps find exactly the runs past their instants (strictly before `now`), purge keeps
 * active runs and the watermark, and the wake-up queries answer the earliest instant.
 */
import { describe, expect, it } from "vitest";
import type { Task } from "../../../src/domain/task.js";
import { durationMs } from "../../../src/domain/time.js";
import {
  ALL,
  HOUR,
  MINUTE,
  T0,
  at,
  buildTask,
  handlerTarget,
  minute,
  onceAt,
} from "../fixtures.js";
import {
  admitDue,
  cancelOneRun,
  claimAndLaunch,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  recordLaunch,
  remove,
  scheduledDecisions,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };
const LEASE = { leaseMs: durationMs(MINUTE), limit: 1 };

export function describeSweeps(ctx: ContractContext): void {
  describe("sweeps", () => {
    it("finds launching runs whose claim expired, with their tasks", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
      const [first] = await claimDue(store, minute(1), LEASE);
      const [second] = await claimDue(store, minute(1, 10), LEASE);
      await claimAndLaunch(store, minute(1, 20), LEASE);
      const runs = store.runs;
      expect(await runs.findExpiredClaims(minute(2), 10)).toEqual([]);
      const expired = await runs.findExpiredClaims(minute(2, 1), 10);
      expect(expired.map((c) => c.run.id)).toEqual([first!.run.id]);
      expect(expired[0]!.task).toEqual(await store.tasks.findTask(ALL, task.id));
      const both = await runs.findExpiredClaims(minute(60), 10);
      expect(both.map((c) => c.run.id)).toEqual([first!.run.id, second!.run.id]);
      expect((await runs.findExpiredClaims(minute(60), 1)).map((c) => c.run.id)).toEqual([
        first!.run.id,
      ]);
    });

    it("finds the unexpired claims of a replica silent since an instant, after the expired ones", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c", "d"]) {
        await triggerRun(store, ALL, task.id, key, minute(0, 1));
      }
      await store.replicas.heartbeat("a", minute(1));
      await store.replicas.heartbeat("b", minute(1));
      const [expired] = await claimDue(store, minute(1), { ...LEASE, replicaId: "b" });
      const [early] = await claimDue(store, minute(1, 10), { ...LEASE, replicaId: "a" });
      const [late] = await claimDue(store, minute(1, 20), { ...LEASE, replicaId: "a" });
      const [alive] = await claimDue(store, minute(1, 30), { ...LEASE, replicaId: "b" });
      await store.replicas.heartbeat("b", minute(1, 40));
      const runs = store.runs;
      const ids = async (silentSince?: number) =>
        (
          await runs.findExpiredClaims(
            minute(2, 5),
            10,
            silentSince === undefined ? undefined : at(silentSince),
          )
        ).map((c) => c.run.id);
      // Without `silentSince`, only the claim past its expiry.
      expect(await ids()).toEqual([expired!.run.id]);
      // A beat at 00:01:00 is not older than itself: not silent yet.
      expect(await ids(MINUTE)).toEqual([expired!.run.id]);
      // A is silent since 00:01:00.001: its two claims follow, by expiry; B (beat at 00:01:40) keeps its own.
      expect(await ids(MINUTE + 1)).toEqual([expired!.run.id, early!.run.id, late!.run.id]);
      const found = await runs.findExpiredClaims(minute(2, 5), 2, at(MINUTE + 1));
      expect(found.map((c) => c.run.id)).toEqual([expired!.run.id, early!.run.id]);
      expect(found[1]!.task).toEqual(await store.tasks.findTask(ALL, task.id));
      expect(alive!.run.status).toBe("launching");
      // A beats again: its claims wait for their expiry.
      await store.replicas.heartbeat("a", minute(2));
      expect(await ids(MINUTE + 1)).toEqual([expired!.run.id]);
    });

    it("finds running runs of one target kind, with their tasks, in id order after a cursor", async () => {
      const store = ctx.store();
      const agent = await insertTask(store, {
        ...IDLE,
        target: { kind: "agent", server: "lab", assistantId: "helper", input: null },
      });
      const local = await insertTask(store, { ...IDLE, target: handlerTarget("job") });
      for (const key of ["a", "b", "c"]) {
        await triggerRun(store, ALL, agent.id, key, minute(0, 1));
        await triggerRun(store, ALL, local.id, key, minute(0, 1));
      }
      const launched = await claimAndLaunch(store, minute(1), {
        limit: 10,
        handlerNames: new Set(["job"]),
      });
      expect(launched).toHaveLength(6);
      const agentRuns = launched.filter((run) => run.taskId === agent.id).map((run) => run.id);
      const [finished] = agentRuns;
      await recordCompletion(store, finished!, { status: "succeeded" }, minute(2));
      const running = agentRuns.slice(1).sort();

      const found = await store.runs.findRunningRuns("agent", null, 10);
      expect(found.map((c) => c.run.id)).toEqual(running);
      expect(found[0]!.task).toEqual(await store.tasks.findTask(ALL, agent.id));
      const first = await store.runs.findRunningRuns("agent", null, 1);
      expect(first.map((c) => c.run.id)).toEqual([running[0]]);
      const rest = await store.runs.findRunningRuns("agent", first[0]!.run.id, 10);
      expect(rest.map((c) => c.run.id)).toEqual([running[1]]);
      expect(await store.runs.findRunningRuns("webhook", null, 10)).toEqual([]);
      expect(await store.runs.findRunningRuns("handler", null, 10)).toHaveLength(3);
    });

    it("finds runs past their deadline, and only those", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c", "d"]) {
        await triggerRun(store, ALL, task.id, key, minute(0, 1));
      }
      const [early] = await claimAndLaunch(store, minute(1), { limit: 1 });
      const [late] = await claimAndLaunch(store, minute(2), { limit: 1 });
      const [done] = await claimAndLaunch(store, minute(3), { limit: 1 });
      await recordCompletion(store, done!.id, { status: "succeeded" }, minute(3, 1));
      const runs = store.runs;
      expect(await runs.findPastDeadline(minute(1, HOUR), 10)).toEqual([]);
      expect(await runs.findPastDeadline(minute(1, HOUR + 1), 10)).toEqual([early!.id]);
      expect(await runs.findPastDeadline(minute(10, HOUR), 10)).toEqual([early!.id, late!.id]);
      expect(await runs.findPastDeadline(minute(10, HOUR), 1)).toEqual([early!.id]);
    });

    it("finds queued runs older than their task's queue timeout", async () => {
      const store = ctx.store();
      const short = await insertTask(store, {
        ...IDLE,
        options: { overlap: "allow_all", queueTimeoutMs: durationMs(10 * MINUTE) },
      });
      const long = await insertTask(store, IDLE);
      await triggerRun(store, ALL, short.id, "claimed", minute(0, 1));
      await claimDue(store, minute(0, 2), { limit: 1 });
      const waiting = await triggerRun(store, ALL, short.id, "waiting", minute(0, 3));
      await triggerRun(store, ALL, long.id, "waiting", minute(0, 3));
      const runs = store.runs;
      expect(await runs.findQueueTimeouts(minute(10, 3), 10)).toEqual([]);
      expect(await runs.findQueueTimeouts(minute(10, 4), 10)).toEqual([waiting!.id]);
      expect(await runs.findQueueTimeouts(minute(10, 4), 0)).toEqual([]);
    });

    it("finds running handler runs whose replica went silent or never beat", async () => {
      const store = ctx.store();
      const handler = await insertTask(store, { ...IDLE, target: handlerTarget("report") });
      const agent = await insertTask(store, IDLE);
      const names = { handlerNames: new Set(["report"]), limit: 1 };
      for (const key of ["a", "b", "c"]) {
        await triggerRun(store, ALL, handler.id, key, minute(0, 1));
      }
      await triggerRun(store, ALL, agent.id, "agent", minute(0, 2));
      const [onA] = await claimAndLaunch(store, minute(0, 10), { ...names, replicaId: "a" });
      const [onB] = await claimAndLaunch(store, minute(0, 20), { ...names, replicaId: "b" });
      await claimDue(store, minute(0, 30), { ...names, replicaId: "a" });
      await claimAndLaunch(store, minute(0, 40), { ...names, replicaId: "b" });
      await store.replicas.heartbeat("a", minute(1));
      const lost = async (silentSince: number) =>
        [...(await store.runs.findLostHandlerRuns(at(silentSince), 10))].sort();
      expect(await lost(MINUTE)).toEqual([onB!.id]);
      expect(await lost(MINUTE + 1)).toEqual([onA!.id, onB!.id].sort());
      await store.replicas.heartbeat("a", minute(2));
      expect(await lost(MINUTE + 1)).toEqual([onB!.id]);
      expect(await store.runs.findLostHandlerRuns(minute(5), 1)).toHaveLength(1);
    });

    it("purges terminal runs finished before the cutoff and keeps active runs and the watermark", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [first] = await claimAndLaunch(store, minute(1, 1));
      await recordCompletion(store, first!.id, { status: "succeeded" }, minute(1, 2));
      const [active] = (await admitDue(store, minute(2))).queuedRuns;
      await admitDue(store, minute(3));
      expect(await store.runs.purge(minute(2), 100)).toBe(1);
      expect(await store.runs.findRun(ALL, first!.id)).toBeNull();
      expect(await store.runs.findRun(ALL, active!.id)).toEqual(active);
      await admitDue(store, minute(3));
      await admitDue(store, minute(4));
      const decisions = await scheduledDecisions(store, task.id);
      expect(decisions.map((run) => run.scheduledFor)).toEqual([minute(2), minute(3), minute(4)]);
    });

    it("purges a deleted task with its runs once none of them is active", async () => {
      const store = ctx.store();
      const deleted = await insertTask(store);
      const empty = await insertTask(store, IDLE);
      const kept = await insertTask(store, IDLE);
      await admitDue(store, minute(1));
      const [running] = await claimAndLaunch(store, minute(1, 1));
      await remove(store, deleted.id, minute(1, 10), true);
      await remove(store, empty.id, minute(1, 10));
      expect(await store.runs.purge(T0, 100)).toBe(1);
      expect(await store.runs.findRun(ALL, running!.id)).not.toBeNull();
      await recordCompletion(store, running!.id, { status: "succeeded" }, minute(1, 20));
      expect(await store.runs.purge(T0, 100)).toBe(2);
      expect(await store.runs.findRun(ALL, running!.id)).toBeNull();
      expect(await ledger(store, deleted.id)).toEqual([]);
      expect(await store.tasks.findTask(ALL, kept.id)).toEqual(kept);
    });

    // Oldest first by time: PostgreSQL walks the runs in queue order (no index names finished_at, which
    // the verdict writes: docs/storage.md#retention), so these runs finish in the order they were queued.
    it("purges at most the limit, oldest first, and the rest in the next round", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      const ids = [];
      for (const [i, key] of ["a", "b", "c"].entries()) {
        const run = await triggerRun(store, ALL, task.id, key, minute(0, 1 + i));
        await cancelOneRun(store, run!.id, minute(0, 10 * (1 + i)));
        ids.push(run!.id);
      }
      const late = await triggerRun(store, ALL, task.id, "d", minute(0, 40));
      await cancelOneRun(store, late!.id, minute(2));
      expect(await store.runs.purge(minute(1), 2)).toBe(2);
      expect((await ledger(store, task.id)).map((run) => run.id).sort()).toEqual(
        [ids[2]!, late!.id].sort(),
      );
      expect(await store.runs.purge(minute(1), 2)).toBe(1);
      expect((await ledger(store, task.id)).map((run) => run.id)).toEqual([late!.id]);
    });

    it("tells when the next enabled task is due", async () => {
      const store = ctx.store();
      expect(await store.tasks.nextDueAt()).toBeNull();
      const early: Task[] = [
        { ...buildTask({ createdAt: minute(-5) }), status: "paused" },
        { ...buildTask({ createdAt: minute(-5) }), deletedAt: T0 },
      ];
      for (const task of early) await store.tasks.insertTask(task);
      expect(await store.tasks.nextDueAt()).toBeNull();
      await insertTask(store, { createdAt: minute(5) });
      expect(await store.tasks.nextDueAt()).toBe(minute(6));
      await insertTask(store);
      expect(await store.tasks.nextDueAt()).toBe(minute(1));
    });

    it("tells when a queued, launching or running run next needs attention", async () => {
      const store = ctx.store();
      expect(await store.runs.nextRunWakeAt()).toBeNull();
      const task = await insertTask(store, IDLE);
      await triggerRun(store, ALL, task.id, "a", minute(0, 1));
      expect(await store.runs.nextRunWakeAt()).toBe(minute(0, 1));
      const [claimed] = await claimDue(store, minute(1), LEASE);
      expect(await store.runs.nextRunWakeAt()).toBe(minute(2));
      await recordLaunch(store, claimed!, minute(1, 1));
      expect(await store.runs.nextRunWakeAt()).toBe(minute(1, 1 + HOUR));
      await triggerRun(store, ALL, task.id, "b", minute(5));
      expect(await store.runs.nextRunWakeAt()).toBe(minute(5));
    });

    it("counts the fleet's queue: queued runs, the oldest one ready, and the slots in use", async () => {
      const store = ctx.store();
      expect(await store.runs.queueStats(minute(1))).toEqual({
        queued: 0,
        oldestReadyAt: null,
        active: 0,
      });
      const task = await insertTask(store, IDLE);
      for (const [key, when] of [
        ["a", minute(0, 1)],
        ["b", minute(0, 30)],
        ["c", minute(0, 40)],
        ["later", minute(9)],
      ] as const) {
        await triggerRun(store, ALL, task.id, key, when);
      }
      // Nothing ready before the first not_before; the one not yet due counts as queued, never as ready.
      expect(await store.runs.queueStats(minute(0))).toEqual({
        queued: 4,
        oldestReadyAt: null,
        active: 0,
      });
      const [first] = await claimDue(store, minute(1), LEASE);
      expect(first).toBeDefined();
      expect(await store.runs.queueStats(minute(1))).toEqual({
        queued: 3,
        oldestReadyAt: minute(0, 30),
        active: 1,
      });
      await recordLaunch(store, first!, minute(1, 1));
      await recordCompletion(store, first!.run.id, { status: "succeeded" }, minute(1, 2));
      expect(await store.runs.queueStats(minute(1, 2))).toMatchObject({ queued: 3, active: 0 });
    });
  });
}
