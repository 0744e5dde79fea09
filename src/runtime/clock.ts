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
}

/** Wall-clock time, plus an offset measured against a reference clock (SPEC 6: the database's). */
export class SystemClock implements Clock {
  #offsetMs = 0;

  now(): Instant {
    return (Date.now() + this.#offsetMs) as Instant;
  }

  /** The measured difference `reference - local`, applied to every `now()`. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  setOffset(offsetMs: number): void {
    this.#offsetMs = Math.round(offsetMs);
  }

  sleepUntil(at: Instant, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      // Timers cap at 2^31-1 ms; a longer sleep simply wakes early and the caller sleeps again.
      const delay = Math.min(Math.max(0, at - this.now()), 2_147_000_000);
      const timer = setTimeout(done, delay);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
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
  #sleepers: Sleeper[] = [];

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
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          resolve();
        },
      };
      const wake = (): void => {
        sleeper.resolve();
      };
      signal.addEventListener("abort", wake, { once: true });
      this.#sleepers.push(sleeper);
    });
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
    const due = this.#sleepers.filter((s) => s.at <= at).sort((a, b) => a.at - b.at);
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
