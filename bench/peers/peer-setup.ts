/**
 * The bench's side of the peers: install them when missing, create their schemas, and enqueue the jobs
 * (a burst due at one instant) or the schedules (1,000 crons) before the workers are measured.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { progress } from "../lib/progress.js";
import {
  bullConnection,
  loadBullMq,
  loadGraphileWorker,
  loadPgBoss,
  loadRedis,
} from "./modules.js";
import { PEER_SETTINGS } from "./peer-config.js";

const here = dirname(fileURLToPath(import.meta.url));

/** Installs bench/peers' dependencies (pg-boss, graphile-worker, BullMQ with ioredis) unless present. */
export function ensurePeersInstalled(): void {
  const present = ["pg-boss", "graphile-worker", "bullmq", "ioredis"].every((name) =>
    existsSync(join(here, "node_modules", name, "package.json")),
  );
  if (present) return;
  progress("peers", "installing the peers into bench/peers (npm install --prefix bench/peers)");
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

/** `count` delayed jobs due at `dueAt` on a BullMQ queue under `prefix` (the workers already wait on it). */
export async function prepareBullMq(
  url: string,
  prefix: string,
  queue: string,
  burst: { count: number; dueAt: number },
): Promise<void> {
  const bull = await loadBullMq();
  const q = new bull.Queue(queue, { connection: bullConnection(url), prefix });
  const settings = PEER_SETTINGS.bullmq;
  try {
    await q.waitUntilReady();
    for (let first = 0; first < burst.count; first += BATCH) {
      // `delay` counts from the call: each chunk's delay is taken when it is sent.
      const delay = Math.max(0, burst.dueAt - Date.now());
      await q.addBulk(
        Array.from({ length: Math.min(BATCH, burst.count - first) }, (_, i) => ({
          name: "noop",
          data: { k: `burst#${first + i}` },
          opts: {
            delay,
            removeOnComplete: settings.removeOnComplete,
            attempts: settings.attempts,
          },
        })),
      );
    }
  } finally {
    await q.close();
  }
}

/** Removes every key of a run's BullMQ queue. */
export async function removeBullMq(url: string, prefix: string, queue: string): Promise<void> {
  const bull = await loadBullMq();
  const q = new bull.Queue(queue, { connection: bullConnection(url), prefix });
  try {
    await q.obliterate({ force: true });
  } finally {
    await q.close();
  }
}

export interface RedisFacts {
  readonly version: string;
  readonly pid: number | null;
  /** RDB snapshots (`save`) and the append-only file: what the server keeps on disk. */
  readonly persistence: string;
}

/** The Redis server's version, process id (its CPU is read from /proc) and persistence settings. */
export async function redisFacts(url: string): Promise<RedisFacts> {
  const Redis = await loadRedis();
  const client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  client.on("error", () => undefined);
  try {
    const info = await client.info("server");
    const field = (name: string): string | undefined =>
      new RegExp(`^${name}:(.*)$`, "m").exec(info)?.[1]?.trim();
    const save = (await client.config("GET", "save"))[1] ?? "";
    const aof = (await client.config("GET", "appendonly"))[1] ?? "";
    const pid = Number(field("process_id"));
    return {
      version: field("redis_version") ?? "unknown",
      pid: Number.isInteger(pid) ? pid : null,
      persistence:
        save === "" && aof === "no"
          ? "none (no RDB snapshots, no AOF)"
          : `save "${save}", appendonly ${aof}`,
    };
  } finally {
    await client.quit();
  }
}
