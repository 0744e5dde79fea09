/**
 * A burst's rates from its handler starts, the same arithmetic for every system: fires/s is executions
 * divided by the time from the due instant to the last start; a burst that had not finished when the
 * measurement stopped is rated over the time waited instead (what it managed, not what it would have).
 */

export interface BurstTiming {
  /** Due instant to the last start; null when the burst did not finish. */
  readonly allLaunchedMs: number | null;
  readonly firesPerSecond: number | null;
  /** Executions / (last start - first start): the drain rate once started. */
  readonly drainPerSecond: number | null;
  /** Due instant to the end of the measurement. */
  readonly waitedMs: number;
}

export function burstTiming(
  starts: readonly number[],
  dueAt: number,
  finished: boolean,
  stoppedAt: number,
): BurstTiming {
  const waitedMs = Math.max(0, stoppedAt - dueAt);
  if (starts.length === 0) {
    return {
      allLaunchedMs: null,
      firesPerSecond: finished ? null : 0,
      drainPerSecond: null,
      waitedMs,
    };
  }
  let first = Infinity;
  let last = -Infinity;
  for (const start of starts) {
    if (start < first) first = start;
    if (start > last) last = start;
  }
  const span = finished ? last - dueAt : waitedMs;
  return {
    allLaunchedMs: finished ? last - dueAt : null,
    firesPerSecond: span <= 0 ? null : Math.round((starts.length / span) * 1000),
    drainPerSecond: last === first ? null : Math.round((starts.length / (last - first)) * 1000),
    waitedMs,
  };
}
