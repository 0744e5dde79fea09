/**
 * Retention off the pass (docs/operations.md#retention): finished runs older than the retention are
 * deleted in batches by a round of their own, which the sweep starts when none is running and never waits
 * for. A backlog of millions (a retention shortened, a fleet that was down) is caught up at the database's
 * pace, batch after batch, while passes go on admitting and claiming: a pass never holds its due work back
 * behind a delete. One batch per statement keeps each transaction short.
 */
import type { RecoverySweeps } from "../application/dispatch/recovery-sweeps.js";
import type { Logger } from "../application/events/logger.js";
import type { DurationMs } from "../domain/time.js";
import type { Clock } from "./clock.js";

/** Runs deleted per statement at most. */
export const PURGE_BATCH = 2_000;
/** Batches per round at most: a round that finds more leaves them to the next sweep's round. */
export const PURGE_BATCHES_PER_ROUND = 50;

export interface RetentionDeps {
  readonly recovery: Pick<RecoverySweeps, "purge">;
  readonly clock: Clock;
  readonly retentionMs: DurationMs;
  readonly log: Logger;
  /** Whether the replica is stopping: a round ends after its current batch. */
  readonly stopping: () => boolean;
}

export class Retention {
  readonly #deps: RetentionDeps;
  #round: Promise<number> | null = null;

  constructor(deps: RetentionDeps) {
    this.#deps = deps;
  }

  /** Whether a round is running. */
  get running(): boolean {
    return this.#round !== null;
  }

  /**
   * Starts a round unless one is running. Resolves with what the round deleted (a round already running:
   * null, at once); a failure rejects, and the next sweep starts a new round.
   */
  start(): Promise<number> | null {
    if (this.#round !== null) return null;
    const round = this.#purge().finally(() => {
      this.#round = null;
    });
    this.#round = round;
    return round;
  }

  async #purge(): Promise<number> {
    const { recovery, clock, retentionMs, log, stopping } = this.#deps;
    const startedAt = performance.now();
    let purged = 0;
    let batches = 0;
    while (batches < PURGE_BATCHES_PER_ROUND && !stopping()) {
      const deleted = await recovery.purge(clock.now(), retentionMs, PURGE_BATCH);
      purged += deleted;
      batches += 1;
      if (deleted < PURGE_BATCH) break;
    }
    // A round that had a backlog says so, and what is left says itself in the next round's line.
    if (batches > 1) {
      log.info(
        {
          purged,
          batches,
          durationMs: Math.round(performance.now() - startedAt),
          more: batches === PURGE_BATCHES_PER_ROUND,
        },
        "retention deleted a backlog of finished runs",
      );
    }
    return purged;
  }
}
