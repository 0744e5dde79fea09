/**
 * Scenario (b1): 1,000 cron tasks due at the same second (docs/benchmarks.md: p99 lateness under 250 ms). punctual's
 * crons take a seconds field, so the tasks fire at a chosen second a few seconds ahead; the peers schedule
 * at minute granularity, so theirs fire at the next minute boundary (and take up to a minute to wait for:
 * they run in the full bench, or with `--peer-cron`).
 */
import type { BenchConfig } from "../lib/config.js";
import { punctualBurst } from "../lib/punctual-burst.js";
import type { BurstFigures } from "../lib/results.js";
import { peerCron } from "../peers/peer-run.js";

export const CRON_SECOND = "cron-second";

/** A cron firing at `dueAt`'s second of every minute: its next occurrence is `dueAt`. */
export function cronAtSecond(dueAt: number): unknown {
  const second = new Date(dueAt).getUTCSeconds();
  return {
    title: "cron-second",
    schedule: { type: "cron", cron: `${second} * * * * *`, timezone: "UTC" },
    target: { kind: "handler", name: "noop" },
  };
}

export async function cronSecond(config: BenchConfig): Promise<BurstFigures[]> {
  const rows: BurstFigures[] = [];
  for (const target of config.targets) {
    rows.push(
      await punctualBurst(config, target, {
        scenario: CRON_SECOND,
        count: config.cronTasks,
        input: cronAtSecond,
      }),
    );
  }
  if (config.peerCron) {
    rows.push(await peerCron(config, "pg-boss", CRON_SECOND, config.cronTasks));
    rows.push(await peerCron(config, "graphile-worker", CRON_SECOND, config.cronTasks));
  }
  return rows;
}
