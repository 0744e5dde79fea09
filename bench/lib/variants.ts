/**
 * The PostgreSQL burst's variants: the same burst on the same code, with the database in three states a
 * production database passes through. They must not differ by more than 1.5x (issue 14): a claim path
 * whose speed depends on the planner's statistics or on the size of the history falls off a cliff the
 * first time autovacuum runs.
 */
import type { BurstFigures } from "./results.js";
import { ratio } from "./stats.js";

export const VARIANTS = ["as-created", "analyzed", "history"] as const;
export type VariantName = (typeof VARIANTS)[number];

/** The most a variant may differ from another, in fires/s or p99 lateness. */
export const VARIANT_LIMIT = 1.5;

export function variantLabel(variant: VariantName, historyRuns: number): string {
  switch (variant) {
    case "as-created":
      return "as created";
    case "analyzed":
      return "after ANALYZE";
    case "history":
      return `with ${historyRuns.toLocaleString("en-US")} historic runs`;
  }
}

export interface VariantSpread {
  /** The variants compared (those measured). */
  readonly variants: readonly string[];
  /** Fastest / slowest fires/s (null with fewer than two rated rows). */
  readonly firesRatio: number | null;
  /** Worst / best p99 lateness. */
  readonly p99Ratio: number | null;
  /** Whether both ratios are within the limit (null when nothing could be compared). */
  readonly withinLimit: boolean | null;
  /**
   * A row that timed out is rated over the time waited, so its rate is an upper bound and the ratios
   * lower bounds: "at least".
   */
  readonly atLeast: boolean;
}

function spreadOf(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null && v > 0);
  if (known.length < 2) return null;
  return ratio(Math.max(...known), Math.min(...known));
}

/** How far apart the measured variants of one burst are. */
export function variantSpread(rows: readonly BurstFigures[]): VariantSpread {
  const measured = rows.filter((r) => r.variant !== undefined && r.unavailable === undefined);
  const firesRatio = spreadOf(measured.map((r) => r.firesPerSecond));
  // A timed-out row's p99 is unknown (null): it is at least the time waited.
  const p99s = measured.map((r) => (r.timedOut ? (r.waitedMs ?? null) : r.lateness.p99));
  const p99Ratio = spreadOf(p99s);
  const ratios = [firesRatio, p99Ratio].filter((v): v is number => v !== null);
  return {
    variants: measured.map((r) => r.variant ?? ""),
    firesRatio,
    p99Ratio,
    withinLimit: ratios.length === 0 ? null : ratios.every((v) => v <= VARIANT_LIMIT),
    atLeast: measured.some((r) => r.timedOut),
  };
}
