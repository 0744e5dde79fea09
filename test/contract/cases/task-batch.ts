/**
 * Contract: `insertTasks` writes a whole batch in one transaction (docs/semantics.md#bulk-create): every
 * task reads back exactly, and a batch with one bad row writes none of them.
 */
import { describe, expect, it } from "vitest";
import { ALICE_SCOPE, ALL, BOB, buildTask, every, minute, onceAt } from "../fixtures.js";
import type { ContractContext } from "./contract-context.js";

export function describeTaskBatch(ctx: ContractContext): void {
  describe("task batches", () => {
    it("inserts every task of a batch, each read back exactly", async () => {
      const tasks = Array.from({ length: 250 }, (_, i) =>
        buildTask({
          title: `Reminder ${String(i)}`,
          schedule: i % 2 === 0 ? onceAt(minute(10 + i)) : every("PT5M"),
          ...(i % 5 === 0 ? { owner: BOB } : {}),
        }),
      );
      await ctx.store().tasks.insertTasks(tasks);
      for (const task of tasks) {
        expect(await ctx.store().tasks.findTask(ALL, task.id)).toEqual(task);
      }
      const page = await ctx.store().tasks.listTasks(ALICE_SCOPE, { limit: 200 });
      expect(page.items).toHaveLength(200);
      expect(page.items.every((task) => task.owner !== BOB)).toBe(true);
    });

    it("writes none of a batch when one of its rows is refused", async () => {
      const taken = buildTask({ title: "already here" });
      await ctx.store().tasks.insertTask(taken);
      const fresh = [buildTask({ title: "first" }), buildTask({ title: "second" })];
      const clash = { ...buildTask({ title: "same id" }), id: taken.id };
      await expect(ctx.store().tasks.insertTasks([...fresh, clash])).rejects.toThrow();
      for (const task of fresh) {
        expect(await ctx.store().tasks.findTask(ALL, task.id)).toBeNull();
      }
      expect(await ctx.store().tasks.findTask(ALL, taken.id)).toEqual(taken);
    });

    it("writes nothing for an empty batch", async () => {
      await ctx.store().tasks.insertTasks([]);
      expect((await ctx.store().tasks.listTasks(ALL, { limit: 10 })).items).toEqual([]);
    });

    it("makes a batch's tasks due as one task's would be", async () => {
      const tasks = [
        buildTask({ schedule: onceAt(minute(3)) }),
        buildTask({ schedule: onceAt(minute(2)) }),
      ];
      await ctx.store().tasks.insertTasks(tasks);
      expect(await ctx.store().tasks.nextDueAt()).toBe(minute(2));
    });
  });
}
