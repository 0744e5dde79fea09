/**
 * The peers' side of the comparison: the same due-burst (jobs due at one instant) and the same 1,000-cron
 * workload, run through pg-boss and graphile-worker with 2 worker processes each, on a fresh database of
 * the same server, measured with the same ledger and CPU instruments as punctual.
 */
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { burstTiming } from "../lib/burst-timing.js";
import { burstWaitMs } from "../lib/config.js";
import type { BenchConfig } from "../lib/config.js";
import { createDatabase, createFolder, dropDatabase, removeFolder } from "../lib/databases.js";
import { checkLedger, readLedgers } from "../lib/ledger.js";
import type { LedgerEntry } from "../lib/ledger.js";
import { BackendCpuSampler, PidCpuSampler } from "../lib/proc-cpu.js";
import { progress } from "../lib/progress.js";
import type { BurstFigures } from "../lib/results.js";
import { cpuFigures, loopDelayOf } from "../lib/results.js";
import { distribution } from "../lib/stats.js";
import { sleepUntil, waitUntil, wholeSecondAfter } from "../lib/wait.js";
import { cpuOf, cpuSecondsBetween, WorkerProcess } from "../lib/workers.js";
import { PEER_SETTINGS } from "./peer-config.js";
import type { PeerName, PeerWorkerConfig } from "./peer-config.js";
import {
  prepareBullMq,
  prepareGraphile,
  preparePgBoss,
  redisFacts,
  removeBullMq,
} from "./peer-setup.js";

const here = dirname(fileURLToPath(import.meta.url));
const WORKER_MODULE = join(here, "peer-worker.ts");
const BURST_QUEUE = "noop";

const PEER_LABEL: Readonly<Record<PeerName, string>> = {
  "graphile-worker": "graphile-worker (local queue), PostgreSQL",
  "pg-boss": "pg-boss (batch fetch), PostgreSQL",
  bullmq: "BullMQ, Redis (in memory)",
};

interface PeerRun {
  readonly workers: WorkerProcess[];
  readonly ledgers: string[];
}

async function startWorkers(
  config: BenchConfig,
  peer: PeerName,
  base: Omit<PeerWorkerConfig, "ledger" | "workerId">,
  folder: string,
  scope: string,
): Promise<PeerRun> {
  const run: PeerRun = { workers: [], ledgers: [] };
  for (let i = 1; i <= config.peerWorkers; i++) {
    const ledger = join(folder, `ledger-w${i}.tsv`);
    const workerId = `${peer}-w${i}`;
    const worker = new WorkerProcess({
      module: WORKER_MODULE,
      config: { ...base, ledger, workerId },
      label: workerId,
    });
    run.workers.push(worker);
    run.ledgers.push(ledger);
  }
  await Promise.all(run.workers.map((w) => w.ready()));
  progress(scope, `${config.peerWorkers} worker processes ready`);
  return run;
}

async function executedBy(run: PeerRun): Promise<number> {
  const stats = await Promise.all(run.workers.map((w) => w.stats()));
  return stats.reduce((sum, s) => sum + s.executed, 0);
}

function perWorker(entries: readonly LedgerEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of entries) counts[entry.worker] = (counts[entry.worker] ?? 0) + 1;
  return counts;
}

function settingsOf(peer: PeerName, mode: "burst" | "cron", workers: number): unknown {
  if (peer === "pg-boss") {
    return {
      processes: workers,
      ...PEER_SETTINGS["pg-boss"][mode],
      poolSize: PEER_SETTINGS["pg-boss"].poolSize,
    };
  }
  return { processes: workers, ...PEER_SETTINGS[peer] };
}

const ENQUEUE_HOW: Readonly<Record<PeerName, string>> = {
  "pg-boss": "insert, 1,000 per call",
  "graphile-worker": "addJobs, 1,000 per call",
  bullmq: "addBulk, 1,000 per call",
};

/** `count` jobs due at one instant, 2 worker processes, no-op handler. */
export async function peerBurst(
  config: BenchConfig,
  peer: PeerName,
  scenario: string,
  count: number,
): Promise<BurstFigures> {
  const scope = `${scenario} ${peer}`;
  const database = peer === "bullmq" ? null : await createDatabase(`${scenario}_${peer}`);
  const folder = createFolder(`${scenario}-${peer}`);
  const prefix = `punctual-bench-${randomBytes(4).toString("hex")}`;
  const url = database?.url ?? config.redisUrl;
  let run: PeerRun | null = null;
  try {
    // The schema first (the workers would race to create it), then the workers, then the jobs.
    if (peer === "pg-boss") await preparePgBoss(url, { queues: [BURST_QUEUE] });
    if (peer === "graphile-worker") await prepareGraphile(url, null);
    const redis = peer === "bullmq" ? await redisFacts(url) : null;
    run = await startWorkers(
      config,
      peer,
      { peer, url, mode: "burst", queues: [BURST_QUEUE], cronItems: 0, prefix },
      folder,
      scope,
    );
    const dueAt = wholeSecondAfter(2000 + count * 0.4);
    const startedSetup = Date.now();
    if (peer === "pg-boss") {
      await preparePgBoss(url, { queues: [], burst: { queue: BURST_QUEUE, count, dueAt } });
    } else if (peer === "graphile-worker") {
      await prepareGraphile(url, { count, dueAt });
    } else {
      await prepareBullMq(url, prefix, BURST_QUEUE, { count, dueAt });
    }
    const enqueueMs = Date.now() - startedSetup;
    const overrun = Math.max(0, Date.now() - dueAt);
    progress(
      scope,
      `enqueued ${count} jobs in ${enqueueMs} ms; due at ${new Date(dueAt).toISOString()}`,
    );
    const sampler =
      database === null
        ? new PidCpuSampler(redis?.pid ?? null)
        : new BackendCpuSampler(config.adminUrl, database.name);
    await sampler.start();
    const workers = run.workers;
    await Promise.all(workers.map((w) => w.stats(true)));
    const before = await cpuOf(workers);
    await sleepUntil(dueAt);
    let executed = 0;
    const done = await waitUntil(
      async () => {
        executed = await executedBy(run!);
        return executed >= count;
      },
      {
        timeoutMs: burstWaitMs(config, count),
        everyMs: 100,
        onTick: () => {
          progress(
            scope,
            `executed ${executed}/${count} (${((Date.now() - dueAt) / 1000).toFixed(1)} s)`,
          );
        },
      },
    );
    const stoppedAt = Date.now();
    const after = await cpuOf(workers);
    const final = await Promise.all(workers.map((w) => w.tryStats(false, 10_000)));
    const databaseSeconds = await sampler.stop();
    await Promise.all(workers.map((w) => w.stop()));
    progress(scope, done ? `all ${count} executed` : "timed out");
    const ledger = readLedgers(run.ledgers).map((e) => ({ ...e, dueAt }));
    const expected = new Set(Array.from({ length: count }, (_, i) => `burst#${i}`));
    return burstFigures({
      peer,
      count,
      dueAt,
      overrun,
      stoppedAt,
      ledger,
      expected,
      enqueue: { how: ENQUEUE_HOW[peer], ms: enqueueMs },
      cpu: cpuFigures(
        cpuSecondsBetween(before, after),
        databaseSeconds,
        ledger.length,
        sampler.walBytes,
      ),
      loopDelay: loopDelayOf(final),
      settings: {
        ...(settingsOf(peer, "burst", config.peerWorkers) as object),
        ...(redis === null ? {} : { redis }),
      },
      timedOut: !done,
      workers: config.peerWorkers,
    });
  } finally {
    for (const worker of run?.workers ?? []) worker.kill();
    if (database !== null) await dropDatabase(database.name);
    else await removeBullMq(url, prefix, BURST_QUEUE).catch(() => undefined);
    removeFolder(folder);
  }
}

function burstFigures(args: {
  peer: PeerName;
  count: number;
  dueAt: number;
  overrun: number;
  stoppedAt: number;
  enqueue?: BurstFigures["enqueue"];
  ledger: readonly LedgerEntry[];
  expected: ReadonlySet<string>;
  cpu: BurstFigures["cpu"];
  loopDelay: BurstFigures["loopDelay"];
  settings: unknown;
  timedOut: boolean;
  workers: number;
}): BurstFigures {
  const { ledger, dueAt } = args;
  const check = checkLedger(ledger, args.expected);
  const timing = burstTiming(
    ledger.map((e) => e.startedAt),
    dueAt,
    !args.timedOut,
    args.stoppedAt,
  );
  const lateness = distribution(ledger.map((e) => e.startedAt - e.dueAt));
  return {
    system: args.peer,
    target: `pg${args.workers}`,
    label: `${PEER_LABEL[args.peer]}, ${args.workers} worker processes`,
    tasks: args.count,
    dueAt: new Date(dueAt).toISOString(),
    setupOverrunMs: args.overrun,
    ...(args.enqueue === undefined ? {} : { enqueue: args.enqueue }),
    allLaunchedMs: timing.allLaunchedMs,
    waitedMs: timing.waitedMs,
    // Completion is recorded by the peer after the handler; the ledger sees only the start.
    allCompletedMs: null,
    firesPerSecond: timing.firesPerSecond,
    drainPerSecond: timing.drainPerSecond,
    lateness,
    handlerLateness: lateness,
    executions: check.executions,
    duplicates: check.extraExecutions,
    losses: args.timedOut ? null : check.losses,
    pending: args.timedOut ? check.losses : 0,
    unexpected: check.unexpected,
    statuses: null,
    perWorker: perWorker(ledger),
    cpu: args.cpu,
    loopDelay: args.loopDelay,
    settings: args.settings,
    timedOut: args.timedOut,
  };
}

/**
 * 1,000 schedules firing every minute (`* * * * *`: both peers schedule at minute granularity), measured
 * for the first minute boundary after the workers are up: lateness = handler start - that minute.
 */
export async function peerCron(
  config: BenchConfig,
  peer: Exclude<PeerName, "bullmq">,
  scenario: string,
  count: number,
): Promise<BurstFigures> {
  const scope = `${scenario} ${peer}`;
  const database = await createDatabase(`${scenario}_${peer}`);
  const folder = createFolder(`${scenario}-${peer}`);
  let run: PeerRun | null = null;
  const queues = Array.from({ length: count }, (_, i) => `c${i}`);
  try {
    if (peer === "pg-boss") await preparePgBoss(database.url, { queues, cron: queues });
    else await prepareGraphile(database.url, null);
    run = await startWorkers(
      config,
      peer,
      {
        peer,
        url: database.url,
        mode: "cron",
        queues: peer === "pg-boss" ? queues : [],
        cronItems: count,
      },
      folder,
      scope,
    );
    if (peer === "pg-boss") {
      // pg-boss sends the previous minute's jobs when it starts (its cron looks 60 s back): let them
      // drain first, so the measured minute is not mixed with them.
      const workersRun = run;
      await waitUntil(async () => (await executedBy(workersRun)) >= count, {
        timeoutMs: 60_000,
        everyMs: 250,
      });
      progress(scope, "the start-up minute's jobs drained");
    }
    // The first boundary at least 3 s away, so every worker's cron loop is armed before it.
    const dueAt = Math.ceil((Date.now() + 3000) / 60_000) * 60_000;
    progress(
      scope,
      `${count} schedules; waiting for the minute at ${new Date(dueAt).toISOString()}`,
    );
    const sampler = new BackendCpuSampler(config.adminUrl, database.name);
    const workers = run.workers;
    await sleepUntil(dueAt - 1000);
    await sampler.start();
    const stats = await Promise.all(workers.map((w) => w.stats(true)));
    const before = await cpuOf(workers);
    const baseline = stats.reduce((sum, s) => sum + s.executed, 0);
    await sleepUntil(dueAt);
    let executed = 0;
    const done = await waitUntil(
      async () => {
        executed = (await executedBy(run!)) - baseline;
        return executed >= count;
      },
      {
        // Both peers send the minute's jobs within the minute; past it the next minute's fires mix in.
        timeoutMs: 58_000,
        everyMs: 100,
        onTick: () => {
          progress(
            scope,
            `executed ${executed}/${count} (${((Date.now() - dueAt) / 1000).toFixed(1)} s)`,
          );
        },
      },
    );
    const stoppedAt = Date.now();
    const after = await cpuOf(workers);
    const final = await Promise.all(workers.map((w) => w.tryStats(false, 10_000)));
    const databaseSeconds = await sampler.stop();
    await Promise.all(workers.map((w) => w.stop()));
    progress(scope, done ? `all ${count} executed` : "timed out");
    const ledger = readLedgers(run.ledgers)
      .filter((e) => e.startedAt >= dueAt && e.startedAt < dueAt + 60_000)
      .map((e) => ({ ...e, dueAt, occurrence: `${e.occurrence.split("@")[0] ?? ""}@${dueAt}` }));
    const expected = new Set(queues.map((q) => `${q}@${dueAt}`));
    return burstFigures({
      peer,
      count,
      dueAt,
      overrun: 0,
      stoppedAt,
      ledger,
      expected,
      cpu: cpuFigures(
        cpuSecondsBetween(before, after),
        databaseSeconds,
        ledger.length,
        sampler.walBytes,
      ),
      loopDelay: loopDelayOf(final),
      settings: settingsOf(peer, "cron", config.peerWorkers),
      timedOut: !done,
      workers: config.peerWorkers,
    });
  } finally {
    for (const worker of run?.workers ?? []) worker.kill();
    await dropDatabase(database.name);
    removeFolder(folder);
  }
}
