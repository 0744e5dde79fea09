/**
 * Contract: a task whose stored fields no longer parse (a hand edit, a downgrade) is read with a defect
 * naming them, listed with the others, kept out of admission once it is met (and reported that once),
 * and still edited back to health or deleted; the other tasks go on (docs/operations.md#a-task-that-does-not-parse).
 */
import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import { ALL, T0, handlerTarget, minute } from "../fixtures.js";
import { admitDue, claimDue, edit, insertTask, reload, remove } from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

export function describeTaskDefects(ctx: ContractContext): void {
  describe("a stored task that no longer parses", () => {
    it("is read and listed with a defect naming the column, beside sound tasks", async () => {
      const store = ctx.store();
      const sound = await insertTask(store);
      const broken = await insertTask(store);
      await ctx.corruptTaskColumn(store, broken.id, "schedule", '{"type":"weekly","day":"mon"}');
      const read = await reload(store, broken.id);
      expect(read.defect).toMatchObject({ detectedAt: null, fields: [{ field: "schedule" }] });
      expect(read.defect?.fields[0]?.message).toMatch(/type/);
      const page = await store.tasks.listTasks(ALL, { limit: 10 });
      expect(page.items.map((task) => [task.id, task.defect === null])).toEqual([
        [sound.id, true],
        [broken.id, false],
      ]);
    });

    it("names each column that does not parse, and only those", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await ctx.corruptTaskColumn(store, task.id, "target", '{"kind":"ftp"}');
      await ctx.corruptTaskColumn(store, task.id, "options", '"fast"');
      const read = await reload(store, task.id);
      expect(read.defect?.fields.map((item) => item.field)).toEqual(["target", "options"]);
      expect(read.schedule.type).toBe("cron");
    });

    it("is taken out of the due set once, reported that once, while the others are admitted", async () => {
      const store = ctx.store();
      const sound = await insertTask(store);
      const broken = await insertTask(store);
      await ctx.corruptTaskColumn(store, broken.id, "target", '{"kind":"handler"}');
      const first = await admitDue(store, minute(1));
      expect(first.defective.map((task) => [task.id, task.defect?.detectedAt])).toEqual([
        [broken.id, minute(1)],
      ]);
      expect(first.queuedRuns.map((run) => run.taskId)).toEqual([sound.id]);
      const second = await admitDue(store, minute(2));
      expect(second.defective).toEqual([]);
      expect(second.tasks).toBe(1);
      expect((await reload(store, broken.id)).defect?.detectedAt).toBe(minute(1));
      // The coordinator's sleep is not cut short by a task it will not admit.
      expect(await store.tasks.nextDueAt()).toBe(minute(3));
    });

    it("comes back to the due set when an edit gives the broken column anew", async () => {
      const store = ctx.store();
      const broken = await insertTask(store);
      await ctx.corruptTaskColumn(store, broken.id, "schedule", "[1, 2, 3]");
      await admitDue(store, minute(1));
      const schedule = parseSchedule({ type: "cron", cron: "*/5 * * * *" }, { referenceAt: T0 });
      await edit(store, ALL, broken.id, { schedule }, minute(1, 30 * 1000));
      const repaired = await reload(store, broken.id);
      expect(repaired.defect).toBeNull();
      expect(repaired.schedule).toEqual(schedule);
      expect(repaired.nextRunAt).toBe(minute(5));
      const report = await admitDue(store, minute(5));
      expect(report.queuedRuns.map((run) => run.taskId)).toEqual([broken.id]);
    });

    it("is deleted like any task", async () => {
      const store = ctx.store();
      const broken = await insertTask(store);
      await ctx.corruptTaskColumn(store, broken.id, "metadata", '{"team": 7}');
      await remove(store, broken.id, minute(1));
      expect(await store.tasks.findTask(ALL, broken.id)).toBeNull();
    });

    it("never hands the claim a run of a broken target as if it were sound", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { target: handlerTarget("send") });
      await admitDue(store, minute(1));
      await ctx.corruptTaskColumn(store, task.id, "target", '{"kind":"handler","name":42}');
      const claimed = await claimDue(store, minute(1, 1000), { handlerNames: new Set(["send"]) });
      // A store may leave the run unclaimed (memory: the stand-in names no handler) or claim it with
      // its defect, which the launch refuses (runtime/launch-call.ts).
      for (const item of claimed) {
        expect(item.task.defect?.fields.map((defect) => defect.field)).toEqual(["target"]);
      }
    });
  });
}
