/**
 * How the bench runs each peer: the settings its own documentation gives for throughput and promptness,
 * stated once, written into the results and shown under the table, so the comparison can be read and
 * reproduced.
 */

export const PEERS = ["graphile-worker", "pg-boss", "bullmq"] as const;
export type PeerName = (typeof PEERS)[number];

export interface PeerWorkerConfig {
  readonly peer: PeerName;
  /** PostgreSQL database (pg-boss, graphile-worker) or Redis server (bullmq). */
  readonly url: string;
  readonly ledger: string;
  readonly workerId: string;
  readonly mode: "burst" | "cron";
  /** pg-boss: the queues to work (cron: one queue per schedule, as pg-boss 10 keys schedules by queue). */
  readonly queues: readonly string[];
  /** graphile-worker cron items (cron mode). */
  readonly cronItems: number;
  /** bullmq: the key prefix of this run's queue (a fresh one per run, removed afterwards). */
  readonly prefix?: string;
}

export const PEER_SETTINGS = {
  "pg-boss": {
    burst: {
      // pg-boss 10 fetches up to `batchSize` jobs per poll, hands them to the handler as one array and
      // completes them in one statement; each work() loop waits `pollingIntervalSeconds` (at least 0.5)
      // between fetches, so its rate is capped at batchSize x loops / interval per process. These values
      // lift that cap (8,000 jobs/s per process) above what the database sustains here, so the database
      // is the limit; with batchSize 100 x 4 loops pg-boss measured 1,600/s, with 1000 x 4 about 8,800/s.
      batchSize: 1000,
      pollingIntervalSeconds: 0.5,
      /** work() loops per process. */
      workers: 4,
    },
    cron: {
      batchSize: 1,
      pollingIntervalSeconds: 2,
      workers: 1,
      // The tightest allowed (defaults 30 s and 5 s): cron jobs are sent as soon as pg-boss allows.
      cronMonitorIntervalSeconds: 1,
      cronWorkerIntervalSeconds: 1,
    },
    poolSize: 10,
  },
  "graphile-worker": {
    // graphile-worker's own performance page (worker.graphile.org/docs/performance, "Quick stats") runs
    // concurrentJobs 24, maxPoolSize 25 and its batching: a local queue (a pool fetches and locks up to
    // `localQueue.size` jobs in one statement and serves its workers from memory) and batched
    // completions. The local queue is at 1000 rather than its 500 (both measured alike here); the
    // batch delays at 250 ms, where the option's own documentation says to start (0 on that page).
    // Tried here on 10,000 jobs, 2 processes: completions unbatched (-1) 6,300 jobs/s, 0 ms
    // 15,600-19,100, 250 ms 20,800-22,500.
    concurrency: 24,
    poolSize: 25,
    localQueue: { size: 1000 },
    completeJobBatchDelay: 250,
    failJobBatchDelay: 250,
    // Jobs due in the future are found by polling (default 2000 ms); LISTEN covers jobs due now.
    pollInterval: 200,
  },
  bullmq: {
    // BullMQ's worker guide sets a concurrency factor for asynchronous handlers (its example: 50) and
    // leaves the value to the handler's nature; a no-op handler is bound by Redis round trips, so more
    // jobs in flight keep Redis busy. Tried here on 10,000 delayed jobs, 2 processes: 50, 100 and 500
    // per process measured 3,400-6,800, 3,100-4,200 and 3,800-7,400 jobs/s; 500 was never the slowest.
    concurrency: 500,
    // Delayed jobs are BullMQ's way to say "due at one instant"; completed jobs are removed at once (its
    // auto-removal guide), so Redis keeps only the queue, as the SQL peers delete or archive theirs.
    removeOnComplete: true,
    attempts: 1,
  },
} as const;

/** One line per peer for the table's notes: the settings in force. */
export function peerSettingsNote(peer: PeerName): string {
  switch (peer) {
    case "graphile-worker": {
      const s = PEER_SETTINGS["graphile-worker"];
      return (
        `graphile-worker 0.17.3: \`localQueue.size\` ${s.localQueue.size}, \`completeJobBatchDelay\` ` +
        `${s.completeJobBatchDelay}, \`failJobBatchDelay\` ${s.failJobBatchDelay}, concurrency ` +
        `${s.concurrency} and pool ${s.poolSize} per process (its performance page's concurrency), ` +
        `\`pollInterval\` ${s.pollInterval} ms`
      );
    }
    case "pg-boss": {
      const s = PEER_SETTINGS["pg-boss"].burst;
      return (
        `pg-boss 10.4.2: ${s.workers} \`work()\` loops per process, \`batchSize\` ${s.batchSize}, ` +
        `\`pollingIntervalSeconds\` ${s.pollingIntervalSeconds} (its minimum), pool ${PEER_SETTINGS["pg-boss"].poolSize}`
      );
    }
    case "bullmq": {
      const s = PEER_SETTINGS.bullmq;
      return (
        `BullMQ 6.7.0 on Redis 127.0.0.1:6379: worker concurrency ${s.concurrency} per process, delayed ` +
        `jobs added with \`addBulk\`, \`removeOnComplete\`; this Redis keeps nothing on disk (no RDB, no AOF), ` +
        `so a crash of it loses every job, which the PostgreSQL schedulers never do`
      );
    }
  }
}
