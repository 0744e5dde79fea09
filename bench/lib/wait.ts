/** Bounded waits on observable conditions (never a fixed sleep standing in for a condition). */
import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

/** Sleeps until the wall clock reaches `at` (epoch ms). */
export async function sleepUntil(at: number): Promise<void> {
  const ms = at - Date.now();
  if (ms > 0) await sleep(ms);
}

/**
 * Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; `onTick` runs at most once
 * a second (progress). Returns whether the condition held.
 */
export async function waitUntil(
  check: () => Promise<boolean>,
  options: { timeoutMs: number; everyMs?: number; onTick?: () => void },
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  let lastTick = Date.now();
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    if (options.onTick !== undefined && Date.now() - lastTick >= 1000) {
      lastTick = Date.now();
      options.onTick();
    }
    await sleep(options.everyMs ?? 100);
  }
}

/** The first whole second at least `leadMs` from now. */
export function wholeSecondAfter(leadMs: number): number {
  return Math.ceil((Date.now() + leadMs) / 1000) * 1000;
}
