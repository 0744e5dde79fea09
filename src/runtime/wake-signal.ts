/**
 * In-process wake-ups: the service (create, edit, trigger, resume) and database notifications wake the
 * coordinator's sleep at once instead of at the next tick.
 */
export class WakeSignal {
  #waiters = new Set<() => void>();
  #pending = false;

  /** Wakes the current waiter, or the next one if nobody waits now. */
  wake(): void {
    if (this.#waiters.size === 0) {
      this.#pending = true;
      return;
    }
    for (const waiter of this.#waiters) waiter();
    this.#waiters.clear();
  }

  /** An AbortSignal that aborts on the next wake (or at once if a wake is pending). */
  nextWake(): AbortSignal {
    const controller = new AbortController();
    if (this.#pending) {
      this.#pending = false;
      controller.abort();
      return controller.signal;
    }
    this.#waiters.add(() => {
      controller.abort();
    });
    return controller.signal;
  }
}
