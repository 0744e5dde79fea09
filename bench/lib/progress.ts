/**
 * Progress lines while the bench runs: one line per phase step, with the time since the bench started,
 * so a slow phase shows where it is stuck.
 */
const startedAt = Date.now();

function stamp(): string {
  return `${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s`;
}

/** Prints `[  12.3s] scope: message` on stderr (stdout carries the final table). */
export function progress(scope: string, message: string): void {
  process.stderr.write(`[${stamp()}] ${scope}: ${message}\n`);
}

/** Seconds since the bench started. */
export function elapsedSeconds(): number {
  return (Date.now() - startedAt) / 1000;
}

/** Formats a duration in ms as seconds with one decimal. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
