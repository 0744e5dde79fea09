/**
 * Work the coordinator starts and does not wait for (cancel hooks, late verdicts, hand-backs): each
 * promise is tracked until it settles, its failure logged, so that shutdown can wait for all of them and
 * none floats.
 */
import type { Logger } from "../application/events/logger.js";

export class BackgroundWork {
  readonly #log: Logger;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Promises not settled yet. */
  get pending(): readonly Promise<unknown>[] {
    return [...this.#pending];
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Tracks `work`; a failure is logged with `context` and `message`. Resolves once it has settled. */
  track(work: Promise<unknown>, context: object, message: string): Promise<void> {
    // One promise per tracked work (one per handler verdict on the hot path): it leaves the set itself.
    const tracked: Promise<void> = work.then(
      () => {
        this.#pending.delete(tracked);
      },
      (error: unknown) => {
        this.#pending.delete(tracked);
        this.#log.error({ ...context, err: error }, message);
      },
    );
    this.#pending.add(tracked);
    return tracked;
  }
}
