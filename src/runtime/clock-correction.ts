/**
 * The skew correction (docs/operations.md#clock-skew): this replica's clock is set to the store's
 * reference clock at start and every 10 minutes, with a warning when they differ by more than a second,
 * and again at once when the machine's wall clock stepped by more than a second since (with a warning
 * saying by how much).
 */
import type { Logger } from "../application/events/logger.js";
import type { ReferenceClock } from "../domain/ports/store.js";
import type { Clock } from "./clock.js";

const CHECK_EVERY_MS = 10 * 60_000;
const WARN_ABOVE_MS = 1000;

export class ClockCorrection {
  readonly #clock: Clock;
  readonly #reference: ReferenceClock;
  readonly #apply: (offsetMs: number) => void;
  readonly #log: Logger;
  #lastCheckAt = Number.NEGATIVE_INFINITY;
  readonly #wallStepMs: () => number;
  /** The step last reported, so that one step that cannot be measured yet is reported once. */
  #reportedStepMs = 0;

  constructor(deps: {
    readonly clock: Clock;
    readonly reference: ReferenceClock;
    /** Applies a measured offset (the system clock's `setOffset`). */
    readonly apply: (offsetMs: number) => void;
    readonly log: Logger;
    /** How far the wall clock stepped since the last correction (the system clock's `wallStepMs`). */
    readonly wallStepMs?: () => number;
  }) {
    this.#clock = deps.clock;
    this.#reference = deps.reference;
    this.#apply = deps.apply;
    this.#log = deps.log;
    this.#wallStepMs = deps.wallStepMs ?? (() => 0);
  }

  /** Measures and applies the offset when the last measurement is 10 minutes old (or there is none). */
  async check(): Promise<void> {
    const now = this.#clock.now();
    const step = this.#wallStepMs();
    const stepped = Math.abs(step) > WARN_ABOVE_MS;
    if (!stepped && now - this.#lastCheckAt < CHECK_EVERY_MS) return;
    if (stepped && Math.abs(step - this.#reportedStepMs) > WARN_ABOVE_MS) {
      this.#reportedStepMs = step;
      this.#log.warn(
        { stepMs: step },
        "this machine's clock stepped since it was last measured; measuring it again against the database's",
      );
    }
    this.#lastCheckAt = now;
    const offset = await this.#reference.measureOffsetMs();
    if (Math.abs(offset) > WARN_ABOVE_MS) {
      this.#log.warn(
        { offsetMs: offset },
        "this machine's clock differs from the database's by more than 1 s; using the database's",
      );
    }
    this.#apply(offset);
    this.#reportedStepMs = 0;
  }
}
