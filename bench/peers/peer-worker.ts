/**
 * One peer worker process (pg-boss, graphile-worker or BullMQ) for the bench: the peer's own worker API
 * with a no-op handler that appends each execution to this process's ledger, like punctual's replica does.
 */
import { serveBench } from "../lib/child-protocol.js";
import { LedgerWriter } from "../lib/ledger.js";
import {
  bullConnection,
  loadBullMq,
  loadGraphileWorker,
  loadPgBoss,
  quietGraphileLogger,
} from "./modules.js";
import type { GraphileHelpers } from "./modules.js";
import { PEER_SETTINGS } from "./peer-config.js";
import type { PeerWorkerConfig } from "./peer-config.js";

const config = JSON.parse(process.argv[2] ?? "{}") as PeerWorkerConfig;
const ledger = new LedgerWriter(config.ledger, config.workerId);

async function startPgBoss(): Promise<() => Promise<void>> {
  const PgBoss = await loadPgBoss();
  const settings = PEER_SETTINGS["pg-boss"];
  const cron = config.mode === "cron";
  const boss = new PgBoss({
    connectionString: config.url,
    max: settings.poolSize,
    schedule: cron,
    ...(cron
      ? {
          cronMonitorIntervalSeconds: settings.cron.cronMonitorIntervalSeconds,
          cronWorkerIntervalSeconds: settings.cron.cronWorkerIntervalSeconds,
        }
      : {}),
  });
  boss.on("error", (error) => {
    process.stderr.write(`[${config.workerId}] pg-boss error: ${error.message}\n`);
  });
  await boss.start();
  const work = cron ? settings.cron : settings.burst;
  for (const queue of config.queues) {
    for (let i = 0; i < work.workers; i++) {
      await boss.work(
        queue,
        { batchSize: work.batchSize, pollingIntervalSeconds: work.pollingIntervalSeconds },
        (jobs) => {
          const now = Date.now();
          for (const job of jobs) {
            ledger.record({
              key: job.id,
              occurrence: job.data.k ?? queue,
              dueAt: 0,
              startedAt: now,
              attempt: 1,
            });
          }
          return Promise.resolve();
        },
      );
    }
  }
  return () => boss.stop({ graceful: true, wait: true, timeout: 20_000 });
}

async function startGraphile(): Promise<() => Promise<void>> {
  const graphile = await loadGraphileWorker();
  const settings = PEER_SETTINGS["graphile-worker"];
  const noop = (payload: unknown, helpers: GraphileHelpers): void => {
    const body = payload as { k?: string; _cron?: { ts?: string } };
    const cronAt = body._cron?.ts === undefined ? 0 : Date.parse(body._cron.ts);
    ledger.record({
      key: helpers.job.id,
      occurrence: body._cron === undefined ? (body.k ?? "") : `${body.k ?? ""}@${cronAt}`,
      dueAt: cronAt,
      startedAt: Date.now(),
      attempt: helpers.job.attempts,
    });
  };
  const cronItems =
    config.mode === "cron"
      ? graphile.parseCronItems(
          Array.from({ length: config.cronItems }, (_, i) => ({
            task: "noop",
            match: "* * * * *",
            identifier: `c${i}`,
            payload: { k: `c${i}` },
          })),
        )
      : [];
  const runner = await graphile.run({
    connectionString: config.url,
    concurrency: settings.concurrency,
    pollInterval: settings.pollInterval,
    maxPoolSize: settings.poolSize,
    noHandleSignals: true,
    taskList: { noop },
    parsedCronItems: cronItems,
    logger: quietGraphileLogger(graphile),
    // 0.17's batching options exist only in the preset form.
    preset: {
      worker: {
        localQueue: { size: settings.localQueue.size },
        completeJobBatchDelay: settings.completeJobBatchDelay,
        failJobBatchDelay: settings.failJobBatchDelay,
      },
    },
  });
  return () => runner.stop();
}

async function startBullMq(): Promise<() => Promise<void>> {
  const bull = await loadBullMq();
  const settings = PEER_SETTINGS.bullmq;
  const queue = config.queues[0] ?? "noop";
  const worker = new bull.Worker(
    queue,
    (job) => {
      ledger.record({
        key: job.id ?? "",
        occurrence: job.data.k ?? "",
        dueAt: 0,
        startedAt: Date.now(),
        attempt: job.attemptsMade + 1,
      });
      return Promise.resolve();
    },
    {
      connection: bullConnection(config.url),
      ...(config.prefix === undefined ? {} : { prefix: config.prefix }),
      concurrency: settings.concurrency,
    },
  );
  worker.on("error", (error) => {
    process.stderr.write(`[${config.workerId}] bullmq error: ${error.message}\n`);
  });
  await worker.waitUntilReady();
  return () => worker.close();
}

let stop: (() => Promise<void>) | null = null;
const bench = serveBench({
  executed: () => ledger.count,
  onStop: async () => {
    await stop?.();
    await ledger.close();
  },
});

try {
  const starters = {
    "pg-boss": startPgBoss,
    "graphile-worker": startGraphile,
    bullmq: startBullMq,
  };
  stop = await starters[config.peer]();
  bench.ready();
} catch (error) {
  bench.fail(error);
}
