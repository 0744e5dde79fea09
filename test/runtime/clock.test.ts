/** Timers on the clocks: the cancellable sleep a launch waits on, on virtual time and through a fallback. */
import { describe, expect, it } from "vitest";
import { startTimer, VirtualClock } from "../../src/runtime/clock.js";
import type { Clock } from "../../src/runtime/clock.js";
import type { Instant } from "../../src/domain/time.js";

const T0 = 1_767_225_600_000 as Instant;

describe("VirtualClock.timer", () => {
  it("rings when time reaches its instant, not before", async () => {
    const clock = new VirtualClock(T0);
    const timer = clock.timer((T0 + 1000) as Instant);
    let rang: boolean | null = null;
    void timer.done.then((value) => (rang = value));
    expect(clock.nextWakeAt()).toBe(T0 + 1000);
    await clock.advance(999);
    expect(rang).toBeNull();
    await clock.advance(1);
    expect(rang).toBe(true);
    expect(clock.nextWakeAt()).toBeNull();
  });

  it("resolves false once cancelled, and no longer holds a wake-up", async () => {
    const clock = new VirtualClock(T0);
    const timer = clock.timer((T0 + 1000) as Instant);
    timer.cancel();
    expect(clock.nextWakeAt()).toBeNull();
    await expect(timer.done).resolves.toBe(false);
    await clock.advance(2000);
    await expect(timer.done).resolves.toBe(false);
  });

  it("rings at once for an instant already past", async () => {
    const clock = new VirtualClock(T0);
    await expect(clock.timer((T0 - 1) as Instant).done).resolves.toBe(true);
    expect(clock.nextWakeAt()).toBeNull();
  });
});

describe("startTimer", () => {
  it("builds a timer from sleepUntil for a clock without one", async () => {
    const virtual = new VirtualClock(T0);
    const plain: Clock = {
      now: () => virtual.now(),
      sleepUntil: (at, signal) => virtual.sleepUntil(at, signal),
    };
    const ringing = startTimer(plain, (T0 + 1000) as Instant);
    const cancelled = startTimer(plain, (T0 + 1000) as Instant);
    cancelled.cancel();
    await expect(cancelled.done).resolves.toBe(false);
    await virtual.advance(1000);
    await expect(ringing.done).resolves.toBe(true);
  });
});
