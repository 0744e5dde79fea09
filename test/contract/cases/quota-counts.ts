/**
 * Contract: the counts the quotas read (docs/security.md#quotas): an owner's tasks, deleted ones left out,
 * and an owner's recent runs of one trigger since an instant (by `queued_at`); plus a task's retiring
 * signing secret, which every store keeps as written.
 */
import { describe, expect, it } from "vitest";
import { ALICE, ALICE_SCOPE, ALL, BOB, buildTask, minute, webhookTarget } from "../fixtures.js";
import {
  backfillRuns,
  insertTask,
  insertTasks,
  reload,
  remove,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

export function describeQuotaCounts(ctx: ContractContext): void {
  describe("quota counts", () => {
    it("counts an owner's tasks, leaving deleted ones and other owners' out", async () => {
      const store = ctx.store();
      const [first] = await insertTasks(store, {}, {}, {}, { owner: BOB });
      expect(await store.tasks.countTasks(ALICE)).toBe(3);
      expect(await store.tasks.countTasks(BOB)).toBe(1);
      await remove(store, first!.id, minute(1));
      expect(await store.tasks.countTasks(ALICE)).toBe(2);
    });

    it("counts an owner's runs of one trigger queued since an instant", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const other = await insertTask(store, { owner: BOB });
      await triggerRun(store, ALICE_SCOPE, task.id, "a", minute(1));
      await triggerRun(store, ALICE_SCOPE, task.id, "b", minute(3));
      await triggerRun(store, ALL, other.id, "c", minute(3));
      await backfillRuns(
        store,
        ALICE_SCOPE,
        task.id,
        { from: minute(-10), to: minute(-5) },
        minute(4),
      );
      expect(await store.runs.countRecentRuns(ALICE, "manual", minute(0))).toBe(2);
      expect(await store.runs.countRecentRuns(ALICE, "manual", minute(2))).toBe(1);
      expect(await store.runs.countRecentRuns(ALICE, "manual", minute(3))).toBe(1);
      expect(await store.runs.countRecentRuns(ALICE, "backfill", minute(0))).toBe(5);
      expect(await store.runs.countRecentRuns(BOB, "manual", minute(0))).toBe(1);
      // Requested runs are never counted as scheduled ones (they are read from different indexes).
      expect(await store.runs.countRecentRuns(ALICE, "scheduled", minute(0))).toBe(0);
    });

    it("counts the owner's recent runs of a trigger under a command's lock, when asked", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const other = await insertTask(store, { owner: BOB });
      await backfillRuns(store, ALL, other.id, { from: minute(-10), to: minute(-5) }, minute(1));
      await backfillRuns(
        store,
        ALICE_SCOPE,
        task.id,
        { from: minute(-20), to: minute(-17) },
        minute(2),
      );
      await backfillRuns(
        store,
        ALICE_SCOPE,
        task.id,
        { from: minute(-30), to: minute(-28) },
        minute(4),
      );
      await triggerRun(store, ALICE_SCOPE, task.id, "a", minute(4));
      const counted = (since: number, trigger: "backfill" | "manual") =>
        store.tasks.mutateTask(
          ALICE_SCOPE,
          task.id,
          (locked) => ({ result: () => locked.recentRuns }),
          { recentRuns: { trigger, since: minute(since) } },
        );
      expect(await counted(0, "backfill")).toBe(5);
      expect(await counted(3, "backfill")).toBe(2);
      expect(await counted(0, "manual")).toBe(1);
      expect(
        await store.tasks.mutateTask(ALICE_SCOPE, task.id, (locked) => ({
          result: () => locked.recentRuns,
        })),
      ).toBeUndefined();
    });

    it("keeps a task's retiring signing secret as written", async () => {
      const store = ctx.store();
      const task = {
        ...buildTask({ target: webhookTarget() }),
        retiringSecret: { secret: "the-old-one", until: minute(30) },
      };
      await store.tasks.insertTask(task);
      expect((await reload(store, task.id)).retiringSecret).toEqual(task.retiringSecret);
    });
  });
}
