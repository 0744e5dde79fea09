/**
 * An abort whose `AbortSignal` is made on first read. Node builds an AbortController (and its signal and
 * abort event) at a few microseconds' cost, once per launch and per handler run on the hot path, and
 * most launches and handlers never read the signal. The first `abort` wins; a signal read after it is
 * already aborted with that reason.
 */
export class LazyAbort {
  #controller: AbortController | null = null;
  #ended: { readonly reason: unknown } | null = null;

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#ended !== null) this.#controller.abort(this.#ended.reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#ended !== null;
  }

  /** The first abort's reason (undefined while not aborted). */
  get reason(): unknown {
    return this.#ended?.reason;
  }

  abort(reason: unknown): void {
    if (this.#ended !== null) return;
    this.#ended = { reason };
    this.#controller?.abort(reason);
  }
}
