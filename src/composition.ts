/**
 * The composition root: the one place that builds adapters (stores, launchers, clock, logger) and hands
 * them to the services and the coordinator. The library's `createScheduler` and the CLI both come here.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Actor } from "./application/actor.js";
import { LOCAL_ACTOR } from "./application/actor.js";
import { DispatchService } from "./application/dispatch-service.js";
import type { Store } from "./application/store.js";
import { TaskService } from "./application/task-service.js";
import type { CreatedTask } from "./application/task-service.js";
import type { RunView, TaskView } from "./application/views.js";
import { HandlerLauncher } from "./adapters/launchers/handler/handler-launcher.js";
import type { Handler } from "./adapters/launchers/handler/handler-launcher.js";
import { createLogHandler } from "./adapters/launchers/handler/log-handler.js";
import { openPostgresStore, WAKE_CHANNEL } from "./adapters/storage/postgres/postgres-store.js";
import type { PostgresPool } from "./adapters/storage/postgres/postgres-pool.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "./adapters/storage/sqlite/sqlite-store.js";
import { createMemoryStore } from "./adapters/storage/memory/memory-store.js";
import type { CatchUpPolicy, SchedulePolicy } from "./domain/options.js";
import { DEFAULT_POLICY } from "./domain/options.js";
import type { Page, RunLauncher, RunQuery, TaskQuery, ThreadLookup } from "./domain/ports.js";
import type { DescribedOccurrence } from "./domain/schedule/schedule-spec.js";
import type { DurationMs } from "./domain/time.js";
import { SystemClock } from "./runtime/clock.js";
import type { Clock } from "./runtime/clock.js";
import { Coordinator } from "./runtime/coordinator.js";
import type { CoordinatorOptions } from "./runtime/coordinator.js";
import type { Logger } from "./application/logger.js";
import { silentLogger } from "./application/logger.js";
import { WakeSignal } from "./runtime/wake-signal.js";

/** An opened store plus what its database offers the runtime beyond the ports. */
export interface OpenedStore {
  readonly store: Store;
  /** Measures `database clock - local clock` in ms (PostgreSQL). */
  readonly measureClockOffset?: () => Promise<number>;
  /** Calls `onWake` whenever another replica signals new work (PostgreSQL LISTEN); returns a stop function. */
  readonly subscribeWake?: (onWake: () => void) => Promise<() => Promise<void>>;
}

/** How to open a store; made by `sqlite()`, `postgres()` or `memoryStore()`. */
export interface StoreFactory {
  readonly kind: "memory" | "sqlite" | "postgres";
  open(options: { newId: () => string }): Promise<OpenedStore>;
}

/** An embedded SQLite database file (created if missing), or `":memory:"`. @default "punctual.db" */
export function sqlite(path = "punctual.db"): StoreFactory {
  return {
    kind: "sqlite",
    open: async ({ newId }) => ({ store: await openSqliteStore({ path, newId }) }),
  };
}

/** A PostgreSQL database, by connection string or a `pg.Pool` you own. */
export function postgres(
  target: string | PostgresPool,
  options: { schema?: string } = {},
): StoreFactory {
  return {
    kind: "postgres",
    open: async ({ newId }) => {
      const store = await openPostgresStore({
        newId,
        ...(typeof target === "string" ? { url: target } : { pool: target }),
        ...(options.schema === undefined ? {} : { schema: options.schema }),
      });
      return {
        store,
        measureClockOffset: async () => {
          const before = Date.now();
          const db = await store.dbNow();
          const after = Date.now();
          return db - (before + after) / 2;
        },
        subscribeWake: async (onWake) => {
          const listener = await store.listen(WAKE_CHANNEL, () => {
            onWake();
          });
          return () => listener.close();
        },
      };
    },
  };
}

/** An in-memory store: nothing survives the process (tests, `punctual/testing`). */
export function memoryStore(): StoreFactory {
  return {
    kind: "memory",
    open: ({ newId }) => Promise.resolve({ store: createMemoryStore({ newId }) }),
  };
}

/** Operator thresholds (SPEC 2, 5.3). */
export interface PolicyOptions {
  /** Runs launching or running across all tasks and replicas at most. @default 16 */
  readonly maxConcurrentRuns?: number;
  /** A launch claim's lease, and the silence after which a replica is lost. @default 60 */
  readonly leaseSeconds?: number;
  /** A once task must be at least this far in the future. @default 0 */
  readonly minOnceDelaySeconds?: number;
}

export interface SchedulerOptions {
  readonly store: StoreFactory;
  /** In-process handler targets by name; `log` is built in. */
  readonly handlers?: Readonly<Record<string, Handler>>;
  readonly policy?: PolicyOptions;
  /** A pino logger or anything with the same methods. */
  readonly logger?: Logger;
  /** The clock (a `VirtualClock` from `punctual/testing` replays time). @default the system clock */
  readonly clock?: Clock;
  /** Launchers for `agent` and `webhook` targets. */
  readonly launchers?: { readonly agent?: RunLauncher; readonly webhook?: RunLauncher };
  readonly threads?: ThreadLookup;
  readonly coordinator?: CoordinatorOptions;
  /** This process's replica id. @default hostname + random suffix */
  readonly replicaId?: string;
  /** Who the library acts as. @default owner `local` */
  readonly actor?: Actor;
}

export function buildPolicy(options: PolicyOptions = {}): SchedulePolicy {
  const positive = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative number`);
    return value;
  };
  const maxConcurrentRuns = positive(
    options.maxConcurrentRuns,
    DEFAULT_POLICY.maxConcurrentRuns,
    "maxConcurrentRuns",
  );
  if (!Number.isInteger(maxConcurrentRuns) || maxConcurrentRuns < 1) {
    throw new RangeError("maxConcurrentRuns must be a positive integer");
  }
  return {
    ...DEFAULT_POLICY,
    maxConcurrentRuns,
    leaseMs: (positive(options.leaseSeconds, DEFAULT_POLICY.leaseMs / 1000, "leaseSeconds") *
      1000) as DurationMs,
    minOnceDelayMs: (positive(options.minOnceDelaySeconds, 0, "minOnceDelaySeconds") *
      1000) as DurationMs,
  };
}

/** Routes each run to the launcher of its target kind. */
class RoutingLauncher implements RunLauncher {
  constructor(
    readonly handler: RunLauncher,
    readonly others: { readonly agent?: RunLauncher; readonly webhook?: RunLauncher },
  ) {}

  #for(kind: "agent" | "webhook" | "handler"): RunLauncher | undefined {
    return kind === "handler" ? this.handler : this.others[kind];
  }

  launch: RunLauncher["launch"] = (request) => {
    const launcher = this.#for(request.task.target.kind);
    if (launcher === undefined) {
      return Promise.reject(new Error(`no launcher for ${request.task.target.kind} targets`));
    }
    return launcher.launch(request);
  };

  cancel: RunLauncher["cancel"] = async (run, task) => {
    await this.#for(task.target.kind)?.cancel(run, task);
  };

  reconcile: RunLauncher["reconcile"] = async (run, task, signal) => {
    const launcher = this.#for(task.target.kind);
    return launcher === undefined ? { kind: "unknown" } : launcher.reconcile(run, task, signal);
  };
}

/** Threads of handler and webhook targets are punctual's own labels: any well-formed id is usable. */
const localThreads: ThreadLookup = {
  threadExists: (_owner, scope) => Promise.resolve(!scope.startsWith("agent:")),
};

/** The running parts of a scheduler, built once its store is open. */
export interface SchedulerRuntime {
  readonly store: Store;
  readonly opened: OpenedStore;
  readonly tasks: TaskService;
  readonly dispatch: DispatchService;
  readonly coordinator: Coordinator;
  readonly clock: Clock;
}

/** Builds the services and the coordinator around an opened store. */
export async function buildRuntime(options: SchedulerOptions): Promise<SchedulerRuntime> {
  const clock = options.clock ?? new SystemClock();
  const logger = options.logger ?? silentLogger;
  const policy = buildPolicy(options.policy);
  const newId = createIdGenerator(() => clock.now());
  const opened = await options.store.open({ newId });
  const store = opened.store;
  await store.migrate();
  const handlers = new HandlerLauncher({ log: createLogHandler(logger), ...options.handlers });
  const launcher = new RoutingLauncher(handlers, options.launchers ?? {});
  const wake = new WakeSignal();
  const dispatch = new DispatchService({ store, policy });
  const replicaId = options.replicaId ?? `${hostname()}-${randomBytes(4).toString("hex")}`;
  const clockOffset = opened.measureClockOffset;
  const coordinator = new Coordinator({
    dispatch,
    launcher,
    clock,
    replicaId,
    handlerNames: handlers.names,
    logger,
    wake,
    options: {
      ...options.coordinator,
      ...(clockOffset === undefined ? {} : { measureClockOffset: clockOffset }),
    },
    ...(clock instanceof SystemClock
      ? {
          applyClockOffset: (ms: number) => {
            clock.setOffset(ms);
          },
        }
      : {}),
  });
  handlers.connect({
    completed: (runId, verdict) => coordinator.reportCompletion(runId, verdict),
    lost: (runId) => coordinator.reportLost(runId),
    heartbeat: async (runId) => {
      await dispatch.recordHeartbeat(runId, clock.now());
    },
  });
  const tasks = new TaskService({
    store,
    threads: options.threads ?? localThreads,
    policy,
    newId,
    newSecret: () => randomBytes(32).toString("base64url"),
    handlerNames: handlers.names,
    agentServers: null,
    signals: {
      wake: () => {
        wake.wake();
      },
      cancelRequested: (run, task) => {
        coordinator.requestCancel(run, task);
      },
    },
  });
  return { store, opened, tasks, dispatch, coordinator, clock };
}

/** The library's scheduler (SPEC 7.1). */
export interface Scheduler {
  /** Opens the store (applying migrations) and starts the coordinator. */
  start(): Promise<void>;
  /** Stops the coordinator (draining launches) and closes the store. Idempotent. */
  stop(): Promise<void>;
  readonly tasks: {
    create(input: unknown): Promise<CreatedTask>;
    get(id: string): Promise<TaskView>;
    list(query?: Partial<TaskQuery>): Promise<Page<TaskView>>;
    update(id: string, patch: unknown, options?: { version?: number }): Promise<CreatedTask>;
    pause(id: string, options?: { cancelRunning?: boolean }): Promise<TaskView>;
    resume(id: string, options?: { catchUp?: CatchUpPolicy }): Promise<TaskView>;
    cancel(id: string): Promise<TaskView>;
    trigger(id: string, options?: { idempotencyKey?: string }): Promise<RunView>;
    backfill(
      id: string,
      range: { from: string; to: string },
    ): Promise<{ runs: RunView[]; already_backfilled: number }>;
    delete(id: string, options?: { force?: boolean }): Promise<void>;
    preview(id: string, count?: number): Promise<DescribedOccurrence[]>;
    runs(id: string, query?: Partial<RunQuery>): Promise<Page<RunView>>;
  };
  readonly runs: {
    get(id: string): Promise<RunView>;
    cancel(id: string): Promise<RunView>;
  };
  /** The built runtime (opens the store on first use). */
  runtime(): Promise<SchedulerRuntime>;
}

/** Creates a scheduler; nothing happens until `start()` or the first call. */
export function createScheduler(options: SchedulerOptions): Scheduler {
  let built: Promise<SchedulerRuntime> | null = null;
  let stopping: Promise<void> | null = null;
  let unsubscribe: (() => Promise<void>) | null = null;
  const actor = options.actor ?? LOCAL_ACTOR;
  const runtime = (): Promise<SchedulerRuntime> => (built ??= buildRuntime(options));
  const use = async <T>(fn: (rt: SchedulerRuntime) => Promise<T>): Promise<T> =>
    fn(await runtime());

  return {
    runtime,
    start: async () => {
      const rt = await runtime();
      if (unsubscribe === null && rt.opened.subscribeWake !== undefined) {
        unsubscribe = await rt.opened.subscribeWake(() => {
          rt.coordinator.wakeSignal.wake();
        });
      }
      rt.coordinator.start();
    },
    stop: () =>
      (stopping ??= (async () => {
        if (built === null) return;
        const rt = await built;
        await rt.coordinator.stop();
        if (unsubscribe !== null) await unsubscribe();
        await rt.store.close();
      })()),
    tasks: {
      create: (input) => use((rt) => rt.tasks.create(actor, input, rt.clock.now())),
      get: (id) => use((rt) => rt.tasks.get(actor, id)),
      list: (query = {}) => use((rt) => rt.tasks.list(actor, { limit: 50, ...query })),
      update: (id, patch, opts = {}) =>
        use((rt) => rt.tasks.update(actor, id, patch, opts.version ?? null, rt.clock.now())),
      pause: (id, opts = {}) => use((rt) => rt.tasks.pause(actor, id, opts, rt.clock.now())),
      resume: (id, opts = {}) => use((rt) => rt.tasks.resume(actor, id, opts, rt.clock.now())),
      cancel: (id) => use((rt) => rt.tasks.cancel(actor, id, rt.clock.now())),
      trigger: (id, opts = {}) => use((rt) => rt.tasks.trigger(actor, id, opts, rt.clock.now())),
      backfill: (id, range) => use((rt) => rt.tasks.backfill(actor, id, range, rt.clock.now())),
      delete: (id, opts = {}) => use((rt) => rt.tasks.delete(actor, id, opts, rt.clock.now())),
      preview: (id, count = 10) => use((rt) => rt.tasks.preview(actor, id, count, rt.clock.now())),
      runs: (id, query = {}) => use((rt) => rt.tasks.listRuns(actor, id, { limit: 50, ...query })),
    },
    runs: {
      get: (id) => use((rt) => rt.tasks.getRun(actor, id)),
      cancel: (id) => use((rt) => rt.tasks.cancelRun(actor, id, rt.clock.now())),
    },
  };
}
