/** Summary statistics of latency samples (nearest-rank percentiles, no interpolation). */

export interface Distribution {
  readonly count: number;
  readonly min: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}

/** The nearest-rank percentile `p` (0-100) of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

export function distribution(samples: readonly number[]): Distribution {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    count: sorted.length,
    min: sorted[0] ?? null,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? null,
    mean: sorted.length === 0 ? null : Math.round((sum / sorted.length) * 10) / 10,
  };
}

/** `a / b` rounded to `digits`, or null when either is missing or `b` is 0. */
export function ratio(a: number | null, b: number | null, digits = 2): number | null {
  if (a === null || b === null || b === 0) return null;
  const scale = 10 ** digits;
  return Math.round((a / b) * scale) / scale;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
