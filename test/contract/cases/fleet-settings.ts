/**
 * Contract: the fleet's stored budget (docs/operations.md#sizing-the-budget): the first value adopted is
 * the one every later replica is answered, whatever it asks; a replacement (`migrate`) answers the
 * previous value and is what every replica reads from then on.
 */
import { describe, expect, it } from "vitest";
import { minute } from "../fixtures.js";
import type { ContractContext } from "./contract-context.js";

export function describeFleetSettings(ctx: ContractContext): void {
  describe("fleet settings", () => {
    it("keeps the first budget adopted and answers it to every later replica", async () => {
      const fleet = ctx.store().fleet;
      expect(fleet).toBeDefined();
      expect(await fleet!.storedBudget()).toBeNull();
      expect(await fleet!.adoptBudget(8, minute(1))).toBe(8);
      expect(await fleet!.adoptBudget(32, minute(2))).toBe(8);
      expect(await fleet!.storedBudget()).toBe(8);
    });

    it("replaces the budget, answering the previous one", async () => {
      const fleet = ctx.store().fleet!;
      expect(await fleet.replaceBudget(4, minute(1))).toBeNull();
      expect(await fleet.replaceBudget(12, minute(2))).toBe(4);
      expect(await fleet.adoptBudget(16, minute(3))).toBe(12);
      expect(await fleet.storedBudget()).toBe(12);
    });

    it("answers one budget to replicas adopting at once", async () => {
      const fleet = ctx.store().fleet!;
      const answers = await Promise.all(
        [3, 5, 7, 9].map((budget) => fleet.adoptBudget(budget, minute(1))),
      );
      expect(new Set(answers).size).toBe(1);
      expect(await fleet.storedBudget()).toBe(answers[0]);
    });
  });
}
