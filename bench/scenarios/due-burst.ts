/**
 * Scenario (a), due-burst (docs/benchmarks.md, issue 6): N once tasks due at one instant, no-op handlers; time
 * until all are launched, fires/s, lateness, duplicates and losses; then the same N jobs through pg-boss
 * and graphile-worker (2 worker processes each) on the same server. Repeated `--repeat` times (3 in a
 * full run), round by round; each system's row is its median run.
 */
import type { BenchConfig } from "../lib/config.js";
import { punctualBurst } from "../lib/punctual-burst.js";
import type { BurstFigures } from "../lib/results.js";
import { peerBurst } from "../peers/peer-run.js";
import { medianRun } from "../lib/median-run.js";

export const DUE_BURST = "due-burst";

export function onceInput(dueAt: number): unknown {
  return {
    title: "due-burst",
    schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
    target: { kind: "handler", name: "noop" },
  };
}

export async function dueBurst(config: BenchConfig): Promise<BurstFigures[]> {
  const systems: (() => Promise<BurstFigures>)[] = config.targets.map(
    (target) => () =>
      punctualBurst(config, target, {
        scenario: DUE_BURST,
        count: config.burstTasks,
        input: onceInput,
      }),
  );
  if (config.peers) {
    systems.push(() => peerBurst(config, "pg-boss", DUE_BURST, config.burstTasks));
    systems.push(() => peerBurst(config, "graphile-worker", DUE_BURST, config.burstTasks));
  }
  // Round by round, every system once per round, so that a slow spell of the machine falls on all of
  // them alike; each row is then the system's median run.
  const runs: BurstFigures[][] = systems.map(() => []);
  for (let round = 0; round < config.burstRepeat; round++) {
    for (const [i, system] of systems.entries()) runs[i]?.push(await system());
  }
  return runs.map(medianRun);
}
