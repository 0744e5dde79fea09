/**
 * A punctual burst: `count` tasks whose occurrence falls on one instant (once tasks for the due-burst,
 * second-precise crons for the 1,000-cron workload), seeded while the replicas idle, then measured from
 * that instant until every run is launched and finished. Duplicates and losses come from the handlers'
 * ledger, lateness from the runs table (`launched_at - fire_at`).
 */
import type { BenchConfig, Target } from "./config.js";
import { Cluster, REPLICA_SETTINGS, REPLICAS_OF } from "./cluster.js";
import { checkLedger, readLedgers } from "./ledger.js";
import { BackendCpuSampler } from "./proc-cpu.js";
import { progress } from "./progress.js";
import { countUnfinished, readRuns, statusCounts } from "./punctual-runs.js";
import type { BurstFigures } from "./results.js";
import { cpuFigures, loopDelayOf } from "./results.js";
import { seedTasks } from "./seed.js";
import type { StatementTiming } from "./statement-timing.js";
import { distribution, round } from "./stats.js";
import { cpuSecondsBetween } from "./workers.js";
import { sleepUntil, waitUntil, wholeSecondAfter } from "./wait.js";
import type { Instant } from "../../src/domain/time.js";

export const TARGET_LABEL: Readonly<Record<Target, string>> = {
  sqlite: "punctual, SQLite (1 process)",
  pg1: "punctual, PostgreSQL, 1 replica",
  pg2: "punctual, PostgreSQL, 2 replicas",
};

/** Prints the replicas' slowest statements in total (with `--profile`) and returns them for the JSON. */
export function reportStatements(scope: string, cluster: Cluster): StatementTiming[] {
  const statements = cluster.statementTimings();
  for (const t of statements.slice(0, 8)) {
    progress(
      scope,
      `sql ${t.count}× ${t.meanMs} ms = ${t.totalMs} ms: ${t.statement.slice(0, 110)}`,
    );
  }
  return statements;
}

export interface BurstPlan {
  readonly scenario: string;
  readonly count: number;
  /** The task input whose occurrence falls on `dueAt`. */
  readonly input: (dueAt: number) => unknown;
}

/**
 * Time to insert the tasks before the instant, with room: the replicas already run, so only the insert
 * counts (about 20 rows/ms into SQLite and 8 into PostgreSQL on a loaded 2-core box).
 */
function leadMs(target: Target, count: number): number {
  return 700 + count * (target === "sqlite" ? 0.05 : 0.25);
}

export async function punctualBurst(
  config: BenchConfig,
  target: Target,
  plan: BurstPlan,
): Promise<BurstFigures> {
  const scope = `${plan.scenario} ${target}`;
  const cluster = await Cluster.create(config, plan.scenario, target);
  try {
    progress(scope, `starting ${REPLICAS_OF[target]} replica(s)`);
    await cluster.startReplicas(REPLICAS_OF[target]);
    const dueAt = wholeSecondAfter(leadMs(target, plan.count));
    const now = Date.now() as Instant;
    const seeded = await seedTasks(
      cluster.store,
      [{ input: plan.input(dueAt), count: plan.count }],
      {
        now,
        keepIds: true,
      },
    );
    const overrun = Math.max(0, Date.now() - dueAt);
    progress(
      scope,
      `seeded ${plan.count} tasks in ${Date.now() - now} ms; due at ${new Date(dueAt).toISOString()}` +
        (overrun > 0 ? ` (setup overran the instant by ${overrun} ms)` : ""),
    );
    const ids = seeded.flatMap((v) => v.ids);
    const sampler =
      cluster.databaseName === null
        ? null
        : new BackendCpuSampler(config.adminUrl, cluster.databaseName);
    await sampler?.start();
    await cluster.stats(true);
    const before = await cluster.cpu();
    await sleepUntil(dueAt);
    let executed = 0;
    const window = { from: dueAt, to: dueAt + 1 };
    const done = await waitUntil(
      async () => {
        executed = await cluster.executed();
        return executed >= plan.count && (await countUnfinished(cluster.store, window)) === 0;
      },
      {
        timeoutMs: (config.quick ? 30_000 : 60_000) + plan.count * 10,
        everyMs: 100,
        onTick: () => {
          progress(
            scope,
            `executed ${executed}/${plan.count} (${((Date.now() - dueAt) / 1000).toFixed(1)} s)`,
          );
        },
      },
    );
    const after = await cluster.cpu();
    const final = await cluster.stats(false);
    const databaseSeconds = (await sampler?.stop()) ?? null;
    await cluster.stopReplicas();
    progress(scope, done ? `all ${plan.count} executed and finished` : "timed out");

    const statements = reportStatements(scope, cluster);
    const runs = await readRuns(cluster.store, window);
    const ledger = readLedgers(cluster.ledgers);
    const check = checkLedger(ledger, new Set(ids.map((id) => `${id}@${dueAt}`)));
    const launched = runs.flatMap((r) => (r.launchedAt === null ? [] : [r.launchedAt]));
    const finished = runs.flatMap((r) => (r.finishedAt === null ? [] : [r.finishedAt]));
    const lastLaunch = launched.length === 0 ? null : Math.max(...launched);
    const firstLaunch = launched.length === 0 ? null : Math.min(...launched);
    const lastFinish = finished.length === 0 ? null : Math.max(...finished);
    const perWorker: Record<string, number> = {};
    for (const run of runs) {
      const by = run.claimedBy ?? "unclaimed";
      perWorker[by] = (perWorker[by] ?? 0) + 1;
    }
    const allLaunchedMs = lastLaunch === null ? null : lastLaunch - dueAt;
    return {
      system: "punctual",
      target,
      label: TARGET_LABEL[target],
      tasks: plan.count,
      dueAt: new Date(dueAt).toISOString(),
      setupOverrunMs: overrun,
      allLaunchedMs,
      allCompletedMs: lastFinish === null ? null : lastFinish - dueAt,
      firesPerSecond:
        allLaunchedMs === null || allLaunchedMs <= 0
          ? null
          : round((launched.length / allLaunchedMs) * 1000, 0),
      drainPerSecond:
        lastLaunch === null || firstLaunch === null || lastLaunch === firstLaunch
          ? null
          : round((launched.length / (lastLaunch - firstLaunch)) * 1000, 0),
      lateness: distribution(
        runs.flatMap((r) => (r.launchedAt === null ? [] : [r.launchedAt - r.fireAt])),
      ),
      handlerLateness: distribution(ledger.map((e) => e.startedAt - e.dueAt)),
      executions: check.executions,
      duplicates: check.extraExecutions,
      losses: done ? check.losses : null,
      pending: done ? 0 : check.losses,
      unexpected: check.unexpected,
      statuses: statusCounts(runs),
      perWorker,
      cpu: cpuFigures(cpuSecondsBetween(before, after), databaseSeconds, launched.length),
      loopDelay: loopDelayOf(final),
      settings: { ...REPLICA_SETTINGS, replicas: REPLICAS_OF[target] },
      timedOut: !done,
      ...(statements.length === 0 ? {} : { statements }),
    };
  } finally {
    await cluster.dispose();
  }
}
