/**
 * The launch timeouts of every launch in flight on one timer (docs/semantics.md#launch): a launch
 * `watch`es its deadline and forgets it when its launcher answers. Deadlines come in about the order
 * launches start, so the one timer is set for the earliest and, when it rings, expires what is due and is
 * set again for the next; a launcher that answers at once (an in-process handler) costs a set entry, not
 * a timer of its own. Once nothing is watched the timer is called off.
 */
import type { Instant } from "../domain/time.js";
import { startTimer } from "./clock.js";
import type { Clock, Timer } from "./clock.js";

interface Watched {
  readonly at: Instant;
  readonly expire: () => void;
}

export class LaunchDeadlines {
  readonly #clock: Clock;
  readonly #watched = new Set<Watched>();
  #timer: Timer | null = null;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Deadlines watched now. */
  get size(): number {
    return this.#watched.size;
  }

  /** Calls `expire` at `at` unless the returned function is called first. */
  watch(at: Instant, expire: () => void): () => void {
    const entry: Watched = { at, expire };
    this.#watched.add(entry);
    if (at < this.#timerAt) this.#arm(at);
    return () => {
      if (!this.#watched.delete(entry) || this.#watched.size > 0) return;
      this.#timer?.cancel();
      this.#timer = null;
      this.#timerAt = Number.POSITIVE_INFINITY;
    };
  }

  #arm(at: Instant): void {
    this.#timer?.cancel();
    const timer = startTimer(this.#clock, at);
    this.#timer = timer;
    this.#timerAt = at;
    void timer.done.then((rang) => {
      if (!rang || this.#timer !== timer) return;
      this.#timer = null;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#ring();
    });
  }

  #ring(): void {
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#watched) {
      if (entry.at <= now) {
        this.#watched.delete(entry);
        entry.expire();
      } else if (entry.at < next) {
        next = entry.at;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next as Instant);
  }
}
