/**
 * An idle replica's work ahead of the next instant something is due
 * (docs/decisions.md#an-idle-replica-reads-the-next-instants-definitions-ahead-of-it): after a pass that
 * admitted nothing, when that instant is near but not too near, the tasks due at it are read without a
 * lock and their definitions decoded and schedules searched (`AdmitDue.readAhead`), once per instant,
 * so that its admission finds them done. Nothing is decided or written ahead of the instant.
 */
import type { AdmitDue } from "../application/dispatch/admit-due.js";
import type { Logger } from "../application/events/logger.js";
import type { Instant } from "../domain/time.js";
import type { BackgroundWork } from "./background-work.js";

/**
 * Read ahead only when the instant is at least this far away: the read and the decoding (tens of ms for
 * a thousand tasks) must be over before the instant's admission wants the event loop.
 */
export const READ_AHEAD_MIN_LEAD_MS = 250;

/** Admission batches' worth of tasks read ahead at most. */
export const READ_AHEAD_BATCHES = 4;

export interface ReadAheadDeps {
  readonly admission: Pick<AdmitDue, "readAhead">;
  readonly background: BackgroundWork;
  readonly log: Logger;
  /** Tasks per admission batch (`READ_AHEAD_BATCHES` of them are read at most). */
  readonly admissionBatch: number;
  /** The longest sleep between passes: an instant within two of them is read ahead. */
  readonly tickMs: number;
}

export class ReadAhead {
  readonly #deps: ReadAheadDeps;
  /** The instant last read ahead for. */
  #readFor: Instant | null = null;

  constructor(deps: ReadAheadDeps) {
    this.#deps = deps;
  }

  /**
   * After a pass at `now` whose admission took `admitted` tasks, with `next` the next instant something
   * is due: reads ahead for `next` in the background when the pass was idle and `next` is between
   * `READ_AHEAD_MIN_LEAD_MS` and two ticks away, and was not read ahead for already. A busy replica
   * (it admitted in this pass) does not: what it admits each pass it holds decoded already.
   */
  consider(now: Instant, next: Instant | null, admitted: number): void {
    if (next === null || admitted > 0 || next === this.#readFor) return;
    const lead = next - now;
    if (lead < READ_AHEAD_MIN_LEAD_MS || lead > 2 * this.#deps.tickMs) return;
    this.#readFor = next;
    const { admission, log } = this.#deps;
    const read = admission
      .readAhead(next, this.#deps.admissionBatch * READ_AHEAD_BATCHES)
      .catch((error: unknown) => {
        // Only a head start lost: the admission at `next` reads and decodes as it always does.
        log.debug({ err: error }, "could not read ahead the tasks due next");
      });
    void this.#deps.background.track(read, {}, "reading ahead failed");
  }
}
