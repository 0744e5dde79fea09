/**
 * Repeats a burst and keeps its median run: single runs on a small shared machine vary by 15% or more,
 * and a milestone read from one run can pass or miss on noise. Duplicates and losses are never hidden by
 * the choice: the row reports the sum over every run.
 */
import type { BurstFigures } from "./results.js";

/**
 * The median of one system's runs of a burst by fires/s (the lower middle one for an even count), with
 * every run's duplicates, losses and pending occurrences.
 */
export function medianRun(runs: readonly BurstFigures[]): BurstFigures {
  const first = runs[0];
  if (first === undefined) throw new Error("medianRun: no runs");
  if (runs.length === 1) return first;
  const sorted = [...runs].sort((a, b) => (a.firesPerSecond ?? -1) - (b.firesPerSecond ?? -1));
  const median = sorted[Math.floor((sorted.length - 1) / 2)] ?? first;
  const lost = runs.map((r) => r.losses);
  return {
    ...median,
    duplicates: runs.reduce((sum, r) => sum + r.duplicates, 0),
    losses: lost.includes(null) ? null : lost.reduce<number>((sum, n) => sum + (n ?? 0), 0),
    pending: runs.reduce((sum, r) => sum + r.pending, 0),
    timedOut: runs.some((r) => r.timedOut),
    repeats: runs.map((r) => r.firesPerSecond),
    repeatP99s: runs.map((r) => r.lateness.p99),
  };
}
