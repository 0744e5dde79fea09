/**
 * The clock: the one source of `now` for the coordinator and the service, and the only way the runtime
 * waits. The system clock can be corrected by a measured offset (to the database's clock); the virtual
 * clock lets tests and `punctual/testing` replay time without waiting.
 */
import type { Instant } from "../domain/time.js";

export interface Clock {
  /** The current instant (whole milliseconds, UTC). */
  now(): Instant;
  /** Resolves at `at` (or at once if past), or when `signal` aborts. Never rejects. */
  sleepUntil(at: Instant, signal: AbortSignal): Promise<void>;
  /**
   * A sleep until `at` called off by `cancel()` rather than by a signal. Optional: `startTimer` falls back
   * to `sleepUntil`. Node builds an AbortSignal and its abort event at microseconds' cost, which a timer
   * set per launch pays once per fire (a tenth of a replay's time).
   */
  timer?(at: Instant): Timer;
}

/** A sleep that can be called off. */
export interface Timer {
  /** Resolves true at the instant (at once if past), false once cancelled first. Never rejects. */
  readonly done: Promise<boolean>;
  /** Calls the sleep off; nothing once it has ended. */
  cancel(): void;
}

/** `clock.timer(at)`, or the same built from `sleepUntil` and a signal for a clock without one. */
export function startTimer(clock: Clock, at: Instant): Timer {
  if (clock.timer !== undefined) return clock.timer(at);
  const controller = new AbortController();
  return {
    done: clock.sleepUntil(at, controller.signal).then(() => !controller.signal.aborted),
    cancel: () => {
      controller.abort();
    },
  };
}

/** A timer and the function that ends it (true: its instant came); `onCancel` drops its sleeper. */
function pendingTimer(onCancel: () => void): { timer: Timer; end: (rang: boolean) => void } {
  let end: (rang: boolean) => void = () => undefined;
  const done = new Promise<boolean>((resolve) => {
    end = resolve;
  });
  const cancel = (): void => {
    onCancel();
    end(false);
  };
  return { timer: { done, cancel }, end };
}

const MAX_TIMER_MS = 2_147_000_000;

/** Where a system clock reads the time (injected by tests). */
export interface TimeSources {
  /** The machine's wall clock, in epoch ms: it may step (NTP, a VM restored from a snapshot). */
  readonly wall: () => number;
  /** A clock that never steps (ms from an arbitrary origin). */
  readonly monotonic: () => number;
}

const SYSTEM_TIME: TimeSources = { wall: Date.now, monotonic: () => performance.now() };

/**
 * Wall-clock time, or, once corrected by an offset measured against a reference clock
 * (docs/operations.md#clock-skew: the database's), the reference's time carried forward by the monotonic
 * clock: a step of the machine's wall clock between two measurements then moves nothing, and
 * `wallStepMs` tells how far the wall clock has stepped since the last one.
 */
export class SystemClock implements Clock {
  readonly #time: TimeSources;
  #offsetMs = 0;
  /** Once corrected: the reference's time at monotonic 0, and the wall clock's at the correction. */
  #anchor: { readonly referenceAt0: number; readonly wallAt0: number } | null = null;

  constructor(time: TimeSources = SYSTEM_TIME) {
    this.#time = time;
  }

  now(): Instant {
    const anchor = this.#anchor;
    if (anchor === null) return Math.round(this.#time.wall() + this.#offsetMs) as Instant;
    return Math.round(anchor.referenceAt0 + this.#time.monotonic()) as Instant;
  }

  /** The measured difference `reference - local`, applied to every `now()`. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Corrects the clock by `offsetMs` (`reference - wall`, measured now). */
  setOffset(offsetMs: number): void {
    this.#offsetMs = Math.round(offsetMs);
    const wallAt0 = this.#time.wall() - this.#time.monotonic();
    this.#anchor = { referenceAt0: wallAt0 + this.#offsetMs, wallAt0 };
  }

  /** How far the wall clock stepped since the last correction (0 before any). */
  wallStepMs(): number {
    const anchor = this.#anchor;
    if (anchor === null) return 0;
    return Math.round(this.#time.wall() - this.#time.monotonic() - anchor.wallAt0);
  }

  sleepUntil(at: Instant, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      // Timers cap at 2^31-1 ms; a longer sleep simply wakes early and the caller sleeps again.
      const delay = Math.min(Math.max(0, at - this.now()), MAX_TIMER_MS);
      const timer = setTimeout(done, delay);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  timer(at: Instant): Timer {
    let handle: NodeJS.Timeout | undefined;
    const pending = pendingTimer(() => {
      clearTimeout(handle);
    });
    // Timers cap at 2^31-1 ms: a longer one is set again for the rest.
    const arm = (): void => {
      const delay = Math.max(0, at - this.now());
      const capped = delay > MAX_TIMER_MS;
      handle = setTimeout(
        () => {
          if (capped) arm();
          else pending.end(true);
        },
        capped ? MAX_TIMER_MS : delay,
      );
    };
    arm();
    return pending.timer;
  }
}

interface Sleeper {
  readonly at: Instant;
  readonly resolve: () => void;
}

/**
 * Time that moves only when told to. `advance`/`set` wake every sleeper whose instant has come, in order,
 * and give the woken code a chance to run before returning.
 */
export class VirtualClock implements Clock {
  #now: Instant;
  readonly #sleepers = new Set<Sleeper>();

  constructor(start: Instant | Date | number) {
    this.#now = (start instanceof Date ? start.getTime() : start) as Instant;
  }

  now(): Instant {
    return this.#now;
  }

  sleepUntil(at: Instant, signal: AbortSignal): Promise<void> {
    if (signal.aborted || at <= this.#now) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        at,
        resolve: () => {
          signal.removeEventListener("abort", wake);
          this.#sleepers.delete(sleeper);
          resolve();
        },
      };
      const wake = (): void => {
        sleeper.resolve();
      };
      signal.addEventListener("abort", wake, { once: true });
      this.#sleepers.add(sleeper);
    });
  }

  timer(at: Instant): Timer {
    const pending = pendingTimer(() => {
      this.#sleepers.delete(sleeper);
    });
    const sleeper: Sleeper = {
      at,
      resolve: () => {
        this.#sleepers.delete(sleeper);
        pending.end(true);
      },
    };
    if (at <= this.#now) pending.end(true);
    else this.#sleepers.add(sleeper);
    return pending.timer;
  }

  /** The earliest instant a sleeper waits for, if any. */
  nextWakeAt(): Instant | null {
    let earliest: Instant | null = null;
    for (const s of this.#sleepers) if (earliest === null || s.at < earliest) earliest = s.at;
    return earliest;
  }

  /** Moves time forward by `ms`, waking sleepers on the way. */
  async advance(ms: number): Promise<void> {
    await this.set((this.#now + ms) as Instant);
  }

  /** Moves time to `at` (never backwards), waking sleepers whose instant has come. */
  async set(at: Instant): Promise<void> {
    if (at < this.#now) throw new RangeError("a virtual clock does not go backwards");
    this.#now = at;
    const due = [...this.#sleepers].filter((s) => s.at <= at).sort((a, b) => a.at - b.at);
    if (due.length === 0) return;
    for (const sleeper of due) sleeper.resolve();
    await flushPromises();
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
