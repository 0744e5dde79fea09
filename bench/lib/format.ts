/** How figures read in the markdown table: one formatting per kind of figure, "–" for a missing one. */
import type { Distribution } from "./stats.js";

export const MISSING = "–";

/** Milliseconds, rounded. */
export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? MISSING : `${Math.round(value)}`;
}

/** Milliseconds as seconds with two decimals. */
export function sec(value: number | null | undefined): string {
  return value === null || value === undefined ? MISSING : (value / 1000).toFixed(2);
}

/** A count or rate with thousands separators, up to `digits` decimals. */
export function num(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined
    ? MISSING
    : value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

/** Losses, or how many had not run when the measurement stopped. */
export function lost(r: { losses: number | null; pending: number }): string {
  return r.losses === null ? `${MISSING} (${num(r.pending)} not yet run)` : num(r.losses);
}

export function late(d: Distribution): string {
  return `${ms(d.p50)} / ${ms(d.p99)} / ${ms(d.max)}`;
}

/** A ratio as `×1.23` (`≥ ×1.23` when it is a lower bound). */
export function times(value: number | null, atLeast = false): string {
  return value === null ? MISSING : `${atLeast ? "≥ " : ""}×${num(value, 2)}`;
}

/** A statuses map as `succeeded 9,990, failed:replica_lost 10`, largest first. */
export function counts(map: Readonly<Record<string, number>> | null): string {
  if (map === null) return MISSING;
  const entries = Object.entries(map).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? "none" : entries.map(([k, n]) => `${k} ${num(n)}`).join(", ");
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
