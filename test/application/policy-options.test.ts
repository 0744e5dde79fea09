/**
 * An owner's share of the global budget as the operator gives it (docs/semantics.md#fair-share): a fixed
 * number, or a part of the budget in force that follows the budget the fleet stores
 * (docs/operations.md#sizing-the-budget).
 */
import { describe, expect, it } from "vitest";
import { buildPolicy, withBudget } from "../../src/application/policy/policy-options.js";

describe("buildPolicy's owner share", () => {
  it("is absent unless asked for: every owner may take the whole budget in force", () => {
    expect(buildPolicy({ maxConcurrentRuns: 8 }).ownerShare).toBeUndefined();
    expect(withBudget(buildPolicy({ maxConcurrentRuns: 8 }), 20).ownerShare).toBeUndefined();
  });

  it("keeps a number as given, whatever the budget becomes", () => {
    const policy = buildPolicy({ maxConcurrentRuns: 8, maxActiveRunsPerOwner: 3 });
    expect(policy.ownerShare?.maxActiveRuns).toBe(3);
    expect(withBudget(policy, 100).ownerShare?.maxActiveRuns).toBe(3);
    // A cap equal to the budget is still the operator's cap once the budget grows.
    const equal = buildPolicy({ maxConcurrentRuns: 8, maxActiveRunsPerOwner: 8 });
    expect(withBudget(equal, 100).ownerShare?.maxActiveRuns).toBe(8);
  });

  it("follows the budget in force when given as a part of it, at least 1", () => {
    const policy = buildPolicy({
      maxConcurrentRuns: 7,
      maxActiveRunsPerOwner: { fractionOfBudget: 0.5 },
    });
    expect(policy.ownerShare?.maxActiveRuns).toBe(3);
    const raised = withBudget(policy, 20);
    expect(raised.maxConcurrentRuns).toBe(20);
    expect(raised.ownerShare?.maxActiveRuns).toBe(10);
    expect(withBudget(raised, 1).ownerShare?.maxActiveRuns).toBe(1);
    expect(withBudget(raised, 7).ownerShare).toEqual(policy.ownerShare);
  });

  it("leaves owners without an override the whole budget in force", () => {
    const policy = buildPolicy({ maxConcurrentRuns: 4, maxActiveRunsByOwner: { carol: 1 } });
    expect(policy.ownerShare?.maxActiveRuns).toBe(4);
    const raised = withBudget(policy, 12).ownerShare;
    expect(raised?.maxActiveRuns).toBe(12);
    expect(raised?.overrides.get("carol")).toBe(1);
  });

  it.each([0, -0.5, 1.5, Number.NaN])("refuses a fraction of %s", (fraction) => {
    expect(() =>
      buildPolicy({ maxConcurrentRuns: 4, maxActiveRunsPerOwner: { fractionOfBudget: fraction } }),
    ).toThrow(/fractionOfBudget \} in \(0, 1\]/);
  });

  it.each([["8"], [null], [{}], [{ fractionOfBudget: "0.5" }]])(
    "refuses a share of %j rather than leaving owners uncapped",
    (value) => {
      expect(() =>
        buildPolicy({ maxConcurrentRuns: 4, maxActiveRunsPerOwner: value as never }),
      ).toThrow(RangeError);
    },
  );

  it("refuses a share that is not a positive integer", () => {
    expect(() => buildPolicy({ maxActiveRunsPerOwner: 0 })).toThrow(/positive integer/);
    expect(() => buildPolicy({ maxActiveRunsPerOwner: 2.5 })).toThrow(/positive integer/);
  });
});
