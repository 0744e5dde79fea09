/**
 * How the bench runs each peer: the settings a user tuning for throughput and promptness would pick,
 * stated once and written into the results, so the comparison can be read and reproduced.
 */

export type PeerName = "pg-boss" | "graphile-worker";

export interface PeerWorkerConfig {
  readonly peer: PeerName;
  readonly url: string;
  readonly ledger: string;
  readonly workerId: string;
  readonly mode: "burst" | "cron";
  /** pg-boss: the queues to work (cron: one queue per schedule, as pg-boss 10 keys schedules by queue). */
  readonly queues: readonly string[];
  /** graphile-worker cron items (cron mode). */
  readonly cronItems: number;
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
    // As in graphile-worker's own performance test (website/docs/performance.md), batching off.
    concurrency: 24,
    // Jobs due in the future are found by polling (default 2000 ms); LISTEN covers jobs due now.
    pollInterval: 200,
    poolSize: 25,
  },
} as const;
