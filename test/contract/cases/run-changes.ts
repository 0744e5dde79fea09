/**
 * Contract: `changeRun` is fenced by the claim token, writes launch bookkeeping and completion verdicts to
 * disjoint task fields (never the version), and lets a late verdict land on a soft-deleted task's run.
 */
import { describe, expect, it, vi } from "vitest";
import { fencingToken, runId } from "../../../src/domain/ids.js";
import { completeRun } from "../../../src/domain/run-transitions.js";
import type { Task } from "../../../src/domain/task.js";
import { ALL, minute, onceAt } from "../fixtures.js";
import {
  admitDue,
  claimAndLaunch,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
  reload,
  reloadRun,
  remove,
  runTaskContext,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

export function describeRunChanges(ctx: ContractContext): void {
  describe("changeRun", () => {
    it("refuses a write with a superseded fencing token and writes nothing", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerRun(store, ALL, task.id, "k", minute(0, 1));
      const [first] = await claimDue(store, minute(1));
      await recordLaunch(store, first!, minute(1), { kind: "busy", message: "thread busy" });
      const [second] = await claimDue(store, minute(1, 5000));
      expect(second!.run.claimToken).not.toBe(first!.run.claimToken);
      await expect(recordLaunch(store, first!, minute(1, 6000))).rejects.toMatchObject({
        code: "lease_lost",
      });
      expect(await reloadRun(store, first!.run.id)).toEqual(second!.run);
      expect((await reload(store, task.id)).runCount).toBe(0);
    });

    it("refuses a fenced write once the claim is released, or before any claim", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      const queued = await triggerRun(store, ALL, task.id, "queued", minute(0, 1));
      await triggerRun(store, ALL, task.id, "claimed", minute(0, 2));
      const decide = vi.fn(() => null);
      await expect(
        store.runs.changeRun(queued!.id, { token: fencingToken("never-issued") }, decide),
      ).rejects.toMatchObject({ code: "lease_lost" });
      expect(decide).not.toHaveBeenCalled();
      const [claimed] = await claimDue(store, minute(1), { limit: 1 });
      const change = await recordLaunch(store, claimed!, minute(1, 1));
      await expect(recordLaunch(store, claimed!, minute(1, 2))).rejects.toMatchObject({
        code: "lease_lost",
      });
      expect(await reloadRun(store, claimed!.run.id)).toEqual(change!.run);
      expect((await reload(store, task.id)).runCount).toBe(1);
    });

    it("records launch bookkeeping without bumping the version", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const before = await reload(store, task.id);
      const [claimed] = await claimDue(store, minute(1, 1000));
      const change = await recordLaunch(store, claimed!, minute(1, 2000));
      expect(change!.run).toMatchObject({
        status: "running",
        claimToken: null,
        launchedAt: minute(1, 2000),
        deadlineAt: minute(1, 2000) + task.options.runTimeoutMs,
        latenessMs: 2000,
      });
      expect(change!.taskLaunch).toEqual({
        lastRunAt: minute(1, 2000),
        lastRunId: claimed!.run.id,
        runCountIncrement: 1,
      });
      const after = await reload(store, task.id);
      expect(after).toMatchObject({
        runCount: 1,
        lastRunAt: minute(1, 2000),
        lastRunId: claimed!.run.id,
      });
      expect({
        ...after,
        runCount: before.runCount,
        lastRunAt: before.lastRunAt,
        lastRunId: before.lastRunId,
      }).toEqual(before);
    });

    it("counts every launch on top of the stored count, concurrent ones included", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
      const claimed = await claimDue(store, minute(1));
      await Promise.all(claimed.map((c, i) => recordLaunch(store, c, minute(1, i))));
      expect((await reload(store, task.id)).runCount).toBe(3);
    });

    it("writes a once task's verdict to last_error and status only", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { schedule: onceAt(minute(1)) });
      await admitDue(store, minute(1));
      const [launched] = await claimAndLaunch(store, minute(1, 1));
      const before = await reload(store, task.id);
      const change = await recordCompletion(
        store,
        launched!.id,
        { status: "succeeded", result: { rows: 3 } },
        minute(1, 2),
      );
      expect(change!.taskVerdict).toEqual({ lastError: null, status: "completed" });
      const after = await reload(store, task.id);
      expect(after).toMatchObject({ status: "completed", lastError: null });
      expect({ ...after, status: before.status, lastError: before.lastError }).toEqual(before);
      expect(await reloadRun(store, launched!.id)).toMatchObject({
        status: "succeeded",
        result: { rows: 3 },
        finishedAt: minute(1, 2),
      });
    });

    it("records a recurring task's failure in last_error and keeps it enabled", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [launched] = await claimAndLaunch(store, minute(1, 1));
      const before = await reload(store, task.id);
      await recordCompletion(
        store,
        launched!.id,
        { status: "failed", error: "boom" },
        minute(1, 2),
      );
      const after = await reload(store, task.id);
      expect(after).toEqual({ ...before, lastError: "boom" });
      expect(after.status).toBe("enabled");
    });

    it("keeps a cron task's newer fields when a launch lands between a completion's read and its write", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      await admitDue(store, minute(1));
      const [first] = await claimAndLaunch(store, minute(1, 1));
      // The completion reads the task here ...
      const stale = await reload(store, task.id);
      // ... then admission and another launch land ...
      await admitDue(store, minute(2));
      const [second] = await claimAndLaunch(store, minute(2, 1));
      // ... and the completion writes its verdict, decided from what it read.
      await store.runs.changeRun(first!.id, {}, (run) =>
        completeRun(
          run,
          { status: "failed", error: "boom" },
          { now: minute(2, 2), task: runTaskContext(stale) },
        ),
      );
      expect(await reload(store, task.id)).toMatchObject({
        status: "enabled",
        lastError: "boom",
        runCount: 2,
        lastRunId: second!.id,
        lastRunAt: minute(2, 1),
        nextRunAt: minute(3),
        decidedThrough: minute(2),
        admittedCount: 2,
        version: task.version,
      });
      const next = await admitDue(store, minute(3));
      expect(next.tasks).toBe(1);
      expect(next.queuedRuns.map((run) => run.scheduledFor)).toEqual([minute(3)]);
    });

    it("lands a late verdict on a run of a soft-deleted task", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [launched] = await claimAndLaunch(store, minute(1, 1));
      await remove(store, task.id, minute(1, 10), true);
      expect(await store.tasks.findTask(ALL, task.id)).toBeNull();
      let seen: Task | undefined;
      const change = await store.runs.changeRun(launched!.id, {}, (run, current) => {
        seen = current;
        return completeRun(
          run,
          { status: "succeeded", result: "late" },
          { now: minute(1, 20), task: runTaskContext(current) },
        );
      });
      expect(seen).toMatchObject({ id: task.id, deletedAt: minute(1, 10) });
      expect(change!.run).toMatchObject({ status: "succeeded", result: "late" });
      expect(await reloadRun(store, launched!.id)).toEqual(change!.run);
      expect(await store.tasks.findTask(ALL, task.id)).toBeNull();
    });

    // SPEC 1.7: a launch is never misreported. A fast target's verdict may land before the record of its
    // launch (docs/decisions.md): whatever the verdict says, the launch it proves is booked exactly once.
    it.each(["succeeded", "failed", "cancelled"] as const)(
      "books the late launch record of a run whose %s verdict overtook it",
      async (status) => {
        const store = ctx.store();
        const task = await insertTask(store, IDLE);
        await triggerRun(store, ALL, task.id, "fast", minute(0, 1));
        const [claimed] = await claimDue(store, minute(1));
        const verdict = await recordCompletion(
          store,
          claimed!.run.id,
          { status, result: { fast: true } },
          minute(1, 100),
        );
        expect(verdict!.run).toMatchObject({ status, claimToken: claimed!.run.claimToken });
        const change = await recordLaunch(store, claimed!, minute(1, 200));
        expect(change!.run).toMatchObject({
          status,
          result: { fast: true },
          claimToken: null,
          claimExpiresAt: null,
          launchedAt: minute(1, 100),
        });
        expect(await reloadRun(store, claimed!.run.id)).toEqual(change!.run);
        expect(await reload(store, task.id)).toMatchObject({
          runCount: 1,
          lastRunAt: minute(1, 100),
          lastRunId: claimed!.run.id,
        });
      },
    );

    it("books the launch a retried failure proves once, though its launch record comes after the retry", async () => {
      const store = ctx.store();
      const task = await insertTask(store, {
        ...IDLE,
        options: { ...IDLE.options, retry: { maxAttempts: 2 } },
      });
      await triggerRun(store, ALL, task.id, "fast", minute(0, 1));
      const [claimed] = await claimDue(store, minute(1));
      const verdict = await recordCompletion(
        store,
        claimed!.run.id,
        { status: "failed", error: "boom" },
        minute(1, 100),
      );
      expect(verdict!.run).toMatchObject({ status: "queued", failures: 1, claimToken: null });
      // The retry is not held back by the record: the verdict booked the launch, the record finds its
      // claim released and writes nothing.
      await expect(recordLaunch(store, claimed!, minute(1, 200))).rejects.toMatchObject({
        code: "lease_lost",
      });
      expect(await reloadRun(store, claimed!.run.id)).toEqual(verdict!.run);
      expect(await reload(store, task.id)).toMatchObject({
        runCount: 1,
        lastRunAt: minute(1, 100),
        lastRunId: claimed!.run.id,
      });
    });

    it("hands decide the run and its task as stored, and writes nothing when it returns null", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const [queued] = (await admitDue(store, minute(1))).queuedRuns;
      const decide = vi.fn(() => null);
      expect(await store.runs.changeRun(queued!.id, {}, decide)).toBeNull();
      expect(decide).toHaveBeenCalledWith(queued, await reload(store, task.id));
      expect(await reloadRun(store, queued!.id)).toEqual(queued);
    });

    it("reports a run that does not exist as not found", async () => {
      const decide = vi.fn(() => null);
      await expect(
        ctx.store().runs.changeRun(runId("no-such-run"), {}, decide),
      ).rejects.toMatchObject({ code: "not_found", resource: "run", id: "no-such-run" });
      expect(decide).not.toHaveBeenCalled();
    });
  });
}
