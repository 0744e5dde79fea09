/**
 * This replica's heartbeat (docs/operations.md#replica-liveness-what-silent-means), which also registers
 * the handler names it serves (docs/deploy.md#handler-names): a loop beats whenever
 * no beat was tried for an interval (a third of the liveness timeout), so that a long pass (a burst's
 * admission, a slow store), a long tick or a shutdown draining launches and handlers never reads as
 * silence to the other replicas. A pass beats as it starts only when the beats are due or failing
 * (`passBeat`): a busy replica ticking many times a second writes no more beats than an idle one. The
 * loop runs from the coordinator's `start()` until its shutdown has drained; its failed beats are logged
 * once per streak and tried again an interval later.
 *
 * It also knows how long no other replica can have judged this one silent (`covers`): a beat sent at
 * `s` and answered covers this replica until `s` plus the liveness timeout (less a tenth for the
 * replicas' clocks), and a beat answered only after that cover ran out starts a new cover, since the
 * others may have taken its work over in between. A claim answered outside the cover it was made in is
 * not launched (docs/operations.md#a-partitioned-replica).
 */
import type { ReplicaRegistry } from "../domain/ports/replica-registry.js";
import type { Logger } from "../application/events/logger.js";
import type { Instant } from "../domain/time.js";
import type { Clock } from "./clock.js";

export interface ReplicaHeartbeatDeps {
  /** Where the beats are written. */
  readonly replicas: ReplicaRegistry;
  readonly clock: Clock;
  readonly replicaId: string;
  readonly log: Logger;
  /** The liveness timeout: the loop beats every third of it. */
  readonly livenessMs: number;
  /**
   * The handler names this replica serves, registered with each beat (docs/deploy.md#handler-names).
   * @default none registered (read by the others as "may serve any")
   */
  readonly handlerNames?: ReadonlySet<string>;
  /** A beat was written at `at` (for the `coordinator:heartbeat` event). */
  readonly beaten?: (at: Instant) => void;
}

export class ReplicaHeartbeat {
  readonly #deps: ReplicaHeartbeatDeps;
  /** What each beat registers, in a stable order. */
  readonly #names: readonly string[] | undefined;
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  /** The last beat tried, by a pass or by this loop. */
  #lastTriedAt = Number.NEGATIVE_INFINITY;
  /** When the last beat that succeeded was sent. */
  #lastBeatAt = Number.NEGATIVE_INFINITY;
  /** Since when beats succeed (null while they fail); from the start of time until a beat fails. */
  #healthySince: number | null = Number.NEGATIVE_INFINITY;
  #failures = 0;
  /** Until when (this replica's clock) no other replica can have judged it silent. */
  #coveredUntil = Number.NEGATIVE_INFINITY;
  /** Covers started: one more each time a beat is answered after the cover ran out (or the first). */
  #covers = 0;

  constructor(deps: ReplicaHeartbeatDeps) {
    this.#deps = deps;
    this.#names = deps.handlerNames === undefined ? undefined : [...deps.handlerNames].sort();
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

  /**
   * A pass's beat: written only when the last one failed or was sent a third of the liveness timeout ago
   * (the loop's interval) or more, so passes never beat more often than liveness needs; its failure is the
   * pass's (it rejects).
   */
  async passBeat(): Promise<void> {
    const due = this.#deps.clock.now() - this.#lastBeatAt >= this.#intervalMs();
    if (due || this.#healthySince === null) await this.beat();
  }

  /** A beat now: its failure is the caller's (it rejects). The loop then waits a whole interval. */
  async beat(): Promise<void> {
    const { replicas, clock, replicaId } = this.#deps;
    const at = clock.now();
    this.#lastTriedAt = at;
    try {
      await replicas.heartbeat(replicaId, at, this.#names);
    } catch (error) {
      this.#healthySince = null;
      throw error;
    }
    const answeredAt = clock.now();
    if (answeredAt >= this.#coveredUntil) this.#covers++;
    const livenessMs = this.#deps.livenessMs;
    this.#coveredUntil = Math.max(this.#coveredUntil, at + livenessMs - livenessMs / 10);
    this.#lastBeatAt = Math.max(this.#lastBeatAt, at);
    this.#healthySince ??= answeredAt;
    this.#deps.beaten?.(at);
  }

  /**
   * Whether this replica may judge others silent now: not while its own beats fail, nor for a liveness
   * timeout after they succeed again. An outage of the store silences every replica; once it is back,
   * the others get the time to beat again before anyone is declared lost.
   */
  judgesSilence(): boolean {
    const since = this.#healthySince;
    return since !== null && this.#deps.clock.now() - since >= this.#deps.livenessMs;
  }

  /** When the last beat the store answered was sent (this replica's clock), or null before the first. */
  get lastBeatAt(): Instant | null {
    return Number.isFinite(this.#lastBeatAt) ? (this.#lastBeatAt as Instant) : null;
  }

  /** The cover in force now (compare it with `covers` later); it may already have run out. */
  get cover(): number {
    return this.#covers;
  }

  /**
   * Whether this replica is still inside `cover`: no beat was answered after a gap since, and its last
   * beats still vouch for it now. Outside it, other replicas may have taken its claims over.
   */
  covers(cover: number): boolean {
    return cover === this.#covers && this.#deps.clock.now() < this.#coveredUntil;
  }

  async #run(): Promise<void> {
    const { clock } = this.#deps;
    const intervalMs = this.#intervalMs();
    const signal = this.#stop.signal;
    this.#lastTriedAt = Math.max(this.#lastTriedAt, clock.now());
    for (;;) {
      await clock.sleepUntil((this.#lastTriedAt + intervalMs) as Instant, signal);
      if (signal.aborted) return;
      // Passes that beat often enough leave this loop nothing to do.
      if (clock.now() - this.#lastTriedAt >= intervalMs) await this.#loopBeat();
    }
  }

  /** A third of the liveness timeout: two beats may be lost or late before it reads as silence. */
  #intervalMs(): number {
    return this.#deps.livenessMs / 3;
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
