/**
 * The composition root: the one place that builds adapters (stores, launchers, clock, logger) and hands
 * them to the services and the coordinator. The library's `createScheduler` and the CLI both come here.
 */
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Actor } from "./application/actor.js";
import { LOCAL_ACTOR } from "./application/actor.js";
import { DispatchService } from "./application/dispatch-service.js";
import type { Store } from "./application/store.js";
import { TaskService } from "./application/task-service.js";
import type { CreatedTask } from "./application/task-service.js";
import type { PutCalendarView } from "./application/calendar-service.js";
import type {
  CalendarView,
  ExplanationView,
  OccurrenceView,
  PageView,
  RunView,
  TaskView,
} from "./application/views.js";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { TokenService } from "./application/token-service.js";
import { buildHttpApp } from "./adapters/http/http-app.js";
import { IDEMPOTENCY_RETENTION_MS, IdempotencyPurger } from "./adapters/http/idempotency-purger.js";
import { SchedulerMetrics } from "./adapters/http/metrics.js";
import type { RateLimitOptions } from "./adapters/http/rate-limit.js";
import { HandlerLauncher } from "./adapters/launchers/handler/handler-launcher.js";
import type { Handler } from "./adapters/launchers/handler/handler-launcher.js";
import { createLogHandler } from "./adapters/launchers/handler/log-handler.js";
import { observationFromAgentRun } from "./adapters/launchers/agent/agent-observation.js";
import { buildTargets } from "./composition-targets.js";
import type { CallbackBase, TargetOptions } from "./composition-targets.js";
import { openPostgresStore, WAKE_CHANNEL } from "./adapters/storage/postgres/postgres-store.js";
import type { PostgresStore } from "./adapters/storage/postgres/postgres-store.js";
import type { PostgresListener } from "./adapters/storage/postgres/postgres-notifications.js";
import type { PostgresPool } from "./adapters/storage/postgres/postgres-pool.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "./adapters/storage/sqlite/sqlite-store.js";
import { createMemoryStore } from "./adapters/storage/memory/memory-store.js";
import type { CatchUpPolicy, SchedulePolicy } from "./domain/options.js";
import { DEFAULT_POLICY } from "./domain/options.js";
import type { Admission } from "./domain/admission.js";
import type { RunQuery, RunRepository, TaskQuery, TaskRepository } from "./domain/ports.js";
import type { Run, RunStatus, RunTrigger } from "./domain/run.js";
import type { TaskStatus } from "./domain/task.js";
import type { RunTaskContext } from "./domain/run-transitions.js";
import type { TargetKind } from "./domain/target.js";
import { threadId } from "./domain/ids.js";
import type { DurationMs } from "./domain/time.js";
import { SystemClock } from "./runtime/clock.js";
import type { Clock } from "./runtime/clock.js";
import { Coordinator } from "./runtime/coordinator.js";
import type { CoordinatorOptions } from "./runtime/coordinator.js";
import type { Logger } from "./application/logger.js";
import { silentLogger } from "./application/logger.js";
import { WakeSignal } from "./runtime/wake-signal.js";
import { RunWatcher } from "./runtime/run-watcher.js";
import type { RunWatcherOptions } from "./runtime/run-watcher.js";

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
        subscribeWake: (onWake) => listenForWakes(store, onWake),
      };
    },
  };
}

/**
 * LISTENs for wake-ups and keeps listening: when the connection dies (a database restart), it listens
 * again with back-off and wakes the coordinator once reconnected, for what it may have missed. Polling
 * at the tick covers the gap.
 */
async function listenForWakes(
  store: PostgresStore,
  onWake: () => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let listener: PostgresListener | null = null;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  const connect = async (): Promise<void> => {
    listener = await store.listen(WAKE_CHANNEL, onWake, {
      onError: () => {
        const dead = listener;
        listener = null;
        void dead?.close();
        retry();
      },
    });
    failures = 0;
  };
  const retry = (): void => {
    if (stopped) return;
    const delay = Math.min(30_000, 500 * 2 ** Math.min(failures++, 6));
    timer = setTimeout(() => {
      connect().then(onWake, retry);
    }, delay);
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await listener?.close();
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
  /** A once task must be at least this far in the future. @default 0 (1 in `createServer`) */
  readonly minOnceDelaySeconds?: number;
}

export interface SchedulerOptions extends TargetOptions {
  readonly store: StoreFactory;
  /** In-process handler targets by name; `log` is built in. */
  readonly handlers?: Readonly<Record<string, Handler>>;
  readonly policy?: PolicyOptions;
  /** A pino logger or anything with the same methods. */
  readonly logger?: Logger;
  /** The clock (a `VirtualClock` from `punctual/testing` replays time). @default the system clock */
  readonly clock?: Clock;
  readonly coordinator?: CoordinatorOptions;
  /** How running runs on agent servers are polled. @default every server's poll_interval_ms, at least */
  readonly watcher?: RunWatcherOptions;
  /** This process's replica id. @default hostname + random suffix */
  readonly replicaId?: string;
  /** Who the library acts as. @default owner `local` */
  readonly actor?: Actor;
  /** Receives the scheduler's numbers (decisions, claims, run changes, ticks), e.g. for `/metrics`. */
  readonly observer?: RuntimeObserver;
}

/** What the runtime reports for metrics; `SchedulerMetrics` of the HTTP adapter is one. */
export interface RuntimeObserver {
  observeAdmission(taskId: string, admission: Admission): void;
  observeAdmissionBatch(tasks: number): void;
  observeClaim(run: Run): void;
  /** A run whose status changed from `before`. */
  observeRun(run: Run, before: Run["status"] | null): void;
  observeTick(seconds: number): void;
  measureBudget(read: () => number): void;
}

/** Wraps a repository so `overrides` replace some of its methods (the others stay bound to it). */
function wrapMethods<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(object)
        : value;
    },
  });
}

/** The store, reporting admissions, claims and run changes to `observer` (behaviour unchanged). */
function observedStore(store: Store, observer: RuntimeObserver): Store {
  const tasks = store.tasks;
  const runs = store.runs;
  const observedTasks = wrapMethods<TaskRepository>(tasks, {
    admitDueTasks: async (now, limit, decide) => {
      const report = await tasks.admitDueTasks(now, limit, (task, active) => {
        const admission = decide(task, active);
        observer.observeAdmission(task.id, admission);
        return admission;
      });
      observer.observeAdmissionBatch(report.tasks);
      return report;
    },
  });
  const observedRuns = wrapMethods<RunRepository>(runs, {
    claimRuns: async (request, select, claim) => {
      const claimed = await runs.claimRuns(request, select, claim);
      for (const item of claimed) observer.observeClaim(item.run);
      return claimed;
    },
    changeRun: async (id, guard, decide) => {
      const seen: { before: Run["status"] | null } = { before: null };
      const change = await runs.changeRun(id, guard, (run, task) => {
        seen.before = run.status;
        return decide(run, task);
      });
      if (change !== null && seen.before !== change.run.status) {
        observer.observeRun(change.run, seen.before);
      }
      return change;
    },
    changeRuns: async (requests) => {
      const before = new Map<number, Run["status"]>();
      const results = await runs.changeRuns(
        requests.map((request, i) => ({
          ...request,
          decide: (run: Run, task: RunTaskContext) => {
            if (!before.has(i)) before.set(i, run.status);
            return request.decide(run, task);
          },
        })),
      );
      results.forEach((result, i) => {
        const from = before.get(i) ?? null;
        if (result.kind === "changed" && from !== result.change.run.status) {
          observer.observeRun(result.change.run, from);
        }
      });
      return results;
    },
  });
  return wrapMethods<Store>(store, { tasks: observedTasks, runs: observedRuns });
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

/** The running parts of a scheduler, built once its store is open. */
export interface SchedulerRuntime {
  readonly store: Store;
  readonly opened: OpenedStore;
  readonly tasks: TaskService;
  readonly dispatch: DispatchService;
  readonly coordinator: Coordinator;
  /** Polls running runs on targets that must be asked (started and stopped with the coordinator). */
  readonly watcher: RunWatcher;
  readonly clock: Clock;
  /** Where targets reach the callback routes. */
  readonly callbackBase: CallbackBase;
}

/** Builds the services and the coordinator around an opened store. */
export async function buildRuntime(options: SchedulerOptions): Promise<SchedulerRuntime> {
  const clock = options.clock ?? new SystemClock();
  const logger = options.logger ?? silentLogger;
  const policy = buildPolicy(options.policy);
  const newId = createIdGenerator(() => clock.now());
  const opened = await options.store.open({ newId });
  const store =
    options.observer === undefined ? opened.store : observedStore(opened.store, options.observer);
  await store.migrate();
  const handlers = new HandlerLauncher({ log: createLogHandler(logger), ...options.handlers });
  const targets = buildTargets(options, handlers, logger);
  const launcher = targets.launcher;
  const wake = new WakeSignal();
  const dispatch = new DispatchService({ store, policy });
  const watcher = new RunWatcher({
    dispatch,
    launcher,
    clock,
    targetKinds: targets.watched,
    logger,
    changed: () => {
      wake.wake();
    },
    options: {
      ...(targets.pollIntervalMs === null ? {} : { intervalMs: targets.pollIntervalMs }),
      ...options.watcher,
    },
  });
  const replicaId = options.replicaId ?? `${hostname()}-${randomBytes(4).toString("hex")}`;
  const clockOffset = opened.measureClockOffset;
  const coordinator = new Coordinator({
    dispatch,
    launcher,
    clock,
    replicaId,
    handlerNames: handlers.names,
    inProcess: handlers,
    watcher,
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
    threads: targets.threads,
    policy,
    newId,
    newSecret: () => randomBytes(32).toString("base64url"),
    handlerNames: handlers.names,
    agentServers: targets.agentServers,
    signsWithTaskSecret: targets.signsWithTaskSecret,
    signals: {
      wake: () => {
        wake.wake();
      },
      cancelRequested: (run, task) => {
        coordinator.requestCancel(run, task);
      },
    },
  });
  if (options.observer !== undefined) observeCoordinator(coordinator, options.observer);
  return {
    store,
    opened,
    tasks,
    dispatch,
    coordinator,
    watcher,
    clock,
    callbackBase: targets.callbackBase,
  };
}

/** Times each coordinator pass and reads its launches in flight (behaviour unchanged). */
function observeCoordinator(coordinator: Coordinator, observer: RuntimeObserver): void {
  const tick = coordinator.tick.bind(coordinator);
  coordinator.tick = async () => {
    const started = performance.now();
    try {
      await tick();
    } finally {
      observer.observeTick((performance.now() - started) / 1000);
    }
  };
  observer.measureBudget(() => coordinator.inFlight);
}

/** Filters of `tasks.list`, as the HTTP API's query string. */
export interface TaskListQuery {
  readonly status?: TaskStatus;
  readonly target_kind?: TargetKind;
  readonly thread_id?: string;
  /** 1..200. @default 50 */
  readonly limit?: number;
  readonly cursor?: string;
}

/** Filters of `tasks.runs`, as the HTTP API's query string. */
export interface RunListQuery {
  readonly status?: RunStatus;
  readonly trigger?: RunTrigger;
  /** 1..200. @default 50 */
  readonly limit?: number;
  readonly cursor?: string;
}

function taskQueryOf(query: TaskListQuery): TaskQuery {
  return {
    limit: query.limit ?? 50,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.target_kind === undefined ? {} : { targetKind: query.target_kind }),
    ...(query.thread_id === undefined ? {} : { thread: { threadId: threadId(query.thread_id) } }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

function runQueryOf(query: RunListQuery): RunQuery {
  return {
    limit: query.limit ?? 50,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.trigger === undefined ? {} : { trigger: query.trigger }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  };
}

/** The library's scheduler (SPEC 7.1). */
export interface Scheduler {
  /** Opens the store (applying migrations) and starts the coordinator. */
  start(): Promise<void>;
  /** Stops the coordinator (draining launches) and closes the store. Idempotent. */
  stop(): Promise<void>;
  /** Task operations; inputs and outputs have the HTTP API's JSON shapes (snake_case). */
  readonly tasks: {
    create(input: unknown): Promise<CreatedTask>;
    get(id: string): Promise<TaskView>;
    list(query?: TaskListQuery): Promise<PageView<TaskView>>;
    /** PATCH semantics; `version` makes it a compare-and-set (the HTTP API's `If-Match`). */
    update(id: string, patch: unknown, options?: { version?: number }): Promise<CreatedTask>;
    pause(id: string, options?: { cancel_running?: boolean }): Promise<TaskView>;
    /** @default catch_up "none" */
    resume(id: string, options?: { catch_up?: CatchUpPolicy }): Promise<TaskView>;
    cancel(id: string): Promise<TaskView>;
    /** Run now; a repeat with the same `idempotency_key` returns the first run. */
    trigger(id: string, options?: { idempotency_key?: string }): Promise<RunView>;
    backfill(
      id: string,
      range: { from: string; to: string },
    ): Promise<{ runs: RunView[]; already_backfilled: number }>;
    delete(id: string, options?: { force?: boolean }): Promise<void>;
    preview(id: string, count?: number): Promise<{ occurrences: OccurrenceView[] }>;
    /** Why the task did or did not fire around `at` (an RFC 3339 instant). */
    explain(id: string, at: string): Promise<ExplanationView>;
    runs(id: string, query?: RunListQuery): Promise<PageView<RunView>>;
  };
  readonly runs: {
    get(id: string): Promise<RunView>;
    cancel(id: string): Promise<RunView>;
  };
  /**
   * Named calendars: lists of days to skip that schedules name in `exclude` as `{calendar: NAME}`
   * (docs/schedules.md#calendars). Items are those of `exclude` except calendars: `"2026-12-25"`,
   * `{from, to}`, `{days: "25 12 *"}`.
   */
  readonly calendars: {
    get(name: string): Promise<CalendarView>;
    list(): Promise<{ items: CalendarView[] }>;
    /**
     * Creates the calendar or replaces its items; the tasks naming it take them for their occurrences
     * not decided yet (`tasks_refreshed` says how many).
     */
    put(name: string, items: readonly unknown[]): Promise<PutCalendarView>;
    /** @throws calendar_in_use (naming a task) while a task's schedule names it */
    delete(name: string): Promise<void>;
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
      list: (query = {}) => use((rt) => rt.tasks.list(actor, taskQueryOf(query))),
      update: (id, patch, opts = {}) =>
        use((rt) => rt.tasks.update(actor, id, patch, opts.version ?? null, rt.clock.now())),
      pause: (id, opts = {}) =>
        use((rt) =>
          rt.tasks.pause(
            actor,
            id,
            opts.cancel_running === undefined ? {} : { cancelRunning: opts.cancel_running },
            rt.clock.now(),
          ),
        ),
      resume: (id, opts = {}) =>
        use((rt) =>
          rt.tasks.resume(
            actor,
            id,
            opts.catch_up === undefined ? {} : { catchUp: opts.catch_up },
            rt.clock.now(),
          ),
        ),
      cancel: (id) => use((rt) => rt.tasks.cancel(actor, id, rt.clock.now())),
      trigger: (id, opts = {}) =>
        use((rt) =>
          rt.tasks.trigger(
            actor,
            id,
            opts.idempotency_key === undefined ? {} : { idempotencyKey: opts.idempotency_key },
            rt.clock.now(),
          ),
        ),
      backfill: (id, range) => use((rt) => rt.tasks.backfill(actor, id, range, rt.clock.now())),
      delete: (id, opts = {}) => use((rt) => rt.tasks.delete(actor, id, opts, rt.clock.now())),
      preview: (id, count = 10) => use((rt) => rt.tasks.preview(actor, id, count, rt.clock.now())),
      explain: (id, at) => use((rt) => rt.tasks.explain(actor, id, at, rt.clock.now())),
      runs: (id, query = {}) => use((rt) => rt.tasks.listRuns(actor, id, runQueryOf(query))),
    },
    runs: {
      get: (id) => use((rt) => rt.tasks.getRun(actor, id)),
      cancel: (id) => use((rt) => rt.tasks.cancelRun(actor, id, rt.clock.now())),
    },
    calendars: {
      get: (name) => use((rt) => rt.tasks.calendars.get(actor, name)),
      list: () => use((rt) => rt.tasks.calendars.list(actor)),
      put: (name, items) =>
        use(async (rt) => {
          const result = await rt.tasks.calendars.put(actor, name, { items }, rt.clock.now());
          return result.calendar;
        }),
      delete: (name) => use((rt) => rt.tasks.calendars.delete(actor, name)),
    },
  };
}

/** A store from a database URL (SPEC 7.3): `postgres://...`, `sqlite:PATH`, or a file path. */
export function storeFromDatabaseUrl(url: string): StoreFactory {
  if (/^postgres(ql)?:\/\//i.test(url)) return postgres(url);
  if (url === ":memory:") return sqlite(":memory:");
  if (url.startsWith("sqlite://")) return sqlite(url.slice("sqlite://".length));
  if (url.startsWith("sqlite:")) return sqlite(url.slice("sqlite:".length));
  return sqlite(url);
}

/** The token service over a store's `api_tokens` (SPEC 8). */
export function tokenServiceFor(
  store: Store,
  newId: () => string = createIdGenerator(),
): TokenService {
  if (store.apiTokens === undefined) throw new Error(`the ${store.kind} store keeps no API tokens`);
  return new TokenService({
    tokens: store.apiTokens,
    newSecret: () => `pct_${randomBytes(32).toString("base64url")}`,
    hash: (secret) => createHash("sha256").update(secret, "utf8").digest("hex"),
    newId,
  });
}

/** Opens a database only to manage its tokens (`punctual token ...`); `close()` when done. */
export async function openTokenAdmin(
  store: StoreFactory,
): Promise<{ tokens: TokenService; close(): Promise<void> }> {
  const opened = await store.open({ newId: createIdGenerator() });
  await opened.store.migrate();
  return { tokens: tokenServiceFor(opened.store), close: () => opened.store.close() };
}

export interface ServerOptions extends SchedulerOptions {
  /** @default process.env.PUNCTUAL_HOST ?? "127.0.0.1" */
  readonly host?: string;
  /** @default process.env.PUNCTUAL_PORT ?? 8080 (0 picks a free port) */
  readonly port?: number;
  /** Run the coordinator in this process (`--no-coordinator` turns it off). @default true */
  readonly runCoordinator?: boolean;
  /** Per-token rate limit; false turns it off. */
  readonly rateLimit?: RateLimitOptions | false;
  /** Label decision metrics by task (unbounded cardinality). @default false */
  readonly metricsPerTask?: boolean;
  /** How long `Idempotency-Key` answers are remembered; older records are purged hourly. @default 24 h */
  readonly idempotencyRetentionMs?: number;
  /** Fastify's logger (pino). @default no request logging */
  readonly httpLogger?: FastifyBaseLogger;
  readonly version?: string;
}

/** `punctual serve`: the HTTP API and (unless told otherwise) the coordinator, in one process. */
export interface PunctualServer {
  readonly app: FastifyInstance;
  readonly runtime: SchedulerRuntime;
  readonly tokens: TokenService;
  readonly metrics: SchedulerMetrics;
  /** Starts the coordinator (if enabled) and listens; resolves with the base URL. */
  start(): Promise<string>;
  /** Refuses new work (`/readyz` 503), closes the HTTP server, stops the coordinator, closes the store. */
  stop(): Promise<void>;
}

/** The least delay of a once task in `punctual serve` (SPEC 3.2), unless `policy` says otherwise. */
export const SERVER_MIN_ONCE_DELAY_SECONDS = 1;

export async function createServer(options: ServerOptions): Promise<PunctualServer> {
  const metrics = new SchedulerMetrics({ perTaskLabels: options.metricsPerTask ?? false });
  // SPEC 3.2: a once task must be at least 1 s ahead in the server (0 in the library's domain).
  const policy = { minOnceDelaySeconds: SERVER_MIN_ONCE_DELAY_SECONDS, ...options.policy };
  const runtime = await buildRuntime({ ...options, policy, observer: metrics });
  const tokens = tokenServiceFor(runtime.store);
  const idempotency = runtime.store.idempotency;
  if (idempotency === undefined)
    throw new Error(`the ${runtime.store.kind} store keeps no idempotency records`);
  let shuttingDown = false;
  const app = await buildHttpApp({
    tasks: runtime.tasks,
    tokens,
    idempotency,
    health: runtime.store,
    now: () => runtime.clock.now(),
    metrics,
    isShuttingDown: () => shuttingDown,
    callbacks: {
      dispatch: runtime.dispatch,
      now: () => runtime.clock.now(),
      readAgentRun: observationFromAgentRun,
      recorded: () => {
        runtime.coordinator.wakeSignal.wake();
      },
    },
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.httpLogger === undefined ? {} : { logger: options.httpLogger }),
    ...(options.version === undefined ? {} : { version: options.version }),
  });
  let unsubscribe: (() => Promise<void>) | null = null;
  let stopping: Promise<void> | null = null;
  const purger = new IdempotencyPurger(
    idempotency,
    () => runtime.clock.now(),
    options.idempotencyRetentionMs ?? IDEMPOTENCY_RETENTION_MS,
    options.logger ?? silentLogger,
  );
  return {
    app,
    runtime,
    tokens,
    metrics,
    start: async () => {
      if (options.runCoordinator ?? true) {
        if (runtime.opened.subscribeWake !== undefined) {
          unsubscribe = await runtime.opened.subscribeWake(() => {
            runtime.coordinator.wakeSignal.wake();
          });
        }
        runtime.coordinator.start();
      }
      const envPort = process.env["PUNCTUAL_PORT"];
      const port = options.port ?? (envPort === undefined ? 8080 : Number(envPort));
      const host = options.host ?? process.env["PUNCTUAL_HOST"] ?? "127.0.0.1";
      await app.listen({ host, port });
      purger.start();
      const address = app.server.address();
      const actualPort = typeof address === "object" && address !== null ? address.port : port;
      const base = `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`;
      // Targets on this machine can call back at the listening address unless told a public one.
      const reachable =
        host === "0.0.0.0" || host === "::" ? `http://127.0.0.1:${actualPort}` : base;
      runtime.callbackBase.fallBackTo(reachable);
      return base;
    },
    stop: () =>
      (stopping ??= (async () => {
        shuttingDown = true;
        purger.stop();
        try {
          await app.close();
        } finally {
          await runtime.coordinator.stop();
          if (unsubscribe !== null) await unsubscribe();
          await runtime.store.close();
        }
      })()),
  };
}
