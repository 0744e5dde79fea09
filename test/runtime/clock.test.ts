/** Timers on the clocks: the cancellable sleep a launch waits on, on virtual time and through a fallback. */
import { describe, expect, it } from "vitest";
import { startTimer, SystemClock, VirtualClock } from "../../src/runtime/clock.js";
import type { Clock, TimeSources } from "../../src/runtime/clock.js";
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

describe("SystemClock", () => {
  /** A wall clock the test steps, and a monotonic clock the test advances. */
  function sources(): { wall: number; mono: number; time: TimeSources } {
    const state = {
      wall: T0 as number,
      mono: 1000,
      time: { wall: () => state.wall, monotonic: () => state.mono },
    };
    return state;
  }

  it("reads the wall clock until corrected", () => {
    const s = sources();
    const clock = new SystemClock(s.time);
    expect(clock.now()).toBe(T0);
    s.wall += 3_600_000;
    expect(clock.now()).toBe(T0 + 3_600_000);
    expect(clock.wallStepMs()).toBe(0);
  });

  it("once corrected, carries the reference's time on the monotonic clock: a wall step moves nothing", () => {
    const s = sources();
    const clock = new SystemClock(s.time);
    // This machine is an hour ahead of the database.
    s.wall = T0 + 3_600_000;
    clock.setOffset(-3_600_000);
    expect(clock.now()).toBe(T0);
    s.wall += 500;
    s.mono += 500;
    expect(clock.now()).toBe(T0 + 500);
    // The wall clock steps back an hour (NTP): time goes on as before, and the step is measured.
    s.wall += 250 - 3_600_000;
    s.mono += 250;
    expect(clock.now()).toBe(T0 + 750);
    expect(clock.wallStepMs()).toBe(-3_600_000);
    // Measured again: no step left, the same time.
    clock.setOffset(0);
    expect(clock.now()).toBe(T0 + 750);
    expect(clock.wallStepMs()).toBe(0);
  });
});
