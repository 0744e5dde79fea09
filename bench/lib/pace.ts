/**
 * How far ahead to put a burst's due instant: the tasks are created through the library before it, and
 * creation takes seconds (10,000 `tasks.create` calls took about 16 s on a 2-core machine). The bench
 * remembers the creation rate it last observed per target and mode and leaves that time plus a margin; a
 * setup that still overran the instant is reported as such in the table.
 */
import type { Target } from "./config.js";
import type { CreationMode } from "./library.js";

/** Tasks per second assumed before anything was observed in this run (on the slow side). */
const FIRST_GUESS: Readonly<Record<CreationMode, Readonly<Record<Target, number>>>> = {
  create: { sqlite: 1000, pg1: 300, pg2: 300 },
  createMany: { sqlite: 10_000, pg1: 5_000, pg2: 5_000 },
};

/**
 * Margin over the expected creation time, and a fixed allowance for the first calls and the tick: a
 * loaded 2-core machine's creation rate varied by 30% from one burst to the next.
 */
const FACTOR = 1.5;
const FIXED_MS = 2000;
/** Observations of fewer tasks are too noisy to plan a large burst on. */
const LEAST_OBSERVED = 500;

export class CreationPace {
  readonly #rates = new Map<string, number>();

  /** Milliseconds from now to a due instant that `count` creations should not overrun. */
  leadMs(target: Target, mode: CreationMode, count: number): number {
    const rate = this.#rates.get(`${target}/${mode}`) ?? FIRST_GUESS[mode][target];
    return Math.round(FIXED_MS + (count / rate) * 1000 * FACTOR);
  }

  /** Records that `count` tasks took `ms` to create. */
  observe(target: Target, mode: CreationMode, count: number, ms: number): void {
    if (count < LEAST_OBSERVED || ms <= 0) return;
    this.#rates.set(`${target}/${mode}`, (count / ms) * 1000);
  }
}

/** The one pace of this bench run. */
export const pace = new CreationPace();
