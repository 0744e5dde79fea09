/**
 * Every launch's timeout on one timer (docs/semantics.md#launch): deadlines watched together set one
 * timer for the earliest, expire in order, and leave no timer once forgotten.
 */
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/runtime/clock.js";
import type { Instant } from "../../src/domain/time.js";
import { LaunchDeadlines } from "../../src/runtime/launch-deadlines.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

describe("LaunchDeadlines", () => {
  it("keeps one timer, set for the earliest deadline, and expires each at its instant", async () => {
    const clock = new VirtualClock(t0);
    const deadlines = new LaunchDeadlines(clock);
    const expired: number[] = [];
    for (const offset of [30, 10, 20]) {
      deadlines.watch((t0 + offset) as Instant, () => expired.push(offset));
    }
    expect(clock.nextWakeAt()).toBe(t0 + 10);
    await clock.advance(15);
    expect(expired).toEqual([10]);
    expect(clock.nextWakeAt()).toBe(t0 + 20);
    await clock.advance(20);
    expect([...expired].sort((a, b) => a - b)).toEqual([10, 20, 30]);
    expect(clock.nextWakeAt()).toBeNull();
  });

  it("calls the timer off once every deadline is forgotten", () => {
    const clock = new VirtualClock(t0);
    const deadlines = new LaunchDeadlines(clock);
    const forget = [10, 20].map((offset) =>
      deadlines.watch((t0 + offset) as Instant, () => {
        throw new Error("forgotten deadlines never expire");
      }),
    );
    for (const f of forget) f();
    expect(deadlines.size).toBe(0);
    expect(clock.nextWakeAt()).toBeNull();
  });
});
