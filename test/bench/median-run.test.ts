/** The bench keeps a system's median burst run, but never hides a duplicate or a loss of another run. */
import { describe, expect, it } from "vitest";
import { medianRun } from "../../bench/lib/median-run.js";
import type { BurstFigures } from "../../bench/lib/results.js";
import { distribution } from "../../bench/lib/stats.js";

function run(firesPerSecond: number, extra: Partial<BurstFigures> = {}): BurstFigures {
  return {
    firesPerSecond,
    lateness: distribution([]),
    duplicates: 0,
    losses: 0,
    pending: 0,
    timedOut: false,
    ...extra,
  } as BurstFigures;
}

describe("medianRun", () => {
  it("keeps the median run by fires/s and lists every run in order", () => {
    const kept = medianRun([run(5000), run(7000), run(6000)]);
    expect(kept.firesPerSecond).toBe(6000);
    expect(kept.repeats).toEqual([5000, 7000, 6000]);
  });

  it("counts the duplicates and losses of every run, not only the median's", () => {
    const kept = medianRun([run(5000, { duplicates: 2 }), run(6000), run(7000, { losses: 1 })]);
    expect(kept.firesPerSecond).toBe(6000);
    expect(kept.duplicates).toBe(2);
    expect(kept.losses).toBe(1);
  });

  it("says losses are unknown when any run had not drained", () => {
    expect(medianRun([run(5000), run(6000, { losses: null, timedOut: true })])).toMatchObject({
      losses: null,
      timedOut: true,
    });
  });

  it("returns a single run as it is", () => {
    const only = run(4000);
    expect(medianRun([only])).toBe(only);
  });
});
