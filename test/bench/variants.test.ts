/** The variant spread the bench reports against the 1.5x limit, and how a timed-out variant counts. */
import { describe, expect, it } from "vitest";
import type { BurstFigures } from "../../bench/lib/results.js";
import { distribution } from "../../bench/lib/stats.js";
import { variantLabel, variantSpread } from "../../bench/lib/variants.js";

function row(
  variant: string,
  firesPerSecond: number | null,
  p99: number,
  extra: Partial<BurstFigures> = {},
): BurstFigures {
  return {
    variant,
    firesPerSecond,
    lateness: { ...distribution([p99]) },
    timedOut: false,
    ...extra,
  } as BurstFigures;
}

describe("variantSpread", () => {
  it("divides the fastest fires/s by the slowest and the worst p99 by the best", () => {
    const spread = variantSpread([
      row("as-created", 3000, 700),
      row("analyzed", 2400, 900),
      row("history", 2800, 750),
    ]);
    expect(spread.firesRatio).toBe(1.25);
    expect(spread.p99Ratio).toBe(1.29);
    expect(spread.withinLimit).toBe(true);
    expect(spread.atLeast).toBe(false);
  });

  it("is over the limit when either ratio passes 1.5", () => {
    expect(
      variantSpread([row("as-created", 3000, 700), row("analyzed", 2900, 1100)]).withinLimit,
    ).toBe(false);
    expect(
      variantSpread([row("as-created", 3000, 700), row("analyzed", 1900, 700)]).withinLimit,
    ).toBe(false);
  });

  it("rates a timed-out variant over the time waited and says the ratio is a lower bound", () => {
    const spread = variantSpread([
      row("as-created", 631, 15_700),
      row("analyzed", 2, 1000, { timedOut: true, waitedMs: 120_000 }),
    ]);
    expect(spread.firesRatio).toBe(315.5);
    expect(spread.p99Ratio).toBe(7.64);
    expect(spread.atLeast).toBe(true);
    expect(spread.withinLimit).toBe(false);
  });

  it("leaves out rows that were not measured and cannot compare a single variant", () => {
    const spread = variantSpread([
      row("as-created", 3000, 700),
      row("as-created", null, 0, { unavailable: "`tasks.createMany` not available" }),
    ]);
    expect(spread).toMatchObject({ variants: ["as-created"], firesRatio: null, withinLimit: null });
  });
});

describe("variantLabel", () => {
  it("names the history variant with its size", () => {
    expect(variantLabel("history", 1_000_000)).toBe("with 1,000,000 historic runs");
    expect(variantLabel("analyzed", 0)).toBe("after ANALYZE");
  });
});
