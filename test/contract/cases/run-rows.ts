/** Contract: run rows round-trip exactly, stay owner-scoped, and list newest first with stable pages. */
import { describe, expect, it } from "vitest";
import { idempotencyKeyFor } from "../../../src/domain/occurrence.js";
import type { Run } from "../../../src/domain/run.js";
import {
  ALICE_SCOPE,
  ALL,
  BOB_SCOPE,
  T0,
  minute,
  onceAt,
  reuseThread,
  webhookTarget,
} from "../fixtures.js";
import {
  admitDue,
  backfillRuns,
  claimAndLaunch,
  insertTask,
  recordCompletion,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

function newestFirst(a: Run, b: Run): number {
  if (a.scheduledFor !== b.scheduledFor) return b.scheduledFor - a.scheduledFor;
  return a.id < b.id ? 1 : -1;
}

export function describeRunRows(ctx: ContractContext): void {
  describe("run rows", () => {
    it("returns a run exactly as it was written, its JSON result included", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      const queued = await triggerRun(store, ALL, task.id, "k", minute(0, 123));
      expect(await store.runs.findRun(ALL, queued!.id)).toEqual(queued);
      const [launched] = await claimAndLaunch(store, minute(0, 456));
      expect(await store.runs.findRun(ALL, launched!.id)).toEqual(launched);
      const result = { nested: { list: [1, 2.5, "três", null, true] }, empty: {}, text: 'a "q"' };
      const change = await recordCompletion(
        store,
        launched!.id,
        { status: "succeeded", result },
        minute(0, 789),
      );
      const stored = await store.runs.findRun(ALL, launched!.id);
      expect(stored).toEqual(change!.run);
      expect(stored?.result).toEqual(result);
      expect(stored?.finishedAt).toBe(minute(0, 789));
    });

    it("gives a run without a thread its own id as thread, and keeps a bound one", async () => {
      const store = ctx.store();
      const fresh = await insertTask(store, IDLE);
      const bound = await insertTask(store, { ...IDLE, context: reuseThread("t-1") });
      const webhook = await insertTask(store, { ...IDLE, target: webhookTarget() });
      const a = await triggerRun(store, ALL, fresh.id, "k", minute(0, 1));
      const b = await triggerRun(store, ALL, bound.id, "k", minute(0, 1));
      const c = await triggerRun(store, ALL, webhook.id, "k", minute(0, 1));
      expect(a).toMatchObject({ threadScope: "agent:main", threadId: a!.id });
      expect(b).toMatchObject({ threadScope: "agent:main", threadId: "t-1" });
      expect(c).toMatchObject({ threadScope: `webhook:${c!.owner}`, threadId: c!.id });
    });

    it("hides another owner's run from findRun and listRuns", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      const run = await triggerRun(store, ALL, task.id, "k", minute(0, 1));
      expect(await store.runs.findRun(BOB_SCOPE, run!.id)).toBeNull();
      expect(await store.runs.listRuns(BOB_SCOPE, task.id, { limit: 10 })).toEqual({
        items: [],
        nextCursor: null,
      });
      expect(await store.runs.findRun(ALICE_SCOPE, run!.id)).toEqual(run);
      expect(await store.runs.findRun(ALL, run!.id)).toEqual(run);
      expect((await store.runs.listRuns(ALL, task.id, { limit: 10 })).items).toEqual([run]);
    });

    it("finds a manual run by its task and idempotency key only", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const other = await insertTask(store, IDLE);
      const run = await triggerRun(store, ALL, task.id, "request-7", minute(0, 1));
      const key = idempotencyKeyFor(task.id, "manual", "request-7");
      expect(await store.runs.findManualRun(task.id, key)).toEqual(run);
      expect(await store.runs.findManualRun(other.id, key)).toBeNull();
      expect(
        await store.runs.findManualRun(task.id, idempotencyKeyFor(task.id, "manual", "other")),
      ).toBeNull();
      const [backfilled] = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: minute(-1), to: T0 },
        minute(0, 2),
      );
      expect(await store.runs.findManualRun(task.id, backfilled!.idempotencyKey)).toBeNull();
    });

    it("lists a task's runs newest first, filtered by status and trigger", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "buffer_one" } });
      const other = await insertTask(store, IDLE);
      await admitDue(store, minute(1));
      await admitDue(store, minute(2));
      await backfillRuns(store, ALL, task.id, { from: minute(-2), to: T0 }, minute(2));
      await triggerRun(store, ALL, task.id, "k", minute(2, 1));
      await triggerRun(store, ALL, other.id, "k", minute(2, 2));
      const page = await store.runs.listRuns(ALICE_SCOPE, task.id, { limit: 10 });
      expect(page.nextCursor).toBeNull();
      expect(page.items.map((run) => [run.trigger, run.scheduledFor, run.status])).toEqual([
        ["manual", minute(2, 1), "queued"],
        ["scheduled", minute(2), "skipped"],
        ["scheduled", minute(1), "queued"],
        ["backfill", minute(-1), "queued"],
        ["backfill", minute(-2), "queued"],
      ]);
      const backfills = await store.runs.listRuns(ALL, task.id, { limit: 10, trigger: "backfill" });
      expect(backfills.items.map((run) => run.scheduledFor)).toEqual([minute(-1), minute(-2)]);
      const skipped = await store.runs.listRuns(ALL, task.id, { limit: 10, status: "skipped" });
      expect(skipped.items.map((run) => run.reason)).toEqual(["coalesced"]);
    });

    it("pages through every run exactly once even when runs are added between pages", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      const original: Run[] = [];
      for (const [key, now] of [
        ["a", minute(0, 1)],
        ["b", minute(0, 1)],
        ["c", minute(0, 1)],
        ["d", minute(0, 2)],
        ["e", minute(0, 2)],
      ] as const) {
        original.push((await triggerRun(store, ALL, task.id, key, now))!);
      }
      const seen: Run[] = [];
      const first = await store.runs.listRuns(ALL, task.id, { limit: 2 });
      seen.push(...first.items);
      await triggerRun(store, ALL, task.id, "newer", minute(0, 3));
      await triggerRun(store, ALL, task.id, "same-instant", minute(0, 1));
      let cursor = first.nextCursor ?? undefined;
      while (cursor !== undefined) {
        const page = await store.runs.listRuns(ALL, task.id, { limit: 2, cursor });
        seen.push(...page.items);
        cursor = page.nextCursor ?? undefined;
        if (page.items.length === 0) break;
      }
      const ids = seen.map((run) => run.id);
      expect(new Set(ids).size).toBe(ids.length);
      const originalIds = [...original].sort(newestFirst).map((run) => run.id);
      expect(ids.filter((id) => originalIds.includes(id))).toEqual(originalIds);
    });

    it("refuses a run cursor it did not make", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerRun(store, ALL, task.id, "k", minute(0, 1));
      await expect(
        store.runs.listRuns(ALL, task.id, { limit: 1, cursor: "%%%" }),
      ).rejects.toMatchObject({ code: "validation_failed" });
    });
  });
}
