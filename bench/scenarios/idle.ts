/**
 * Scenario (c), idle: the CPU a replica spends holding many tasks of which none is due (docs/benchmarks.md: near
 * zero; a tick's cost grows with the due tasks, not with all tasks). SQLite holds 100,000 tasks, one
 * process; PostgreSQL holds 1,000,000, first with 1 replica and then, on the same database, with 2.
 * The SQLite replica and the first PostgreSQL replica are measured over the same window: each figure is
 * its own process's CPU time (and its own database's backends), which an idle neighbour does not change.
 */
import type { BenchConfig } from "../lib/config.js";
import { Cluster } from "../lib/cluster.js";
import type { WorkerStats } from "../lib/child-protocol.js";
import { BackendCpuSampler } from "../lib/proc-cpu.js";
import { progress } from "../lib/progress.js";
import { reportStatements, TARGET_LABEL } from "../lib/punctual-burst.js";
import type { IdleFigures } from "../lib/results.js";
import { loopDelayOf } from "../lib/results.js";
import { seedTasks } from "../lib/seed.js";
import type { TaskVariant } from "../lib/seed.js";
import { round } from "../lib/stats.js";
import { sleep } from "../lib/wait.js";
import type { Instant } from "../../src/domain/time.js";

export const IDLE = "idle";
/** After seeding or a start, before measuring: the first ticks, JIT and GC of a new process settle. */
const SETTLE_MS = 2500;

/** Daily crons and daily intervals whose next fire is about 12 hours away. */
function idleVariants(tasks: number, now: number): TaskVariant[] {
  // Whole seconds: `start_at` takes no fraction.
  const later = new Date(Math.floor(now / 1000) * 1000 + 12 * 3_600_000);
  const target = { kind: "handler", name: "noop" };
  const half = Math.floor(tasks / 2);
  return [
    {
      input: {
        title: "idle-cron",
        schedule: {
          type: "cron",
          cron: `${later.getUTCMinutes()} ${later.getUTCHours()} * * *`,
          timezone: "UTC",
        },
        target,
      },
      count: half,
    },
    {
      input: {
        title: "idle-interval",
        schedule: { type: "interval", every: "P1D", start_at: later.toISOString() },
        target,
      },
      count: tasks - half,
    },
  ];
}

interface Measured {
  readonly cluster: Cluster;
  readonly tasks: number;
  readonly target: "sqlite" | "pg1" | "pg2";
}

/** Measures every cluster over one window of `config.idleSeconds`. */
async function measure(config: BenchConfig, measured: readonly Measured[]): Promise<IdleFigures[]> {
  await sleep(SETTLE_MS);
  const samplers = measured.map(({ cluster }) =>
    cluster.databaseName === null
      ? null
      : new BackendCpuSampler(config.adminUrl, cluster.databaseName),
  );
  await Promise.all(samplers.map((s) => (s === null ? Promise.resolve() : s.start(1000))));
  // process.cpuUsage() over IPC (microseconds; /proc counts 10 ms ticks): idle replicas answer at once.
  const before = await Promise.all(measured.map(({ cluster }) => cluster.stats(true)));
  const startedAt = Date.now();
  progress(
    IDLE,
    `measuring ${config.idleSeconds} s: ${measured.map((m) => `${m.target} (${m.tasks} tasks)`).join(", ")}`,
  );
  await sleep(config.idleSeconds * 1000);
  const after = await Promise.all(measured.map(({ cluster }) => cluster.stats(false)));
  const wallSeconds = (Date.now() - startedAt) / 1000;
  const database = await Promise.all(
    samplers.map(async (s) => (s === null ? null : await s.stop())),
  );
  return measured.map(({ target, tasks }, m) => {
    const perReplica = (after[m] ?? []).map((s: WorkerStats | null, i) => {
      const start = before[m]?.[i];
      if (s === null || start === null || start === undefined)
        throw new Error("an idle replica did not answer");
      return (s.cpuMicros - start.cpuMicros) / 1e6;
    });
    const mean = perReplica.reduce((a, b) => a + b, 0) / Math.max(1, perReplica.length);
    const databaseSeconds = database[m] ?? null;
    progress(
      `${IDLE} ${target}`,
      `replica CPU ${perReplica.map((s) => `${s.toFixed(3)} s`).join(", ")}`,
    );
    return {
      system: "punctual" as const,
      target,
      label: TARGET_LABEL[target],
      tasks,
      windowSeconds: round(wallSeconds, 1),
      replicaCpuSeconds: perReplica.map((s) => round(s, 3)),
      replicaCpuPercent: round((mean / wallSeconds) * 100, 2),
      databaseCpuSeconds: databaseSeconds === null ? null : round(databaseSeconds, 3),
      databaseCpuPercent:
        databaseSeconds === null ? null : round((databaseSeconds / wallSeconds) * 100, 2),
      replicaRssMiB: (after[m] ?? []).map((s) => round((s?.rssBytes ?? 0) / 2 ** 20, 0)),
      loopDelay: loopDelayOf(after[m] ?? []),
    };
  });
}

async function seed(cluster: Cluster, tasks: number, scope: string): Promise<void> {
  const now = Date.now();
  let lastReport = now;
  await seedTasks(cluster.store, idleVariants(tasks, now), {
    now: now as Instant,
    keepIds: false,
    onBatch: (n) => {
      if (Date.now() - lastReport >= 5000) {
        lastReport = Date.now();
        progress(scope, `seeded ${n}/${tasks}`);
      }
    },
  });
  progress(scope, `seeded ${tasks} tasks in ${((Date.now() - now) / 1000).toFixed(1)} s`);
}

export async function idle(config: BenchConfig): Promise<IdleFigures[]> {
  const clusters: Cluster[] = [];
  try {
    const first: Measured[] = [];
    if (config.targets.includes("sqlite")) {
      const cluster = await Cluster.create(config, IDLE, "sqlite");
      clusters.push(cluster);
      await cluster.startReplicas(1);
      await seed(cluster, config.idleSqliteTasks, `${IDLE} sqlite`);
      first.push({ cluster, tasks: config.idleSqliteTasks, target: "sqlite" });
    }
    const postgres = config.targets.filter((t) => t !== "sqlite");
    let pg: Cluster | null = null;
    if (postgres.length > 0) {
      // One database for both: 1,000,000 tasks seeded once, then 1 replica, then a second beside it.
      pg = await Cluster.create(config, IDLE, "pg1");
      clusters.push(pg);
      await pg.startReplicas(1);
      await seed(pg, config.idlePostgresTasks, `${IDLE} postgres`);
      if (postgres.includes("pg1"))
        first.push({ cluster: pg, tasks: config.idlePostgresTasks, target: "pg1" });
    }
    const rows = first.length === 0 ? [] : await measure(config, first);
    if (pg !== null && postgres.includes("pg2")) {
      await pg.startReplicas(1);
      rows.push(
        ...(await measure(config, [
          { cluster: pg, tasks: config.idlePostgresTasks, target: "pg2" },
        ])),
      );
    }
    for (const cluster of clusters) {
      await cluster.stopReplicas();
      reportStatements(`${IDLE} ${cluster.target}`, cluster);
    }
    return rows;
  } finally {
    for (const cluster of clusters) await cluster.dispose();
  }
}
