/**
 * Contract: `mutateTask` runs an owner command under the task's lock: version compare-and-set, scoping,
 * new runs with repeatable keys answered by null, rewritten active runs, all or nothing.
 */
import { describe, expect, it, vi } from "vitest";
import type { LockedTask } from "../../../src/domain/ports/task-repository.js";
import { idempotencyKeyFor } from "../../../src/domain/occurrence.js";
import { triggerTask } from "../../../src/domain/task-commands.js";
import { ALICE_SCOPE, ALL, BOB_SCOPE, minute, nextTaskId, T0 } from "../fixtures.js";
import {
  admitDue,
  backfillRuns,
  cancelOneRun,
  claimAndLaunch,
  edit,
  insertTask,
  ledger,
  pause,
  reload,
  remove,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

export function describeTaskMutation(ctx: ContractContext): void {
  describe("mutateTask", () => {
    it("hands decide the task and only its queued, launching and running runs", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const running = await triggerRun(store, ALL, task.id, "k1", minute(0, 1));
      const queued = await triggerRun(store, ALL, task.id, "k2", minute(0, 2));
      const cancelled = await triggerRun(store, ALL, task.id, "k3", minute(0, 3));
      await claimAndLaunch(store, minute(0, 4), { limit: 1 });
      await cancelOneRun(store, cancelled!.id, minute(0, 5));
      const locked = await store.tasks.mutateTask(ALICE_SCOPE, task.id, (l) => ({
        result: () => l,
      }));
      expect(locked.task).toEqual(await reload(store, task.id));
      expect(locked.activeRuns.map((run) => run.id).sort()).toEqual(
        [running!.id, queued!.id].sort(),
      );
      expect(locked.activeRuns.find((run) => run.id === running!.id)?.status).toBe("running");
    });

    it("writes the task the command returns", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await edit(store, ALICE_SCOPE, task.id, { title: "Renamed" }, minute(0, 10), 1);
      const stored = await reload(store, task.id);
      expect(stored.title).toBe("Renamed");
      expect(stored.version).toBe(2);
      expect(stored.updatedAt).toBe(minute(0, 10));
    });

    it("refuses a stale version and writes nothing", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await edit(store, ALICE_SCOPE, task.id, { title: "First edit" }, minute(0, 10), 1);
      const now = minute(0, 20);
      await expect(
        store.tasks.mutateTask(ALICE_SCOPE, task.id, ({ task: current, activeRuns }) => ({
          task: { ...current, title: "Stale edit" },
          expectedVersion: 1,
          newRuns: [triggerTask(current, activeRuns, { now, clientKey: "stale" })],
          result: () => null,
        })),
      ).rejects.toMatchObject({ code: "version_conflict", expected: 1, actual: 2 });
      const stored = await reload(store, task.id);
      expect(stored.title).toBe("First edit");
      expect(stored.version).toBe(2);
      expect(await ledger(store, task.id)).toEqual([]);
    });

    it("reports a task that does not exist as not found", async () => {
      const missing = nextTaskId();
      await expect(
        ctx.store().tasks.mutateTask(ALL, missing, () => ({ result: () => null })),
      ).rejects.toMatchObject({ code: "not_found", resource: "task", id: missing });
    });

    it("reports another owner's task as not found without calling decide", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const decide = vi.fn((locked: LockedTask) => ({
        task: { ...locked.task, title: "Hijacked" },
        result: () => null,
      }));
      await expect(store.tasks.mutateTask(BOB_SCOPE, task.id, decide)).rejects.toMatchObject({
        code: "not_found",
      });
      expect(decide).not.toHaveBeenCalled();
      expect(await reload(store, task.id)).toEqual(task);
    });

    it("reports a deleted task as not found", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await remove(store, task.id, minute(0, 10));
      await expect(
        store.tasks.mutateTask(ALL, task.id, () => ({ result: () => null })),
      ).rejects.toMatchObject({ code: "not_found" });
    });

    it("inserts new runs in order, each with a time-ordered id and its own fresh thread", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const now = minute(5);
      const inserted = await backfillRuns(store, ALL, task.id, { from: T0, to: minute(3) }, now);
      expect(inserted.map((run) => run?.scheduledFor)).toEqual([T0, minute(1), minute(2)]);
      const ids = inserted.map((run) => run!.id);
      expect([...ids].sort()).toEqual(ids);
      for (const run of inserted) {
        expect(run).toMatchObject({ trigger: "backfill", status: "queued", queuedAt: now });
        expect(run!.threadId).toBe(run!.id);
        expect(await store.runs.findRun(ALL, run!.id)).toEqual(run);
      }
    });

    it("answers a repeated backfill with null and inserts only the new occurrences", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const now = minute(10);
      await backfillRuns(store, ALL, task.id, { from: T0, to: minute(3) }, now);
      const again = await backfillRuns(store, ALL, task.id, { from: T0, to: minute(3) }, now);
      expect(again).toEqual([null, null, null]);
      const overlapping = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: minute(1), to: minute(5) },
        now,
      );
      expect(overlapping.map((run) => run?.scheduledFor ?? null)).toEqual([
        null,
        null,
        minute(3),
        minute(4),
      ]);
      const backfills = (await ledger(store, task.id)).filter((run) => run.trigger === "backfill");
      expect(backfills.map((run) => run.scheduledFor).sort()).toEqual(
        [T0, minute(1), minute(2), minute(3), minute(4)].sort(),
      );
    });

    it("answers a repeated manual key with null and keeps the first run", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const first = await triggerRun(store, ALICE_SCOPE, task.id, "request-1", minute(0, 1));
      const second = await triggerRun(store, ALICE_SCOPE, task.id, "request-1", minute(0, 2));
      expect(first).not.toBeNull();
      expect(second).toBeNull();
      const key = idempotencyKeyFor(task.id, "manual", "request-1");
      expect(await store.runs.findManualRun(task.id, key)).toEqual(first);
      expect(await ledger(store, task.id)).toEqual([first]);
      expect((await reload(store, task.id)).version).toBe(task.version);
    });

    it("rewrites the active runs the command returns", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const [queued] = (await admitDue(store, minute(1))).queuedRuns;
      await pause(store, task.id, minute(1, 10));
      expect(await store.runs.findRun(ALL, queued!.id)).toMatchObject({
        status: "cancelled",
        reason: "task_paused",
        finishedAt: minute(1, 10),
      });
      expect((await reload(store, task.id)).status).toBe("paused");
    });

    it("writes nothing when decide refuses the command", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const before = await reload(store, task.id);
      const runsBefore = await ledger(store, task.id);
      await expect(
        triggerRun(store, ALICE_SCOPE, task.id, "while-active", minute(1, 10)),
      ).rejects.toMatchObject({ code: "run_active" });
      expect(await reload(store, task.id)).toEqual(before);
      expect(await ledger(store, task.id)).toEqual(runsBefore);
    });

    it("writes nothing when a run it inserts would decide an occurrence twice", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const [decided] = (await admitDue(store, minute(1))).queuedRuns;
      const before = await reload(store, task.id);
      await expect(
        store.tasks.mutateTask(ALL, task.id, ({ task: current }) => ({
          task: { ...current, title: "Must not stick" },
          // The same scheduled occurrence again (the store mints a new id for it).
          newRuns: [{ ...decided!, threadId: null }],
          result: () => null,
        })),
      ).rejects.toThrow();
      expect(await reload(store, task.id)).toEqual(before);
      expect(await ledger(store, task.id)).toEqual([decided]);
    });
  });
}
