/** How the bench's table writes its figures: a missing one is a dash, never a zero or "NaN". */
import { describe, expect, it } from "vitest";
import { burstTiming } from "../../bench/lib/burst-timing.js";
import { counts, late, lost, ms, num, sec, table, times } from "../../bench/lib/format.js";
import { distribution } from "../../bench/lib/stats.js";

describe("figure formatting", () => {
  it("writes missing figures as a dash", () => {
    expect([ms(null), sec(undefined), num(null), times(null), counts(null)]).toEqual([
      "–",
      "–",
      "–",
      "–",
      "–",
    ]);
  });

  it("rounds milliseconds, shows seconds with two decimals and counts with separators", () => {
    expect(ms(12.6)).toBe("13");
    expect(sec(15_734)).toBe("15.73");
    expect(num(12_579)).toBe("12,579");
    expect(num(0.2345, 3)).toBe("0.235");
  });

  it("marks a ratio that is a lower bound", () => {
    expect(times(1.234)).toBe("×1.23");
    expect(times(315.5, true)).toBe("≥ ×315.5");
  });

  it("says how many had not run instead of calling them lost", () => {
    expect(lost({ losses: 0, pending: 0 })).toBe("0");
    expect(lost({ losses: null, pending: 9776 })).toBe("– (9,776 not yet run)");
  });

  it("lists statuses largest first", () => {
    expect(counts({ "failed:replica_lost": 12, succeeded: 488 })).toBe(
      "succeeded 488, failed:replica_lost 12",
    );
    expect(counts({})).toBe("none");
  });

  it("writes a distribution as p50 / p99 / max and a markdown table", () => {
    expect(late(distribution([1, 2, 3, 4]))).toBe("2 / 4 / 4");
    expect(table(["a", "b"], [["1", "2"]])).toBe("| a | b |\n| --- | --- |\n| 1 | 2 |");
  });
});

describe("burstTiming", () => {
  it("rates a finished burst from the due instant to the last start", () => {
    const starts = [1500, ...Array.from({ length: 2998 }, () => 2000), 3000];
    expect(burstTiming(starts, 1000, true, 9000)).toEqual({
      allLaunchedMs: 2000,
      firesPerSecond: 1500,
      drainPerSecond: 2000,
      waitedMs: 8000,
    });
  });

  it("rates an unfinished burst over the time waited and gives no launch time", () => {
    const timing = burstTiming([1500, 2000], 1000, false, 121_000);
    expect(timing.allLaunchedMs).toBeNull();
    expect(timing.firesPerSecond).toBe(0);
    expect(timing.waitedMs).toBe(120_000);
    expect(
      burstTiming(
        Array.from({ length: 240 }, () => 5000),
        1000,
        false,
        121_000,
      ).firesPerSecond,
    ).toBe(2);
  });

  it("has nothing to rate when nothing started", () => {
    expect(burstTiming([], 1000, false, 5000).firesPerSecond).toBe(0);
    expect(burstTiming([], 1000, true, 5000).firesPerSecond).toBeNull();
  });
});
