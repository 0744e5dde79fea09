/**
 * Write-behind batching of launch answers and verdicts (issue #6): the coordinator queues them here and
 * they are written in one store transaction per batch, in the order queued. One batch is written at a
 * time; whatever is queued meanwhile forms the next one, so batches grow with the store's latency and a
 * lone write waits only for the event loop to turn.
 *
 * States: idle -> scheduled (a write queued; flushed on the next turn of the event loop) -> flushing
 * (one batch in the store; retried with back-off while the store fails) -> idle when nothing is queued.
 * A queued launch is never retried past its claim's lease: it is then given up, and the claim is
 * reconciled by a sweep (docs/semantics.md#run-statuses), never launched again blindly.
 *
 * Only outages are retried. A batch the store refuses (`isRefusal`: a constraint, a value it does not
 * take) is written again one write at a time, so the others land; the one refused write is written once
 * more without its result, as a failure naming the refusal (`refusedWrite`), and rejected if even that is
 * refused (docs/storage.md#writes-the-store-refuses). A refusal never holds up the queue.
 */
import type { RunWrite } from "../application/dispatch/run-writes.js";
import { exponentialBackoffMs } from "../domain/backoff.js";
import { isPunctualError } from "../domain/errors.js";
import type { RunChangeResult } from "../domain/ports/run-repository.js";
import type { Instant } from "../domain/time.js";
import type { Clock } from "./clock.js";

export interface RunWriteQueueDeps {
  readonly clock: Clock;
  /** Writes one batch in one transaction; results at the writes' indexes. */
  readonly write: (writes: readonly RunWrite[]) => Promise<readonly RunChangeResult[]>;
  /** Writes per batch at most. */
  readonly maxBatch: number;
  /** Aborted when shutdown stops waiting: a batch still retrying gives up. */
  readonly giveUp: AbortSignal;
  /** A batch failed (the store is down); called for each failed attempt. */
  readonly onFailure: (error: unknown) => void;
  /** Whether a failed write will fail again (not an outage). @default never */
  readonly isRefusal?: (error: unknown) => boolean;
  /** A write the store refused, replaced by its failure (called once per refused write). */
  readonly onRefusal?: (write: RunWrite, error: unknown) => void;
  /** A batch was written. */
  readonly onSuccess: () => void;
  /**
   * A waiter threw on hearing its result (a bug): the batch's other waiters are told all the same, and
   * the batch is not written again. @default thrown again, uncaught, on the next tick
   */
  readonly onWaiterError?: (error: unknown) => void;
}

/**
 * A write waiting in the queue, and who hears how it went: `written` with its result once its batch is
 * written, or `notWritten` with the store's error once it is given up. A caller on the hot path passes
 * one object of its own (no promise, no closures per write); `enqueue` wraps a promise around one.
 */
export interface QueuedWrite {
  readonly write: RunWrite;
  /** The write is given up once a retry would start at or after this instant (a claim's lease). */
  readonly until: Instant | null;
  written(result: RunChangeResult): void;
  notWritten(error: unknown): void;
}

export class RunWriteQueue {
  readonly #deps: RunWriteQueueDeps;
  #pending: QueuedWrite[] = [];
  #scheduled = false;
  #flushing = false;
  /** Writes queued since the start, and those of them written or given up (`written`). */
  #queuedCount = 0;
  #doneCount = 0;
  /** Each waiting for the writes queued before it to be done (`#doneCount` at `upTo`), in order. */
  #waiters: { readonly upTo: number; readonly resolve: () => void }[] = [];

  constructor(deps: RunWriteQueueDeps) {
    this.#deps = deps;
  }

  /** Writes queued or being written. */
  get size(): number {
    return this.#pending.length;
  }

  /**
   * Settles once every write queued so far is written or given up (not the ones queued after; a store
   * that keeps failing holds it, so bound the wait); null when none is waiting.
   */
  written(): Promise<void> | null {
    const upTo = this.#queuedCount;
    if (this.#doneCount >= upTo) return null;
    return new Promise<void>((resolve) => {
      this.#waiters.push({ upTo, resolve });
    });
  }

  /**
   * Queues `write`; resolves with its result once its batch is written. Rejects with the store's error
   * when the store kept failing until `until` (or shutdown gave up); a refusal (lease_lost) is a result.
   */
  enqueue(write: RunWrite, until: Instant | null): Promise<RunChangeResult> {
    return new Promise<RunChangeResult>((resolve, reject) => {
      this.push({ write, until, written: resolve, notWritten: reject });
    });
  }

  /** Queues `queued.write`, as `enqueue` does, telling `queued` how it went. */
  push(queued: QueuedWrite): void {
    this.#pending.push(queued);
    this.#queuedCount++;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing) return;
    this.#scheduled = true;
    // The next turn of the event loop: launches answered in this turn (a claimed batch whose launcher
    // answers at once, and their handlers' verdicts) join one batch.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, this.#deps.maxBatch);
        try {
          await this.#writeBatch(batch);
        } finally {
          this.#done(batch.length);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** `count` more writes are written or given up: the waiters they were all that held are told. */
  #done(count: number): void {
    this.#doneCount += count;
    for (let first = this.#waiters[0]; first !== undefined && first.upTo <= this.#doneCount;) {
      this.#waiters.shift();
      first.resolve();
      first = this.#waiters[0];
    }
  }

  /** Writes one batch, retrying with back-off while the store fails (an outage), as `#persist` does. */
  async #writeBatch(batch: readonly QueuedWrite[]): Promise<void> {
    const { clock, giveUp } = this.#deps;
    let live = batch;
    for (let attempt = 0; ; attempt++) {
      let results: readonly RunChangeResult[];
      try {
        results = await this.#deps.write(live.map((p) => p.write));
      } catch (error) {
        if (isPunctualError(error)) {
          for (const p of live) p.notWritten(error);
          return;
        }
        if (this.#deps.isRefusal?.(error) === true) {
          await this.#writeRefused(live, error);
          return;
        }
        const wakeAt = clock.now() + exponentialBackoffMs(attempt, 200, 5000);
        const keep: QueuedWrite[] = [];
        for (const p of live) {
          if (p.until !== null && wakeAt >= p.until) p.notWritten(error);
          else keep.push(p);
        }
        live = keep;
        if (live.length === 0) return;
        this.#deps.onFailure(error);
        await clock.sleepUntil(wakeAt as Instant, giveUp);
        if (giveUp.aborted) {
          for (const p of live) p.notWritten(error);
          return;
        }
        continue;
      }
      // Told outside the write's try: what a waiter does with its result is never taken for an outage
      // (which would write the batch again).
      this.#deps.onSuccess();
      for (let i = 0; i < live.length; i++) {
        const p = live[i];
        const result = results[i];
        if (p === undefined) continue;
        tell(p, result, this.#deps.onWaiterError ?? throwLater);
      }
      return;
    }
  }

  /** A refused batch: each write alone; the one refused alone is written as its failure. */
  async #writeRefused(batch: readonly QueuedWrite[], error: unknown): Promise<void> {
    if (batch.length > 1) {
      for (const p of batch) await this.#writeBatch([p]);
      return;
    }
    const [p] = batch;
    if (p === undefined) return;
    const failure = refusedWrite(p.write, error);
    if (failure === null) {
      p.notWritten(error);
      return;
    }
    this.#deps.onRefusal?.(p.write, error);
    // The failure carries no result: a refusal of it is the store's to explain (rejected, not retried).
    // Its waiter is told as the refused write's would be (a spread would drop a class's methods).
    await this.#writeBatch([
      {
        write: failure,
        until: p.until,
        written: (result) => {
          p.written(result);
        },
        notWritten: (failed) => {
          p.notWritten(failed);
        },
      },
    ]);
  }
}

/**
 * Tells `p` its result. A waiter that throws is a bug: it must not keep the batch's other waiters from
 * hearing, nor be taken for an outage (which would write the batch again); `failed` hears of it.
 */
function tell(
  p: QueuedWrite,
  result: RunChangeResult | undefined,
  failed: (error: unknown) => void,
): void {
  try {
    if (result === undefined) p.notWritten(new Error("the store returned too few results"));
    else p.written(result);
  } catch (error) {
    failed(error);
  }
}

/** An error thrown again on its own, uncaught, as a rejected promise nobody handled would be. */
function throwLater(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

/** What a refused write's error records: the store's words, shortened. */
function refusalWords(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(
    // eslint-disable-next-line no-control-regex -- the store's words may quote what it refused
    /[\u0000-\u001f]/g,
    " ",
  );
  const short = message.length > 200 ? `${message.slice(0, 200)}...` : message;
  return `the store refused this run's verdict (${short}); its result is not kept`;
}

/**
 * The write that records a refused write's run as failed, without the result (or error text) the store
 * refused and without retry (it would fail the same way); null when the write carries no verdict (a bare
 * launch answer: it is rejected, and its claim reconciled) or is such a failure already.
 */
export function refusedWrite(write: RunWrite, error: unknown): RunWrite | null {
  const verdict = write.kind === "completion" ? write.verdict : write.answer.completion;
  if (verdict === undefined || verdict.error?.startsWith("the store refused") === true) return null;
  const failure = {
    status: "failed" as const,
    error: refusalWords(error),
    result: null,
    retry: { kind: "never" as const, reason: "non_retryable" as const },
  };
  if (write.kind === "completion") return { ...write, verdict: failure };
  return { ...write, answer: { ...write.answer, completion: failure } };
}
