/** The due instant of a burst leaves time for its tasks to be created through the library first. */
import { describe, expect, it } from "vitest";
import { CreationPace } from "../../bench/lib/pace.js";

describe("CreationPace", () => {
  it("plans on a slow first guess, then on the rate it observed", () => {
    const pace = new CreationPace();
    expect(pace.leadMs("postgres", "create", 10_000)).toBe(1500 + 31_250);
    pace.observe("postgres", "create", 10_000, 16_000);
    expect(pace.leadMs("postgres", "create", 10_000)).toBe(1500 + 20_000);
    // Another store or mode keeps its own rate.
    expect(pace.leadMs("sqlite", "create", 10_000)).toBe(1500 + 12_500);
  });

  it("ignores observations too small to plan on", () => {
    const pace = new CreationPace();
    pace.observe("postgres", "createMany", 10, 1);
    expect(pace.leadMs("postgres", "createMany", 5000)).toBe(1500 + 1250);
  });
});
