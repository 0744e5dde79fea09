/**
 * SIGTERM and SIGINT that arrive while a long-running command (`serve`, `worker`) is still loading its
 * modules, before it listens itself (docs/operations.md#what-happens-on-shutdown). `bin/punctual.js`
 * holds them from its first line, with nothing else imported; the command's own listener takes them
 * over and hears them as if they had just arrived, so a signal during startup stops the process
 * gracefully instead of killing it or being lost.
 */

const SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];
const pending: NodeJS.Signals[] = [];
let holding = false;

function hold(signal: NodeJS.Signals): void {
  pending.push(signal);
}

/** Starts holding SIGTERM and SIGINT (idempotent). */
export function holdEarlySignals(): void {
  if (holding) return;
  holding = true;
  for (const signal of SIGNALS) process.on(signal, hold);
}

/** Stops holding and hands over the signals that arrived meanwhile, oldest first. */
export function takeEarlySignals(): NodeJS.Signals[] {
  if (holding) {
    holding = false;
    for (const signal of SIGNALS) process.off(signal, hold);
  }
  return pending.splice(0);
}
