/**
 * When freed launch slots ask for a claim (docs/architecture.md#cadence): a claim per freed slot makes
 * batches of a few runs and a round trip each, so frees are gathered until they make a useful batch, a
 * quarter of the budget (at most a claim batch), and claimed then. A replica with nothing else in flight
 * claims at once (a lone run waits for nothing), and frees that stay under the batch are claimed after a
 * short linger, so a trickle is never held until the tick. Any claim (a pass's too) uses the frees
 * gathered so far.
 *
 * States: empty -> gathering (frees counted, the linger's one timer set) -> empty when the count reaches
 * the batch, the replica is idle, the linger ends (each asks for a claim) or a claim starts.
 */
import type { Instant } from "../domain/time.js";
import { startTimer } from "./clock.js";
import type { Clock, Timer } from "./clock.js";

/** How long frees under a useful batch wait for more before they are claimed. */
export const CLAIM_LINGER_MS = 25;

export interface ClaimTriggerDeps {
  readonly clock: Clock;
  /** Frees that make a useful batch (a quarter of the budget in force, at most a claim batch). */
  readonly usefulBatch: () => number;
  /** Whether this replica has nothing else in flight (its frees are all there will be soon). */
  readonly idle: () => boolean;
  /** Asks the coordinator for a claim. */
  readonly claim: () => void;
}

export class ClaimTrigger {
  readonly #deps: ClaimTriggerDeps;
  #freed = 0;
  #linger: Timer | null = null;

  constructor(deps: ClaimTriggerDeps) {
    this.#deps = deps;
  }

  /** Frees gathered and not claimed yet. */
  get gathered(): number {
    return this.#freed;
  }

  /** A launch slot was freed (a verdict recorded here, or another replica's, heard through the store). */
  freed(): void {
    this.#freed++;
    if (this.#freed >= this.#deps.usefulBatch() || this.#deps.idle()) {
      this.#fire();
      return;
    }
    if (this.#linger !== null) return;
    const { clock } = this.#deps;
    const linger = startTimer(clock, (clock.now() + CLAIM_LINGER_MS) as Instant);
    this.#linger = linger;
    void linger.done.then((rang) => {
      if (rang && this.#linger === linger) this.#fire();
    });
  }

  /** A claim starts: it uses every free gathered so far. */
  claiming(): void {
    this.#freed = 0;
    this.#linger?.cancel();
    this.#linger = null;
  }

  /** Forgets the linger (shutdown). */
  stop(): void {
    this.claiming();
  }

  #fire(): void {
    this.claiming();
    this.#deps.claim();
  }
}
