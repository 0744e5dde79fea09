/**
 * Scenario (a), due-burst (SPEC 10, issue 6): N once tasks due at one instant, no-op handlers; time
 * until all are launched, fires/s, lateness, duplicates and losses; then the same N jobs through pg-boss
 * and graphile-worker (2 worker processes each) on the same server.
 */
import type { BenchConfig } from "../lib/config.js";
import { punctualBurst } from "../lib/punctual-burst.js";
import type { BurstFigures } from "../lib/results.js";
import { peerBurst } from "../peers/peer-run.js";

export const DUE_BURST = "due-burst";

export function onceInput(dueAt: number): unknown {
  return {
    title: "due-burst",
    schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
    target: { kind: "handler", name: "noop" },
  };
}

export async function dueBurst(config: BenchConfig): Promise<BurstFigures[]> {
  const rows: BurstFigures[] = [];
  for (const target of config.targets) {
    rows.push(
      await punctualBurst(config, target, {
        scenario: DUE_BURST,
        count: config.burstTasks,
        input: onceInput,
      }),
    );
  }
  if (config.peers) {
    rows.push(await peerBurst(config, "pg-boss", DUE_BURST, config.burstTasks));
    rows.push(await peerBurst(config, "graphile-worker", DUE_BURST, config.burstTasks));
  }
  return rows;
}
