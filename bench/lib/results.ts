/** The shapes of the figures each scenario produces (what goes into the JSON files and the table). */
import type { Distribution } from "./stats.js";

export type SystemName = "punctual" | "pg-boss" | "graphile-worker" | "bullmq";

/** How the burst's tasks or jobs were put in before the due instant, and how long that took. */
export interface Enqueue {
  /** `tasks.create, 32 in flight`, `tasks.createMany, chunks of 1000`, `addJobs`, ... */
  readonly how: string;
  /** From the first call to the last answer; null when nothing was enqueued (row unavailable). */
  readonly ms: number | null;
}

export interface CpuFigures {
  /** CPU seconds of the scheduler's processes (punctual replicas or peer workers) over the window. */
  readonly processSeconds: number;
  /** CPU seconds of the PostgreSQL backends serving the scenario's database (null: not PostgreSQL). */
  readonly databaseSeconds: number | null;
  /**
   * Bytes of WAL the PostgreSQL server wrote over the window, and per fire (null: not PostgreSQL, or
   * unreadable). The database's write work, independent of the machine's load (docs/benchmarks.md).
   */
  readonly walBytes: number | null;
  readonly walBytesPerFire: number | null;
  /** Per 1,000 fires: processes, database, and both. */
  readonly perThousand: {
    readonly process: number | null;
    readonly database: number | null;
    readonly total: number | null;
  };
}

/** The worst event-loop delay of the scheduler's processes over the window (ms). */
export interface LoopDelay {
  /** Null when no worker answered at the end of the window (its event loop still busy). */
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

export function loopDelayOf(
  after: readonly ({ loopDelayP99Ms: number; loopDelayMaxMs: number } | null)[],
): LoopDelay {
  let p99Ms: number | null = null;
  let maxMs: number | null = null;
  for (const stats of after) {
    if (stats === null) continue;
    p99Ms = Math.max(p99Ms ?? 0, stats.loopDelayP99Ms);
    maxMs = Math.max(maxMs ?? 0, stats.loopDelayMaxMs);
  }
  return { p99Ms, maxMs };
}

export interface BurstFigures {
  readonly system: SystemName;
  /** punctual's PostgreSQL variants (docs/benchmarks.md): `as-created`, `analyzed`, `history`. */
  readonly variant?: string;
  /** Why the row was not measured (`createMany not available`); every figure is then empty. */
  readonly unavailable?: string;
  readonly enqueue?: Enqueue;
  /** Setup between creation and the due instant (`ANALYZE`, the history), ms. */
  readonly preparation?: Record<string, number>;
  /** How long the measurement waited from the due instant (the bound when it timed out). */
  readonly waitedMs?: number;
  /** punctual: `launched_at - fire_at` from its runs table (the headline lateness is the handler's). */
  readonly launchLateness?: Distribution;
  /** `sqlite`, `pg1`, `pg2`, or the peer's worker count (`pg2` = 2 worker processes). */
  readonly target: string;
  readonly label: string;
  readonly tasks: number;
  readonly dueAt: string;
  /** How far setup ran past the due instant (0 when the burst started clean). */
  readonly setupOverrunMs: number;
  /** From the due instant until the last launch / the last completion. */
  readonly allLaunchedMs: number | null;
  readonly allCompletedMs: number | null;
  /** Tasks / (last launch - due instant). */
  readonly firesPerSecond: number | null;
  /** Tasks / (last launch - first launch): the drain rate once started. */
  readonly drainPerSecond: number | null;
  /** Handler start - due instant (fire_at for punctual), from the ledger: one instrument for all. */
  readonly lateness: Distribution;
  /** Handler start - due instant, from the ledger, the same instrument for every system. */
  readonly handlerLateness: Distribution;
  readonly executions: number;
  readonly duplicates: number;
  /** Due occurrences never executed, once the system drained (null: it had not drained; see pending). */
  readonly losses: number | null;
  /** Due occurrences not executed when the measurement stopped (0 when drained). */
  readonly pending: number;
  readonly unexpected: number;
  readonly statuses: Record<string, number> | null;
  readonly perWorker: Record<string, number>;
  readonly cpu: CpuFigures;
  /**
   * SQL statements (round trips to the database) the replicas sent per fire, from just before the due
   * instant until the burst drained: punctual on PostgreSQL; absent for the peers and SQLite.
   */
  readonly statementsPerFire?: number | null;
  /**
   * Round trips per 1,000 fires over the same span (punctual on PostgreSQL): every statement, the
   * transactions among them (`BEGIN`) and the heartbeat writes.
   */
  readonly roundTrips?: RoundTripFigures | null;
  readonly loopDelay: LoopDelay;
  readonly settings: unknown;
  readonly timedOut: boolean;
  /**
   * When the burst was run several times (`--repeat`): fires/s of every run, in order. The row is then the
   * median run, except `duplicates` and `losses`, which count every run.
   */
  readonly repeats?: readonly (number | null)[];
  /** p99 lateness of every run, in the order of `repeats`. */
  readonly repeatP99s?: readonly (number | null)[];
  /** Client-side statement timings of the replicas (`--profile`). */
  readonly statements?: readonly {
    statement: string;
    count: number;
    totalMs: number;
    meanMs: number;
  }[];
}

export interface SteadyFigures {
  readonly system: "punctual";
  readonly target: string;
  readonly label: string;
  readonly tasks: number;
  readonly windowSeconds: number;
  readonly windowStart: string;
  /** Occurrences due in the window per the schedules, and those launched. */
  readonly expected: number;
  readonly launched: number;
  readonly firesPerSecond: number;
  readonly lateness: Distribution;
  readonly handlerLateness: Distribution;
  readonly duplicates: number;
  /** Due occurrences never executed, once the system drained (null: it had not drained; see pending). */
  readonly losses: number | null;
  /** Due occurrences not executed when the measurement stopped (0 when drained). */
  readonly pending: number;
  readonly unexpected: number;
  readonly statuses: Record<string, number>;
  readonly cpu: CpuFigures;
  readonly loopDelay: LoopDelay;
  readonly schedules: string;
  readonly statements?: readonly {
    statement: string;
    count: number;
    totalMs: number;
    meanMs: number;
  }[];
}

export interface IdleFigures {
  readonly system: "punctual";
  readonly target: string;
  readonly label: string;
  readonly tasks: number;
  readonly windowSeconds: number;
  /** CPU seconds per replica over the window, and as a percentage of one core. */
  readonly replicaCpuSeconds: readonly number[];
  readonly replicaCpuPercent: number;
  readonly databaseCpuSeconds: number | null;
  readonly databaseCpuPercent: number | null;
  readonly replicaRssMiB: readonly number[];
  readonly loopDelay: LoopDelay;
}

export function cpuFigures(
  processSeconds: number,
  databaseSeconds: number | null,
  fires: number,
  walBytes: number | null = null,
): CpuFigures {
  const per = (seconds: number | null): number | null =>
    seconds === null || fires === 0 ? null : Math.round((seconds / fires) * 1000 * 1000) / 1000;
  return {
    processSeconds: Math.round(processSeconds * 1000) / 1000,
    databaseSeconds: databaseSeconds === null ? null : Math.round(databaseSeconds * 1000) / 1000,
    walBytes,
    walBytesPerFire: walBytes === null || fires === 0 ? null : Math.round(walBytes / fires),
    perThousand: {
      process: per(processSeconds),
      database: per(databaseSeconds),
      total: per(processSeconds + (databaseSeconds ?? 0)),
    },
  };
}

/** Round trips to PostgreSQL per 1,000 fires (docs/benchmarks.md#how-it-measures). */
export interface RoundTripFigures {
  readonly statements: number;
  readonly transactions: number;
  readonly heartbeats: number;
  /** Kilobytes read from PostgreSQL (absent in results written before it was counted). */
  readonly kbReceived?: number;
}
