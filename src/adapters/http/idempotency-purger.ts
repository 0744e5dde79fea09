/**
 * `Idempotency-Key` answers are remembered for a retention (24 hours by default), not forever: `serve`
 * purges older records at start and then every hour, in batches, oldest first.
 */
import type { IdempotencyRepository } from "../../domain/ports/idempotency-repository.js";
import type { Logger } from "../../application/events/logger.js";
import type { Instant } from "../../domain/time.js";

export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;
const IDEMPOTENCY_PURGE_EVERY_MS = 3_600_000;
const IDEMPOTENCY_PURGE_BATCH = 1000;

/** Deletes `Idempotency-Key` records older than the retention: at start, then every hour. */
export class IdempotencyPurger {
  #timer: NodeJS.Timeout | null = null;
  #busy = false;
  #stopped = false;

  constructor(
    readonly records: IdempotencyRepository,
    readonly now: () => Instant,
    readonly retentionMs: number,
    readonly log: Logger,
  ) {}

  start(): void {
    if (this.#timer !== null) return;
    const run = (): void => {
      if (this.#busy) return;
      this.#busy = true;
      void this.purge().finally(() => {
        this.#busy = false;
      });
    };
    run();
    this.#timer = setInterval(run, IDEMPOTENCY_PURGE_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Deletes in batches until a batch comes back short. Never throws: a failure waits for the next hour. */
  async purge(): Promise<void> {
    const before = (this.now() - this.retentionMs) as Instant;
    try {
      while (
        (await this.records.purge(before, IDEMPOTENCY_PURGE_BATCH)) === IDEMPOTENCY_PURGE_BATCH
      ) {
        if (this.#stopped) return;
      }
    } catch (error) {
      this.log.warn({ err: error }, "could not purge old Idempotency-Key records");
    }
  }
}
