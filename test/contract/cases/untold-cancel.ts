/**
 * Contract: a running run whose target cannot be told to stop (a webhook without `cancel_url`) ends
 * `cancelled` at once with "target not told" and frees its slot of the budget, but holds its thread
 * (and, exclusive, its task) until a verdict or its deadline (docs/semantics.md#cancellation); a late
 * verdict is kept in `result` only; a forced delete leaves the run findable for that verdict.
 */
import { describe, expect, it } from "vitest";
import { ALL, HOUR, T0, at, minute, onceAt, reuseThread, webhookTarget } from "../fixtures.js";
import {
  cancelOneRun,
  claimAndLaunch,
  claimDue,
  insertTask,
  recordCompletion,
  reloadRun,
  remove,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const UNTOLD = {
  schedule: onceAt(minute(600)),
  target: webhookTarget(),
  context: reuseThread("shared"),
  options: { overlap: "allow_all" as const },
};

export function describeUntoldCancel(ctx: ContractContext): void {
  describe("cancelling a run whose target cannot be told", () => {
    it("ends it cancelled at once, frees its budget slot, and holds its thread until its deadline", async () => {
      const store = ctx.store();
      const task = await insertTask(store, UNTOLD);
      const other = await insertTask(store, { ...UNTOLD, context: reuseThread("other") });
      const first = await triggerRun(store, ALL, task.id, "first", minute(0, 1));
      const second = await triggerRun(store, ALL, task.id, "second", minute(0, 2));
      const [running] = await claimAndLaunch(store, minute(0, 3), { maxConcurrentRuns: 1 });
      expect(running).toMatchObject({ id: first!.id, status: "running" });
      const change = await cancelOneRun(store, first!.id, minute(1));
      expect(change?.run).toMatchObject({ status: "cancelled", reason: "cancel_requested" });
      const cancelled = await reloadRun(store, first!.id);
      expect(cancelled.error).toContain("target not told");
      expect(cancelled.deadlineAt).toBe(running!.deadlineAt);
      // The budget of one is free again: another thread's run goes; the shared thread's second waits.
      await triggerRun(store, ALL, other.id, "elsewhere", minute(1, 1));
      const next = await claimDue(store, minute(2), { maxConcurrentRuns: 1 });
      expect(next.map((c) => c.task.id)).toEqual([other.id]);
      expect(await claimDue(store, minute(3), { maxConcurrentRuns: 16 })).toEqual([]);
      expect((await reloadRun(store, second!.id)).status).toBe("queued");
      const after = (running!.deadlineAt ?? 0) + 1;
      const freed = await claimDue(store, at(after - T0), { maxConcurrentRuns: 16 });
      expect(freed.map((c) => c.run.id)).toEqual([second!.id]);
    });

    it("takes a late verdict into result only, and frees the thread", async () => {
      const store = ctx.store();
      const task = await insertTask(store, UNTOLD);
      const first = await triggerRun(store, ALL, task.id, "first", minute(0, 1));
      const second = await triggerRun(store, ALL, task.id, "second", minute(0, 2));
      await claimAndLaunch(store, minute(0, 3));
      await cancelOneRun(store, first!.id, minute(1));
      await recordCompletion(
        store,
        first!.id,
        { status: "succeeded", result: { late: true } },
        minute(2),
      );
      expect(await reloadRun(store, first!.id)).toMatchObject({
        status: "cancelled",
        result: { late: true },
        deadlineAt: null,
      });
      const claimed = await claimDue(store, minute(2, 1));
      expect(claimed.map((c) => c.run.id)).toEqual([second!.id]);
    });

    it("cancels it at once on a forced delete, and still finds it with its task for the verdict", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { ...UNTOLD, schedule: onceAt(at(HOUR)) });
      const run = await triggerRun(store, ALL, task.id, "only", minute(0, 1));
      await claimAndLaunch(store, minute(0, 2));
      await remove(store, task.id, minute(1), true);
      const found = await store.runs.findRunWithTask(run!.id);
      expect(found?.run).toMatchObject({ status: "cancelled", reason: "task_deleted" });
      expect(found?.task.deletedAt).toBe(minute(1));
      expect(await store.tasks.findTask(ALL, task.id)).toBeNull();
    });
  });
}
