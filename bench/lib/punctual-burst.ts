/**
 * A punctual burst: `count` tasks whose occurrence falls on one instant (once tasks for the due-burst,
 * second-precise crons for the 1,000-cron workload), created through the library while the replicas run
 * (`tasks.create` 32 in flight, or `tasks.createMany`), the database then brought into the variant's
 * state, and measured from that instant until every run is launched and finished. Duplicates, losses,
 * rates and lateness come from the handlers' ledger (the instrument the peers are measured with); the
 * runs table adds the launch bookkeeping and the final statuses. With `BENCH_WARM_OCCURRENCE=1` in the
 * environment, the crons' second occurrence (a minute later, the replicas warm) is the one measured.
 */
import type { WorkerStats } from "./child-protocol.js";
import type { BenchConfig, Target } from "./config.js";
import { burstWaitMs } from "./config.js";
import { burstTiming } from "./burst-timing.js";
import { Cluster, REPLICA_SETTINGS, REPLICAS_OF } from "./cluster.js";
import { analyzeAll, seedHistory } from "./history.js";
import { checkLedger, readLedgers } from "./ledger.js";
import type { LedgerEntry } from "./ledger.js";
import { CREATION_LABEL, CreationFailed, LibraryClient } from "./library.js";
import type { Creation, CreationMode } from "./library.js";
import { pace } from "./pace.js";
import { BackendCpuSampler } from "./proc-cpu.js";
import { progress } from "./progress.js";
import { countUnfinished, readRuns, statusCounts } from "./punctual-runs.js";
import type { BurstFigures, Enqueue, RoundTripFigures } from "./results.js";
import { cpuFigures, loopDelayOf } from "./results.js";
import type { StatementTiming } from "./statement-timing.js";
import { distribution } from "./stats.js";
import { variantLabel } from "./variants.js";
import type { VariantName } from "./variants.js";
import { cpuSecondsBetween } from "./workers.js";
import { sleepUntil, waitUntil, wholeSecondAfter } from "./wait.js";

export const TARGET_LABEL: Readonly<Record<Target, string>> = {
  sqlite: "punctual, SQLite (1 process)",
  pg1: "punctual, PostgreSQL, 1 replica",
  pg2: "punctual, PostgreSQL, 2 replicas",
};

const CREATION_SHORT: Readonly<Record<CreationMode, string>> = {
  create: "`tasks.create` ×32",
  createMany: "`tasks.createMany`",
};

/** The row's name: target, how the tasks were created, and the variant when it is not "as created". */
export function burstLabel(
  target: Target,
  creation: CreationMode,
  variant: VariantName,
  historyRuns: number,
): string {
  const parts = [TARGET_LABEL[target], CREATION_SHORT[creation]];
  if (variant !== "as-created") parts.push(variantLabel(variant, historyRuns));
  return parts.join(", ");
}

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
  readonly creation: CreationMode;
  readonly variant: VariantName;
}

/** A row for a burst that was not run, saying why. */
export function unavailableBurst(
  config: BenchConfig,
  target: Target,
  plan: BurstPlan,
  reason: string,
): BurstFigures {
  const empty = distribution([]);
  return {
    system: "punctual",
    target,
    variant: plan.variant,
    unavailable: reason,
    label: burstLabel(target, plan.creation, plan.variant, config.historyRuns),
    tasks: plan.count,
    dueAt: "",
    setupOverrunMs: 0,
    enqueue: { how: CREATION_LABEL[plan.creation], ms: null },
    allLaunchedMs: null,
    allCompletedMs: null,
    firesPerSecond: null,
    drainPerSecond: null,
    lateness: empty,
    handlerLateness: empty,
    executions: 0,
    duplicates: 0,
    losses: 0,
    pending: 0,
    unexpected: 0,
    statuses: null,
    perWorker: {},
    cpu: cpuFigures(0, null, 0),
    loopDelay: { p99Ms: null, maxMs: null },
    settings: null,
    timedOut: false,
  };
}

export interface BurstSetUp {
  readonly cluster: Cluster;
  readonly dueAt: number;
  /** The created tasks' ids. */
  readonly ids: readonly string[];
  readonly enqueue: Enqueue;
  /** Time spent between creation and the instant (ANALYZE, history), ms by step. */
  readonly preparation: Record<string, number>;
  /** How far the setup ran past the due instant (0: it ended before). */
  readonly overrunMs: number;
}

/**
 * Starts the target's replicas on a fresh store, brings it into the variant's state and creates the
 * burst's tasks through the library. The caller measures, then disposes of `cluster`.
 */
export async function setUpBurst(
  config: BenchConfig,
  target: Target,
  plan: BurstPlan,
  scope: string,
): Promise<BurstSetUp> {
  const cluster = await Cluster.create(config, plan.scenario, target);
  try {
    progress(scope, `starting ${REPLICAS_OF[target]} replica(s)`);
    await cluster.startReplicas(REPLICAS_OF[target]);
    const preparation: Record<string, number> = {};
    if (plan.variant === "history") {
      preparation["historyMs"] = (await seedHistory(cluster, config.historyRuns, scope)).ms;
    }
    const client = new LibraryClient(cluster.store);
    let created: Creation;
    const dueAt = wholeSecondAfter(pace.leadMs(target, plan.creation, plan.count));
    try {
      await client.open();
      const input = plan.input(dueAt);
      const inputs = Array.from({ length: plan.count }, () => input);
      created = await client.create(inputs, plan.creation, (n) => {
        if (n % 10_000 === 0) progress(scope, `created ${n}/${plan.count}`);
      });
    } catch (error) {
      // Plan the next attempt on the rate this one managed.
      if (error instanceof CreationFailed)
        pace.observe(target, plan.creation, error.created, error.ms);
      throw error;
    } finally {
      await client.close();
    }
    pace.observe(target, plan.creation, plan.count, created.ms);
    progress(
      scope,
      `created ${plan.count} tasks with ${CREATION_LABEL[plan.creation]} in ${created.ms} ms ` +
        `(${Math.round((plan.count / Math.max(1, created.ms)) * 1000)}/s)`,
    );
    if (plan.variant === "analyzed" && cluster.store.kind === "postgres") {
      preparation["analyzeMs"] = await analyzeAll(cluster.store.url);
    }
    const overrunMs = Math.max(0, Date.now() - dueAt);
    progress(
      scope,
      `due at ${new Date(dueAt).toISOString()}` +
        (overrunMs > 0 ? ` (setup overran the instant by ${overrunMs} ms)` : ""),
    );
    return {
      cluster,
      dueAt,
      ids: created.ids,
      enqueue: { how: CREATION_LABEL[plan.creation], ms: created.ms },
      preparation,
      overrunMs,
    };
  } catch (error) {
    await cluster.dispose();
    throw error;
  }
}

/**
 * The ledger entries of the burst: its occurrences, and anything else due from its instant on (which
 * would count as unexpected); the history variant's earlier template runs are not part of it.
 */
export function burstLedger(
  entries: readonly LedgerEntry[],
  expected: ReadonlySet<string>,
  dueAt: number,
): LedgerEntry[] {
  return entries.filter((e) => expected.has(e.occurrence) || e.dueAt >= dueAt);
}

/**
 * `setUpBurst`, once more on a fresh store when creation overran the instant it had planned for (the
 * machine slowed down): the second attempt plans on the rate the first one managed.
 */
export async function setUpBurstRetrying(
  config: BenchConfig,
  target: Target,
  plan: BurstPlan,
  scope: string,
): Promise<BurstSetUp> {
  try {
    return await setUpBurst(config, target, plan, scope);
  } catch (error) {
    if (!(error instanceof CreationFailed && error.overran)) throw error;
    progress(scope, `${error.message}; once more, planned on that rate`);
    return setUpBurst(config, target, plan, scope);
  }
}

export async function punctualBurst(
  config: BenchConfig,
  target: Target,
  plan: BurstPlan,
): Promise<BurstFigures> {
  const scope = `${plan.scenario} ${target} ${plan.creation} ${plan.variant}`;
  const setUp = await setUpBurstRetrying(config, target, plan, scope);
  const { cluster } = setUp;
  let dueAt = setUp.dueAt;
  try {
    if (process.env["BENCH_WARM_OCCURRENCE"] === "1" && plan.scenario === "cron-second") {
      // The crons' next occurrence, a minute later, by the same replicas: warm processes (their code
      // compiled, the definitions read), where a fresh replica's first burst pays for its warm-up.
      await waitUntil(async () => (await cluster.executed()) >= plan.count, {
        timeoutMs: burstWaitMs(config, plan.count),
        everyMs: 100,
      });
      dueAt += 60_000;
      // Measured from about a second before it, as the first occurrence is: not the idle minute.
      await sleepUntil(dueAt - 1500);
      progress(
        scope,
        `first occurrence done; measuring the next, at ${new Date(dueAt).toISOString()}`,
      );
    }
    const sampler =
      cluster.databaseName === null
        ? null
        : new BackendCpuSampler(config.adminUrl, cluster.databaseName);
    await sampler?.start();
    // The history variant's template runs are in the ledger already: count from here.
    const initial = await cluster.stats(true);
    const baseline = initial.reduce((sum, s) => sum + (s?.executed ?? 0), 0);
    const before = await cluster.cpu();
    await sleepUntil(dueAt);
    let executed = 0;
    const window = { from: dueAt, to: dueAt + 1 };
    const done = await waitUntil(
      async () => {
        executed = (await cluster.executed()) - baseline;
        return executed >= plan.count && (await countUnfinished(cluster.store, window)) === 0;
      },
      {
        timeoutMs: burstWaitMs(config, plan.count),
        everyMs: 100,
        onTick: () => {
          progress(
            scope,
            `executed ${executed}/${plan.count} (${((Date.now() - dueAt) / 1000).toFixed(1)} s)`,
          );
        },
      },
    );
    const stoppedAt = Date.now();
    const after = await cluster.cpu();
    const final = await cluster.stats(false);
    const databaseSeconds = (await sampler?.stop()) ?? null;
    await cluster.stopReplicas();
    progress(
      scope,
      done
        ? `all ${plan.count} executed and finished`
        : `timed out after ${((stoppedAt - dueAt) / 1000).toFixed(0)} s`,
    );

    const statements = reportStatements(scope, cluster);
    const runs = await readRuns(cluster.store, window);
    const expected = new Set(setUp.ids.map((id) => `${id}@${dueAt}`));
    const ledger = burstLedger(readLedgers(cluster.ledgers), expected, dueAt);
    const check = checkLedger(ledger, expected);
    const timing = burstTiming(
      ledger.map((e) => e.startedAt),
      dueAt,
      done,
      stoppedAt,
    );
    const finished = runs.flatMap((r) => (r.finishedAt === null ? [] : [r.finishedAt]));
    const lastFinish = finished.length === 0 ? null : Math.max(...finished);
    const perWorker: Record<string, number> = {};
    for (const entry of ledger) perWorker[entry.worker] = (perWorker[entry.worker] ?? 0) + 1;
    const lateness = distribution(ledger.map((e) => e.startedAt - e.dueAt));
    return {
      system: "punctual",
      target,
      variant: plan.variant,
      label: burstLabel(target, plan.creation, plan.variant, config.historyRuns),
      tasks: plan.count,
      dueAt: new Date(dueAt).toISOString(),
      setupOverrunMs: setUp.overrunMs,
      enqueue: setUp.enqueue,
      preparation: setUp.preparation,
      waitedMs: timing.waitedMs,
      allLaunchedMs: timing.allLaunchedMs,
      allCompletedMs: done && lastFinish !== null ? lastFinish - dueAt : null,
      firesPerSecond: timing.firesPerSecond,
      drainPerSecond: timing.drainPerSecond,
      lateness,
      handlerLateness: lateness,
      launchLateness: distribution(
        runs.flatMap((r) => (r.launchedAt === null ? [] : [r.launchedAt - r.fireAt])),
      ),
      executions: check.executions,
      duplicates: check.extraExecutions,
      losses: done ? check.losses : null,
      pending: done ? 0 : check.losses,
      unexpected: check.unexpected,
      statuses: statusCounts(runs),
      perWorker,
      cpu: cpuFigures(
        cpuSecondsBetween(before, after),
        databaseSeconds,
        ledger.length,
        sampler?.walBytes ?? null,
      ),
      statementsPerFire: statementsPerFire(initial, final, ledger.length),
      roundTrips: roundTripsPerThousand(initial, final, ledger.length),
      loopDelay: loopDelayOf(final),
      settings: { ...REPLICA_SETTINGS, replicas: REPLICAS_OF[target] },
      timedOut: !done,
      ...(statements.length === 0 ? {} : { statements }),
    };
  } finally {
    await cluster.dispose();
  }
}

/**
 * Statements, transactions and heartbeats the replicas sent and the kilobytes they read from PostgreSQL
 * between two readings, per 1,000 fires; null
 * when some replica did not count (SQLite, whose statements are not round trips).
 */
function roundTripsPerThousand(
  before: readonly (WorkerStats | null)[],
  after: readonly (WorkerStats | null)[],
  fires: number,
): RoundTripFigures | null {
  if (fires === 0 || before.length !== after.length) return null;
  const sum = { statements: 0, transactions: 0, heartbeats: 0, bytesReceived: 0 };
  for (let i = 0; i < after.length; i++) {
    const from = before[i];
    const to = after[i];
    for (const key of ["statements", "transactions", "heartbeats", "bytesReceived"] as const) {
      const a = from?.[key];
      const b = to?.[key];
      if (a === undefined || b === undefined) return null;
      sum[key] += b - a;
    }
  }
  const per = (n: number): number => Math.round((n / fires) * 10_000) / 10;
  return {
    statements: per(sum.statements),
    transactions: per(sum.transactions),
    heartbeats: per(sum.heartbeats),
    kbReceived: per(sum.bytesReceived / 1000),
  };
}

/** Statements the replicas sent between two readings, per fire; null when some replica did not count. */
function statementsPerFire(
  before: readonly (WorkerStats | null)[],
  after: readonly (WorkerStats | null)[],
  fires: number,
): number | null {
  if (fires === 0 || before.length !== after.length) return null;
  let sent = 0;
  for (let i = 0; i < after.length; i++) {
    const from = before[i]?.statements;
    const to = after[i]?.statements;
    if (from === undefined || to === undefined) return null;
    sent += to - from;
  }
  return Math.round((sent / fires) * 100) / 100;
}
