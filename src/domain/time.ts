/**
 * Branded instants and durations. An `Instant` is UTC epoch milliseconds; the domain receives instants as
 * arguments and never reads the current time.
 */

export type Instant = number & { readonly __brand: "Instant" };
export type DurationMs = number & { readonly __brand: "DurationMs" };

export const SECOND_MS = 1000 as DurationMs;
export const MINUTE_MS = 60_000 as DurationMs;
export const HOUR_MS = 3_600_000 as DurationMs;
export const DAY_MS = 86_400_000 as DurationMs;

/** Brands an epoch-millisecond number as an instant; rejects non-integers and out-of-range values. */
export function instant(ms: number): Instant {
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > 8.64e15) {
    throw new RangeError(`not an instant: ${ms}`);
  }
  return ms as Instant;
}

/** Brands a millisecond count as a duration; rejects negatives and non-integers. */
export function durationMs(ms: number): DurationMs {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`not a duration: ${ms}`);
  }
  return ms as DurationMs;
}

export function addMs(at: Instant, ms: number): Instant {
  return (at + ms) as Instant;
}

export function minInstant(a: Instant, b: Instant): Instant {
  return a <= b ? a : b;
}

export function maxInstant(a: Instant, b: Instant): Instant {
  return a >= b ? a : b;
}
