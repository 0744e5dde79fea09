/**
 * In-process wake-ups: the service (create, edit, trigger, resume) and database notifications wake the
 * coordinator's sleep at once instead of at the next tick. Two kinds (docs/architecture.md#cadence): a
 * `pass` wake asks for a whole pass (new work may be due), a `claim` wake only for a claim (launch slots
 * were freed: nothing new is due, so admission, sweeps and the next wake-up need not be read again). A
 * pass serves a claim wake too.
 */
export type WakeKind = "pass" | "claim";

function merged(a: WakeKind | null, b: WakeKind): WakeKind {
  return a === "pass" || b === "pass" ? "pass" : "claim";
}

export class WakeSignal {
  #waiters = new Set<() => void>();
  /** A wake raised while nobody waited: the next `nextWake()` is aborted at once. */
  #pending: WakeKind | null = null;
  /** What the wakes since the last `take()` asked for. */
  #raised: WakeKind | null = null;

  /** Asks for a whole pass: wakes the current waiter, or the next one if nobody waits now. */
  wake(): void {
    this.#raise("pass");
  }

  /** Asks for a claim only (launch slots were freed). */
  wakeClaim(): void {
    this.#raise("claim");
  }

  #raise(kind: WakeKind): void {
    this.#raised = merged(this.#raised, kind);
    if (this.#waiters.size === 0) {
      this.#pending = merged(this.#pending, kind);
      return;
    }
    for (const waiter of this.#waiters) waiter();
    this.#waiters.clear();
  }

  /** An AbortSignal that aborts on the next wake (or at once if a wake is pending). */
  nextWake(): AbortSignal {
    const controller = new AbortController();
    if (this.#pending !== null) {
      this.#pending = null;
      controller.abort();
      return controller.signal;
    }
    this.#waiters.add(() => {
      controller.abort();
    });
    return controller.signal;
  }

  /**
   * What the wakes since the last call asked for (null: none), and forgets them, a pending one too: the
   * caller is about to serve them.
   */
  take(): WakeKind | null {
    const kind = this.#raised;
    this.#raised = null;
    this.#pending = null;
    return kind;
  }
}
