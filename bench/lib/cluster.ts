/**
 * A punctual deployment under test: a fresh store (a `punctual_bench_*` database or a SQLite file in a
 * temporary folder) and its replicas, each a child process running `replica.ts`.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ReplicaConfig } from "../replica.js";
import type { BenchConfig, Target } from "./config.js";
import { createDatabase, createFolder, dropDatabase, removeFolder } from "./databases.js";
import type { BenchDatabase } from "./databases.js";
import type { WorkerStats } from "./child-protocol.js";
import type { StoreTarget } from "./store-target.js";
import type { StatementTiming } from "./statement-timing.js";
import { cpuOf, WorkerProcess } from "./workers.js";

const here = dirname(fileURLToPath(import.meta.url));
const REPLICA_MODULE = join(here, "..", "replica.ts");
export const PROFILE_DIR = join(here, "..", "results", "profiles");
/** Where `--trace` writes each replica's timeline (bench/lib/replica-trace.ts). */
export const TRACE_DIR = join(here, "..", "results", "traces");

/**
 * The replicas' settings, the same in every scenario. The global budget is raised from its default (16)
 * so that a no-op burst is bounded by the store, not by a cap meant for slow agent runs; the coordinator
 * keeps its defaults (tick 1 s, admission batches of 500).
 */
export const REPLICA_SETTINGS = {
  maxConcurrentRuns: 500,
  // Only the shutdown differs from the defaults: replicas stop after the measurement, and a backlog
  // left by a target that could not keep up need not be drained for 10 s before the database is dropped.
  coordinator: { shutdownTimeoutMs: 2000 },
} as const;

export const REPLICAS_OF: Readonly<Record<Target, number>> = { sqlite: 1, pg1: 1, pg2: 2 };

export class Cluster {
  readonly target: Target;
  readonly store: StoreTarget;
  readonly replicas: WorkerProcess[] = [];
  readonly ledgers: string[] = [];
  readonly #folder: string;
  readonly #database: BenchDatabase | null;
  readonly #config: BenchConfig;
  readonly #label: string;

  private constructor(args: {
    target: Target;
    store: StoreTarget;
    folder: string;
    database: BenchDatabase | null;
    config: BenchConfig;
    label: string;
  }) {
    this.target = args.target;
    this.store = args.store;
    this.#folder = args.folder;
    this.#database = args.database;
    this.#config = args.config;
    this.#label = args.label;
  }

  /** A fresh store for `scenario` on `target`; no replica runs yet. */
  static async create(config: BenchConfig, scenario: string, target: Target): Promise<Cluster> {
    const label = `${scenario}-${target}`;
    const folder = createFolder(label);
    if (target === "sqlite") {
      const path = join(folder, "bench.db");
      return new Cluster({
        target,
        store: { kind: "sqlite", path },
        folder,
        database: null,
        config,
        label,
      });
    }
    const database = await createDatabase(`${scenario}_${target}`);
    return new Cluster({
      target,
      store: { kind: "postgres", url: database.url },
      folder,
      database,
      config,
      label,
    });
  }

  get databaseName(): string | null {
    return this.#database?.name ?? null;
  }

  /**
   * Starts `count` more replicas and waits until each runs. They start together: the store migrates
   * under its own lock (an advisory lock, a SQLite immediate transaction), so racing starts are safe.
   */
  async startReplicas(count: number): Promise<void> {
    const started: WorkerProcess[] = [];
    for (let i = 0; i < count; i++) {
      const index = this.replicas.length + 1;
      const replicaId = `${this.#label}-r${index}`;
      const ledger = join(this.#folder, `ledger-r${index}.tsv`);
      const replicaConfig: ReplicaConfig = {
        replicaId,
        store:
          this.store.kind === "sqlite"
            ? { kind: "sqlite", path: this.store.path }
            : { kind: "postgres", url: this.store.url },
        ledger,
        maxConcurrentRuns: REPLICA_SETTINGS.maxConcurrentRuns,
        coordinator: REPLICA_SETTINGS.coordinator,
        timeStatements: this.#config.profile,
        trace: this.#config.trace ? join(TRACE_DIR, `${replicaId}-${Date.now()}.json`) : null,
      };
      if (this.#config.trace) mkdirSync(TRACE_DIR, { recursive: true });
      const nodeFlags: string[] = [];
      if (this.#config.profile) {
        // One folder per replica: tsx's loader thread writes a profile of its own beside the main one.
        const dir = join(PROFILE_DIR, replicaId);
        mkdirSync(dir, { recursive: true });
        nodeFlags.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
      }
      const replica = new WorkerProcess({
        module: REPLICA_MODULE,
        config: replicaConfig,
        nodeFlags,
        label: replicaId,
      });
      this.replicas.push(replica);
      this.ledgers.push(ledger);
      started.push(replica);
    }
    await Promise.all(started.map((r) => r.ready()));
  }

  /**
   * Every replica's stats (null for one that did not answer within `timeoutMs`); `reset` starts their
   * event-loop-delay windows.
   */
  stats(reset: boolean, timeoutMs = 30_000): Promise<(WorkerStats | null)[]> {
    return Promise.all(this.replicas.map((r) => r.tryStats(reset, timeoutMs)));
  }

  /** Every replica's CPU seconds so far (from /proc: read on time even while a replica is busy). */
  cpu(): Promise<number[]> {
    return cpuOf(this.replicas);
  }

  async executed(): Promise<number> {
    const stats = await Promise.all(this.replicas.map((r) => r.stats()));
    return stats.reduce((sum, s) => sum + s.executed, 0);
  }

  async stopReplicas(): Promise<(WorkerStats | null)[]> {
    return Promise.all(this.replicas.map((r) => r.stop()));
  }

  /** The replicas' statement timings (with `--profile`), merged, slowest total first. */
  statementTimings(top = 12): StatementTiming[] {
    const merged = new Map<string, { count: number; totalMs: number }>();
    for (const ledger of this.ledgers) {
      const file = `${ledger}.statements.json`;
      if (!existsSync(file)) continue;
      for (const t of JSON.parse(readFileSync(file, "utf8")) as StatementTiming[]) {
        const entry = merged.get(t.statement) ?? { count: 0, totalMs: 0 };
        entry.count += t.count;
        entry.totalMs += t.totalMs;
        merged.set(t.statement, entry);
      }
    }
    return [...merged.entries()]
      .map(([statement, t]) => ({
        statement,
        count: t.count,
        totalMs: t.totalMs,
        meanMs: Math.round((t.totalMs / t.count) * 100) / 100,
      }))
      .sort((a, b) => b.totalMs - a.totalMs)
      .slice(0, top);
  }

  /** Kills what still runs and drops the store. */
  async dispose(): Promise<void> {
    for (const replica of this.replicas) replica.kill();
    if (this.#database !== null) await dropDatabase(this.#database.name);
    removeFolder(this.#folder);
  }
}
