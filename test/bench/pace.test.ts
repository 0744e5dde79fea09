/** The due instant of a burst leaves time for its tasks to be created through the library first. */
import { describe, expect, it } from "vitest";
import { CreationFailed } from "../../bench/lib/library.js";
import { CreationPace } from "../../bench/lib/pace.js";

describe("CreationPace", () => {
  it("plans on a slow first guess, then on the rate it observed", () => {
    const pace = new CreationPace();
    expect(pace.leadMs("pg2", "create", 9_000)).toBe(2000 + 45_000);
    pace.observe("pg2", "create", 10_000, 16_000);
    expect(pace.leadMs("pg2", "create", 10_000)).toBe(2000 + 24_000);
    // Another target or mode keeps its own rate.
    expect(pace.leadMs("pg1", "create", 9_000)).toBe(2000 + 45_000);
    expect(pace.leadMs("sqlite", "create", 10_000)).toBe(2000 + 15_000);
  });

  it("ignores observations too small to plan on", () => {
    const pace = new CreationPace();
    pace.observe("pg2", "createMany", 10, 1);
    expect(pace.leadMs("pg2", "createMany", 5000)).toBe(2000 + 1500);
  });
});

describe("CreationFailed", () => {
  it("tells an instant that passed during creation from another refusal", () => {
    const overran = new CreationFailed(
      new Error("schedule.run_at: must not be in the past"),
      7000,
      30_000,
    );
    expect(overran.overran).toBe(true);
    expect(overran.message).toContain("after 7000 tasks in 30000 ms");
    const parsed = new Error("schedule: the schedule has no occurrence after now");
    expect(new CreationFailed(parsed, 7758, 27_484).overran).toBe(true);
    expect(new CreationFailed(new Error("connection refused"), 0, 5).overran).toBe(false);
  });
});
