/**
 * The bench's side of the peers: install them when missing, create their schemas, and enqueue the jobs
 * (a burst due at one instant) or the schedules (1,000 crons) before the workers are measured.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { progress } from "../lib/progress.js";
import { loadGraphileWorker, loadPgBoss } from "./modules.js";

const here = dirname(fileURLToPath(import.meta.url));

/** Installs bench/peers' dependencies (pg-boss 10.4.2, graphile-worker 0.17.3) unless present. */
export function ensurePeersInstalled(): void {
  const present = ["pg-boss", "graphile-worker"].every((name) =>
    existsSync(join(here, "node_modules", name, "package.json")),
  );
  if (present) return;
  progress(
    "peers",
    "installing pg-boss and graphile-worker into bench/peers (npm install --prefix bench/peers)",
  );
  const result = spawnSync("npm", ["install", "--prefix", here, "--no-audit", "--no-fund"], {
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error("npm install --prefix bench/peers failed");
}

const BATCH = 1_000;

/** Creates pg-boss's schema and queues; `jobs` are inserted into `queue`, `startAfter` = `dueAt`. */
export async function preparePgBoss(
  url: string,
  args: {
    queues: readonly string[];
    burst?: { queue: string; count: number; dueAt: number };
    cron?: readonly string[];
  },
): Promise<void> {
  const PgBoss = await loadPgBoss();
  const boss = new PgBoss({ connectionString: url, max: 4, supervise: false, schedule: false });
  boss.on("error", () => undefined);
  await boss.start();
  try {
    for (const queue of args.queues) await boss.createQueue(queue);
    for (const queue of args.cron ?? []) await boss.schedule(queue, "* * * * *", {}, { tz: "UTC" });
    const burst = args.burst;
    if (burst !== undefined) {
      const startAfter = new Date(burst.dueAt);
      for (let first = 0; first < burst.count; first += BATCH) {
        const jobs = Array.from({ length: Math.min(BATCH, burst.count - first) }, (_, i) => ({
          name: burst.queue,
          data: { k: `burst#${first + i}` },
          startAfter,
          retryLimit: 0,
        }));
        await boss.insert(jobs);
      }
    }
  } finally {
    await boss.stop({ graceful: false, wait: true, close: true });
  }
}

/** Migrates graphile-worker's schema and adds `count` jobs due at `dueAt`. */
export async function prepareGraphile(
  url: string,
  burst: { count: number; dueAt: number } | null,
): Promise<void> {
  const graphile = await loadGraphileWorker();
  const utils = await graphile.makeWorkerUtils({ connectionString: url });
  try {
    await utils.migrate();
    if (burst === null) return;
    const runAt = new Date(burst.dueAt);
    for (let first = 0; first < burst.count; first += BATCH) {
      const specs = Array.from({ length: Math.min(BATCH, burst.count - first) }, (_, i) => ({
        identifier: "noop",
        payload: { k: `burst#${first + i}` },
        runAt,
        maxAttempts: 1,
      }));
      await utils.addJobs(specs);
    }
  } finally {
    await utils.release();
  }
}
