/**
 * The one back-off formula: `initialMs` doubling with each step, capped at `maxMs`. A run's retry delay,
 * the coordinator's failing loop, the write queue's retries and the PostgreSQL wake-up reconnects all use
 * it, each with its own constants (and jitter, where the caller adds some).
 */

/** `initialMs * 2^step` (step 0 is `initialMs`), at most `maxMs`. */
export function exponentialBackoffMs(step: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, step));
}
