/**
 * Contract: a single run change (`changeRuns`, a batch of one, as the application changes one run) is
 * fenced by the claim token, writes launch bookkeeping and completion verdicts to disjoint task fields
 * (never the version), and lets a late verdict land on a soft-deleted task's run; `withTask` hands back
 * the run's whole task. Batches of several: run-batches.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { fencingToken, runId } from "../../../src/domain/ids.js";
import type { RunChangeResult } from "../../../src/domain/ports/run-repository.js";
import type { Run } from "../../../src/domain/run.js";
import type { RunTaskContext } from "../../../src/domain/run-change.js";
import type { WebhookTarget } from "../../../src/domain/target.js";
import { completeRun, requestRunCancel } from "../../../src/domain/run-transitions.js";
import { ALL, minute, onceAt, webhookTarget } from "../fixtures.js";
import {
  admitDue,
  changeOne,
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
  describe("changeRuns, one run", () => {
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
      const [refused] = await store.runs.changeRuns([
        { id: queued!.id, token: fencingToken("never-issued"), decide },
      ]);
      expect(refused).toMatchObject({ kind: "refused", error: { code: "lease_lost" } });
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
      await changeOne(store, {
        id: first!.id,
        decide: (run) =>
          completeRun(
            run,
            { status: "failed", error: "boom" },
            { now: minute(2, 2), task: runTaskContext(stale) },
          ),
      });
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
      let seen: RunTaskContext | undefined;
      const [result] = await store.runs.changeRuns([
        {
          id: launched!.id,
          withTask: true,
          decide: (run, current) => {
            seen = current;
            return completeRun(
              run,
              { status: "succeeded", result: "late" },
              { now: minute(1, 20), task: current },
            );
          },
        },
      ]);
      expect(result!.kind).toBe("changed");
      const { change, task: found } = result as RunChangeResult & { kind: "changed" };
      expect(found).toMatchObject({ id: task.id, deletedAt: minute(1, 10) });
      expect(seen).toEqual(runTaskContext(found!));
      expect(change.run).toMatchObject({ status: "succeeded", result: "late" });
      expect(await reloadRun(store, launched!.id)).toEqual(change.run);
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
      const stored = runTaskContext(await reload(store, task.id));
      const decide = vi.fn(() => null);
      expect(await store.runs.changeRuns([{ id: queued!.id, decide }])).toEqual([
        { kind: "unchanged" },
      ]);
      expect(decide).toHaveBeenCalledWith(queued, stored);
      expect(await store.runs.changeRuns([{ id: queued!.id, decide, withTask: true }])).toEqual([
        { kind: "unchanged" },
      ]);
      expect(decide).toHaveBeenLastCalledWith(queued, stored);
      expect(await reloadRun(store, queued!.id)).toEqual(queued);
    });

    it("with withTask, hands decide the whole task's context and the change its task", async () => {
      const store = ctx.store();
      // A webhook without a cancel_url cannot be told to stop: what a cancel of a running run depends on.
      const task = await insertTask(store, { ...IDLE, target: webhookTarget() });
      await triggerRun(store, ALL, task.id, "k", minute(0, 1));
      const [running] = await claimAndLaunch(store, minute(1));
      const [result] = await store.runs.changeRuns([
        {
          id: running!.id,
          withTask: true,
          decide: (run, context) => requestRunCancel(run, minute(1, 1), context),
        },
      ]);
      expect(result).toMatchObject({ kind: "changed", task: { id: task.id } });
      const { change } = result as RunChangeResult & { kind: "changed" };
      // Not told: the run ends at once.
      expect(change.run).toMatchObject({ status: "cancelled" });
      expect(change.cancelTarget).not.toBe(true);
      expect(await reloadRun(store, running!.id)).toEqual(change.run);
    });

    it("without withTask, still tells decide whether the run's target can be told to stop", async () => {
      // A cancel of a running run depends on it (docs/semantics.md#cancellation); a batch of one and a
      // batch of two take different reads on PostgreSQL (the locking path and the fenced statement's).
      const store = ctx.store();
      const untold = await insertTask(store, { ...IDLE, target: webhookTarget() });
      const told = await insertTask(store, {
        ...IDLE,
        target: {
          ...(webhookTarget() as WebhookTarget),
          cancelUrl: "https://hooks.example.com/stop",
        },
      });
      const handler = await insertTask(store, IDLE);
      for (const [i, t] of [untold, told, handler].entries()) {
        await triggerRun(store, ALL, t.id, `k${i}`, minute(0, 1 + i));
      }
      const running = await claimAndLaunch(store, minute(1));
      expect(running).toHaveLength(3);
      const of = (taskOfRun: string): Run => running.find((r) => r.taskId === taskOfRun)!;
      const seen = new Map<string, boolean | undefined>();
      const look = (run: Run, context: RunTaskContext): null => {
        seen.set(run.taskId, context.targetTold);
        return null;
      };
      await store.runs.changeRuns([{ id: of(untold.id).id, decide: look }]);
      expect(seen.get(untold.id)).toBe(false);
      seen.clear();
      await store.runs.changeRuns([
        { id: of(untold.id).id, decide: look },
        { id: of(told.id).id, decide: look },
        { id: of(handler.id).id, decide: look },
      ]);
      expect(seen.get(untold.id)).toBe(false);
      expect(seen.get(told.id)).not.toBe(false);
      expect(seen.get(handler.id)).not.toBe(false);
      // And the cancel itself, decided on that context: not told, the run ends at once.
      const [result] = await store.runs.changeRuns([
        {
          id: of(untold.id).id,
          decide: (run, context) => requestRunCancel(run, minute(1, 1), context),
        },
      ]);
      expect((result as RunChangeResult & { kind: "changed" }).change.run.status).toBe("cancelled");
    });

    it("with withTask in a batch of several, gives each changed request its own task", async () => {
      const store = ctx.store();
      const a = await insertTask(store, { ...IDLE, target: webhookTarget() });
      const b = await insertTask(store, IDLE);
      await triggerRun(store, ALL, a.id, "k", minute(0, 1));
      await triggerRun(store, ALL, b.id, "k", minute(0, 2));
      const launched = await claimAndLaunch(store, minute(1));
      const ids = launched.map((run) => run.id).sort();
      const results = await store.runs.changeRuns([
        ...ids.map((id) => ({
          id,
          withTask: true,
          decide: (run: Run, context: RunTaskContext) =>
            requestRunCancel(run, minute(1, 1), context),
        })),
        { id: runId("no-such-run"), withTask: true, decide: () => null },
      ]);
      const byRun = new Map(launched.map((run) => [run.id, run.taskId]));
      expect(results.map((r) => (r.kind === "changed" ? r.task?.id : r.kind))).toEqual([
        ...ids.map((id) => byRun.get(id)),
        "refused",
      ]);
      // The webhook without a cancel_url is not told: cancelled at once; the agent is asked to stop.
      const statuses = new Map(
        results.flatMap((r) => (r.kind === "changed" ? [[r.task?.id, r.change.run.status]] : [])),
      );
      expect(statuses.get(a.id)).toBe("cancelled");
      expect(statuses.get(b.id)).toBe("running");
    });

    it("reports a run that does not exist as not found", async () => {
      for (const withTask of [false, true]) {
        const decide = vi.fn(() => null);
        const [result] = await ctx
          .store()
          .runs.changeRuns([{ id: runId("no-such-run"), decide, withTask }]);
        expect(result).toMatchObject({
          kind: "refused",
          error: { code: "not_found", resource: "run", id: "no-such-run" },
        });
        expect(decide).not.toHaveBeenCalled();
      }
    });
  });
}
