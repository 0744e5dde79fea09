/**
 * This replica's heartbeat (docs/operations.md#crashes-and-recovery): every pass beats as it starts
 * (`beat`), and a loop beats whenever no beat was tried for an interval, so that a long pass (a burst's
 * admission, a slow store), a long tick or a shutdown draining launches and handlers never reads as
 * silence to the other replicas. The loop runs from the coordinator's `start()` until its shutdown has
 * drained; its failed beats are logged once per streak and tried again an interval later.
 */
import type { DispatchService } from "../application/dispatch-service.js";
import type { Logger } from "../application/logger.js";
import type { Instant } from "../domain/time.js";
import type { Clock } from "./clock.js";

export interface ReplicaHeartbeatDeps {
  readonly dispatch: DispatchService;
  readonly clock: Clock;
  readonly replicaId: string;
  readonly log: Logger;
  /** Time between beats. */
  readonly intervalMs: number;
}

export class ReplicaHeartbeat {
  readonly #deps: ReplicaHeartbeatDeps;
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  /** The last beat tried, by a pass or by this loop. */
  #lastTriedAt = Number.NEGATIVE_INFINITY;
  #failures = 0;

  constructor(deps: ReplicaHeartbeatDeps) {
    this.#deps = deps;
  }

  /** Starts beating between passes (idempotent; nothing once stopped). */
  start(): void {
    if (this.#loop !== null || this.#stop.signal.aborted) return;
    this.#loop = this.#run();
  }

  /** Stops beating; resolves once the loop has ended. Idempotent. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** A pass's beat: its failure is the pass's (it rejects). The loop then waits a whole interval. */
  beat(): Promise<void> {
    const { dispatch, clock, replicaId } = this.#deps;
    this.#lastTriedAt = clock.now();
    return dispatch.heartbeat(replicaId, clock.now());
  }

  async #run(): Promise<void> {
    const { clock, intervalMs } = this.#deps;
    const signal = this.#stop.signal;
    this.#lastTriedAt = Math.max(this.#lastTriedAt, clock.now());
    for (;;) {
      await clock.sleepUntil((this.#lastTriedAt + intervalMs) as Instant, signal);
      if (signal.aborted) return;
      // Passes that beat often enough leave this loop nothing to do.
      if (clock.now() - this.#lastTriedAt >= intervalMs) await this.#loopBeat();
    }
  }

  async #loopBeat(): Promise<void> {
    const { log } = this.#deps;
    try {
      await this.beat();
      if (this.#failures > 0) log.debug({ failures: this.#failures }, "heartbeats succeed again");
      this.#failures = 0;
    } catch (error) {
      if (this.#failures++ === 0) {
        log.warn({ err: error }, "a heartbeat failed; the replica tries again at the next beat");
      }
    }
  }
}
