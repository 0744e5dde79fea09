/**
 * The composition root's entry points (docs/architecture.md#the-composition-root): the library's
 * `createScheduler`, the server `punctual serve` runs, and the stores and token service the CLI opens.
 * It only wires: the runtime is built in composition-runtime.ts, the targets in composition-targets.ts,
 * the operations the library offers are the application's (scheduler-api.ts). Nothing but the package
 * entry points and the CLI imports this file.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ValidationError } from "./domain/errors.js";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { LOCAL_ACTOR } from "./application/access/actor.js";
import { silentLogger } from "./application/events/logger.js";
import { LibraryEvents } from "./application/events/library-notifications.js";
import type {
  SchedulerEventListener,
  SchedulerEventName,
} from "./application/events/library-notifications.js";
import { schedulerApi } from "./application/scheduler-api.js";
import { planLines, syncDeclaredSchedules } from "./application/tasks/declared-schedules.js";
import type {
  DeclaredSchedulesPlan,
  DeclaredSchedulesPort,
  PruneMode,
  ScheduleDeclaration,
} from "./application/tasks/declared-schedules.js";
import type { Actor } from "./application/access/actor.js";
import type {
  SchedulerCalendars,
  SchedulerRuns,
  SchedulerTasks,
} from "./application/scheduler-api.js";
import type { Store, StoreFactory } from "./domain/ports/store.js";
import { unknownPolicyOptions } from "./application/policy/policy-options.js";
import type { HandlerInputMap } from "./application/shapes/handler-input-types.js";
import type {
  HandlerInputsOf,
  HandlersOption,
} from "./adapters/launchers/handler/handler-definition.js";
import { TokenService } from "./application/access/token-service.js";
import type {
  MetricsOptions,
  MetricsSources,
  SchedulerMetrics,
} from "./adapters/metrics/scheduler-metrics.js";
import type { AddressLimitOptions, RateLimitOptions } from "./adapters/http/rate-limit.js";
import type { PostgresOptions } from "./adapters/storage/postgres/postgres-store.js";
import type { AuthProxyOptions } from "./adapters/http/auth-proxy.js";
import { deerflowApiTarget, langGraphApiTarget } from "./adapters/launchers/agent/agent-servers.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";
import { buildRuntime } from "./composition-runtime.js";
import {
  optionKeys,
  refuseUnknownOptions,
  unknownOptions,
} from "./application/policy/known-options.js";
import type { CoordinatorOptions } from "./runtime/coordinator-options.js";
import type { RunWatcherOptions } from "./runtime/run-watcher.js";
import type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";

/** `createScheduler`'s options: the scheduler's, and the schedules it declares (docs/library.md#declared-schedules). */
export interface CreateSchedulerOptions extends SchedulerOptions {
  /**
   * Keyed task definitions (each a `tasks.upsert` input) synced at `start()`: missing ones created,
   * changed ones updated, identical ones left as they are. Replicas starting at once do the work once;
   * during a rolling deploy, the declaration of the replica that started last wins.
   */
  readonly schedules?: readonly unknown[];
  /** The group the declared tasks are stored in; prune acts only on it. @default "default" */
  readonly schedulesGroup?: string;
  /**
   * What becomes of the group's tasks no longer declared: `pause`, or `delete` (a task whose run is
   * active is paused and deleted by a later sync). @default left alone, and logged
   */
  readonly prune?: Exclude<PruneMode, "none">;
}

/**
 * The library's scheduler (docs/library.md). `I` maps its typed handlers' names to their inputs
 * (docs/library.md#typed-handlers); `null` when it has none.
 */
export interface Scheduler<I extends HandlerInputMap | null = null> {
  /**
   * Opens the store (applying migrations), syncs the declared schedules (if any), and starts the
   * coordinator.
   * @throws validation_failed naming `schedules.N.field` when a declared schedule is invalid (nothing written)
   */
  start(): Promise<void>;
  /**
   * Syncs a declaration as `start()` syncs `schedules` (docs/library.md#declared-schedules); with
   * `dryRun`, writes nothing and answers the plan.
   */
  applySchedules(
    declaration: ScheduleDeclaration,
    options?: { dryRun?: boolean },
  ): Promise<DeclaredSchedulesPlan>;
  /** Stops the coordinator (draining launches) and closes the store. Idempotent. */
  stop(): Promise<void>;
  /** Task operations; inputs and outputs have the HTTP API's JSON shapes (snake_case). */
  readonly tasks: SchedulerTasks<I>;
  readonly runs: SchedulerRuns;
  /** Named calendars, the days to skip that schedules name in `exclude` (docs/schedules.md#calendars). */
  readonly calendars: SchedulerCalendars;
  /**
   * Calls `listener` on every `event` this replica observes (docs/library.md#events): at-least-once
   * notifications, the run ledger stays the truth; a listener that throws is logged and ignored.
   * Returns a function that stops it.
   */
  on<E extends SchedulerEventName>(event: E, listener: SchedulerEventListener<E>): () => void;
  /**
   * This scheduler's Prometheus metrics (docs/operations.md#metrics-and-probes), for a service that serves its own
   * `/metrics`: `const { contentType, body } = await (await scheduler.metrics()).scrape()`. Built (and
   * prom-client loaded) on the first call, which opens the store; `options` apply to that first call.
   */
  metrics(options?: MetricsOptions): Promise<SchedulerMetrics>;
  /** The built runtime (opens the store on first use). */
  runtime(): Promise<SchedulerRuntime>;
}

/** Every key the options of both `createScheduler` and `createServer` take. */
const SCHEDULER_KEYS = optionKeys<SchedulerOptions>()([
  "store",
  "handlers",
  "handlerNames",
  "policy",
  "logger",
  "clock",
  "coordinator",
  "watcher",
  "replicaId",
  "actor",
  "tracerProvider",
  "secretKeys",
  "launchers",
  "agentServers",
  "webhookAllow",
  "webhookSecret",
  "publicUrl",
  "threads",
]);
const CREATE_SCHEDULER_KEYS = [
  ...SCHEDULER_KEYS,
  ...optionKeys<Omit<CreateSchedulerOptions, keyof SchedulerOptions>>()([
    "schedules",
    "schedulesGroup",
    "prune",
  ]),
];
const COORDINATOR_KEYS = optionKeys<CoordinatorOptions>()([
  "tickMs",
  "admissionBatch",
  "admissionRounds",
  "maxInFlight",
  "sweepMs",
  "retentionMs",
  "shutdownTimeoutMs",
  "claimBatch",
  "writeBatch",
]);
const WATCHER_KEYS = optionKeys<RunWatcherOptions>()([
  "intervalMs",
  "reconcileDelayMs",
  "concurrency",
]);

/**
 * Refuses options a scheduler or server does not know, at any level it documents
 * (docs/library.md#options-are-checked).
 * @throws validation_failed naming each unknown key and the closest known one
 */
function checkOptionKeys(options: SchedulerOptions, known: readonly string[]): void {
  refuseUnknownOptions([
    ...unknownOptions(options, known),
    ...unknownOptions(options.coordinator, COORDINATOR_KEYS, "coordinator"),
    ...unknownOptions(options.watcher, WATCHER_KEYS, "watcher"),
    ...unknownPolicyOptions(options.policy ?? {}),
  ]);
}

/**
 * Creates a scheduler; nothing happens until `start()` or the first call.
 * @throws validation_failed when an option's name is unknown ("did you mean maxConcurrentRuns?"),
 * checked at once, and when the policy's values are invalid
 */
export function createScheduler<const H extends HandlersOption = HandlersOption>(
  options: CreateSchedulerOptions & { readonly handlers?: H },
): Scheduler<HandlerInputsOf<H>> {
  checkOptionKeys(options, CREATE_SCHEDULER_KEYS);
  let built: Promise<SchedulerRuntime> | null = null;
  let stopping: Promise<void> | null = null;
  const logger = options.logger ?? silentLogger;
  const notifications = new LibraryEvents((error, event) => {
    logger.error({ err: error, event }, "an event listener threw; the scheduler carries on");
  });
  const runtime = (): Promise<SchedulerRuntime> =>
    (built ??= buildRuntime(options).then((rt) => {
      notifications.connect(rt.events);
      return rt;
    }));
  const actor = options.actor ?? LOCAL_ACTOR;
  const applySchedules = async (
    declaration: ScheduleDeclaration,
    apply: { dryRun?: boolean } = {},
  ): Promise<DeclaredSchedulesPlan> => {
    const rt = await runtime();
    return syncDeclaredSchedules(declaredPort(rt, actor), declaration, apply);
  };
  let metrics: Promise<SchedulerMetrics> | null = null;
  return {
    runtime,
    metrics: (metricsOptions) =>
      (metrics ??= (async () => {
        const [rt, { SchedulerMetrics }] = await Promise.all([
          runtime(),
          import("./adapters/metrics/scheduler-metrics.js"),
        ]);
        const built = new SchedulerMetrics(metricsOptions);
        built.listenTo(rt.events, metricsSources(rt));
        return built;
      })()),
    on: (event, listener) => notifications.on(event, listener),
    ...schedulerApi<HandlerInputsOf<H>>(actor, runtime),
    applySchedules,
    start: async () => {
      const rt = await runtime();
      if (options.schedules !== undefined) {
        const plan = await applySchedules({
          schedules: options.schedules,
          group: options.schedulesGroup,
          prune: options.prune,
        });
        for (const line of planLines(plan)) logger.info({ group: plan.group }, `declared: ${line}`);
      }
      await rt.coordinator.listen();
      rt.coordinator.start();
    },
    stop: () =>
      (stopping ??= (async () => {
        if (built === null) return;
        const rt = await built;
        await rt.coordinator.stop();
        await rt.store.close();
      })()),
  };
}

/** The declared-schedules sync over the runtime's task service, as `actor`. */
function declaredPort(rt: SchedulerRuntime, actor: Actor): DeclaredSchedulesPort {
  const now = () => rt.clock.now();
  return {
    upsert: (input, dryRun) => rt.tasks.upsert(actor, input, null, now(), { dryRun }),
    listGroup: async (group) => {
      const items = [];
      let cursor: string | undefined;
      do {
        const page = await rt.tasks.list(actor, {
          group,
          limit: 200,
          ...(cursor === undefined ? {} : { cursor }),
        });
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return items;
    },
    pause: (id) => rt.tasks.pause(actor, id, {}, now()),
    delete: (id) => rt.tasks.delete(actor, id, { afterRun: true }, now()),
  };
}

/**
 * A store from a database URL (docs/operations.md): `postgres://...`, `sqlite:PATH`, or a file path.
 * `postgresOptions` apply to a PostgreSQL URL only (a pooler, a direct URL for LISTEN).
 */
export function storeFromDatabaseUrl(
  url: string,
  postgresOptions: Omit<PostgresOptions, "schema"> = {},
): StoreFactory {
  // Each store (and its driver) is loaded when opened: a worker on SQLite never loads `pg`, and none
  // parses a driver before it listens for signals (docs/operations.md#on-a-loaded-host).
  if (/^postgres(ql)?:\/\//i.test(url)) {
    return {
      open: async (context) =>
        (await import("./adapters/storage/postgres/postgres-store.js"))
          .postgres(url, postgresOptions)
          .open(context),
    };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1];
  if (scheme !== undefined && !/^sqlite$/i.test(scheme)) {
    throw ValidationError.of(
      "database",
      `${scheme}:// is not a database punctual runs on: give a postgres:// URL, a sqlite: URL or a file path`,
    );
  }
  let path = url;
  if (url.startsWith("sqlite://")) path = url.slice("sqlite://".length);
  else if (url.startsWith("sqlite:")) path = url.slice("sqlite:".length);
  return {
    open: async (context) => {
      const folder = dirname(resolve(path));
      if (path !== ":memory:" && !existsSync(folder)) {
        throw ValidationError.of(
          "database",
          `the folder of the SQLite database ${path} does not exist (${folder}): create it first`,
        );
      }
      return (await import("./adapters/storage/sqlite/sqlite.js")).sqlite(path).open(context);
    },
  };
}

/** The token service over a store's `api_tokens` (docs/security.md). */
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
  factory: StoreFactory,
): Promise<{ tokens: TokenService; close(): Promise<void> }> {
  const store = await factory.open({ newId: createIdGenerator() });
  await store.migrate();
  return { tokens: tokenServiceFor(store), close: () => store.close() };
}

export interface ServerOptions extends SchedulerOptions {
  /** @default process.env.PUNCTUAL_HOST ?? "127.0.0.1" */
  readonly host?: string;
  /** @default process.env.PUNCTUAL_PORT ?? 8080 (0 picks a free port) */
  readonly port?: number;
  /** Run the coordinator in this process (`--no-coordinator` turns it off). @default true */
  readonly runCoordinator?: boolean;
  /** Also serve DeerFlow's scheduled-task routes over this agent server (`--deerflow-api`). */
  readonly deerflowApi?: string;
  /** Identity from a trusted authenticating proxy (docs/security.md#auth-proxy). @default off */
  readonly authProxy?: AuthProxyOptions;
  /** Also serve LangGraph's crons routes under `/langgraph/SERVER` for these agent servers (`--langgraph-api`). */
  readonly langGraphApi?: readonly string[];
  /** Pass every other path under `/langgraph/SERVER` through to the server (`--langgraph-proxy`). */
  readonly langGraphProxy?: boolean;
  /** Per-token rate limit; false turns it off. */
  readonly rateLimit?: RateLimitOptions | false;
  /** Per client address: the callback routes' rate and the failed-attempt throttle (docs/security.md#callback-routes). */
  readonly addressLimits?: AddressLimitOptions | false;
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
  /** The per-token rate limit in force (false when off). */
  readonly rateLimit: Required<RateLimitOptions> | false;
  /** Starts the coordinator (if enabled) and listens; resolves with the base URL. */
  start(): Promise<string>;
  /**
   * Shuts down in the order of docs/operations.md#what-happens-on-shutdown: `/readyz` 503 at once, the
   * coordinator drained while every other route (callbacks included) keeps answering, then the HTTP
   * server closed and the store. Idempotent.
   */
  stop(): Promise<void>;
}

/** The least delay of a once task in `punctual serve` (docs/schedules.md#once), unless `policy` says otherwise. */
export const SERVER_MIN_ONCE_DELAY_SECONDS = 1;

const SERVER_KEYS = [
  ...SCHEDULER_KEYS,
  ...optionKeys<Omit<ServerOptions, keyof SchedulerOptions>>()([
    "host",
    "port",
    "runCoordinator",
    "deerflowApi",
    "authProxy",
    "langGraphApi",
    "langGraphProxy",
    "rateLimit",
    "addressLimits",
    "metricsPerTask",
    "idempotencyRetentionMs",
    "httpLogger",
    "version",
  ]),
];

/**
 * The HTTP API and (unless `runCoordinator` is false) the coordinator, as `punctual serve` runs them.
 * @throws validation_failed when an option's name is unknown ("did you mean maxConcurrentRuns?")
 */
export async function createServer(options: ServerOptions): Promise<PunctualServer> {
  checkOptionKeys(options, SERVER_KEYS);
  // The HTTP stack is loaded only by the server: `punctual worker` never parses Fastify or prom-client.
  const [
    { buildHttpApp },
    { IDEMPOTENCY_RETENTION_MS, IdempotencyPurger },
    metricsModule,
    agent,
    { RATE_LIMIT_DEFAULTS },
  ] = await Promise.all([
    import("./adapters/http/http-app.js"),
    import("./adapters/http/idempotency-purger.js"),
    import("./adapters/metrics/scheduler-metrics.js"),
    import("./adapters/launchers/agent/agent-observation.js"),
    import("./adapters/http/rate-limit.js"),
  ]);
  const { observationFromAgentRun } = agent;
  const metrics: SchedulerMetrics = new metricsModule.SchedulerMetrics({
    perTaskLabels: options.metricsPerTask ?? false,
  });
  // docs/schedules.md#once: a once task must be at least 1 s ahead in the server (0 in the library's domain).
  // docs/operations.md#quotas: the server applies the default quotas unless `policy.quotas` says otherwise.
  const policy = {
    minOnceDelaySeconds: SERVER_MIN_ONCE_DELAY_SECONDS,
    quotas: {},
    ...options.policy,
  };
  const runtime = await buildRuntime({ ...options, policy });
  metrics.listenTo(runtime.events, metricsSources(runtime));
  const tokens = tokenServiceFor(runtime.store);
  const idempotency = runtime.store.idempotency;
  if (idempotency === undefined)
    throw new Error(`the ${runtime.store.kind} store keeps no idempotency records`);
  let shuttingDown = false;
  const now = () => runtime.clock.now();
  const app = await buildHttpApp({
    tasks: runtime.tasks,
    tokens,
    idempotency,
    health: runtime.store,
    now,
    metrics,
    isShuttingDown: () => shuttingDown,
    replicas: {
      listReplicas: (since, limit) => runtime.store.replicas.listReplicas(since, limit),
      livenessMs: runtime.thresholds.livenessTimeoutMs,
    },
    callbacks: {
      dispatch: runtime.dispatch.runWrites,
      now,
      readAgentRun: observationFromAgentRun,
      recorded: () => {
        runtime.coordinator.wakeSignal.wake();
      },
    },
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.addressLimits === undefined ? {} : { addressLimits: options.addressLimits }),
    ...(options.httpLogger === undefined ? {} : { logger: options.httpLogger }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.authProxy === undefined ? {} : { authProxy: options.authProxy }),
    ...(options.deerflowApi === undefined
      ? {}
      : { deerflow: deerflowApiTarget(options.deerflowApi, runtime.agentServers) }),
    ...(options.langGraphApi === undefined
      ? {}
      : {
          langGraph: [...new Set(options.langGraphApi)].map((name) =>
            langGraphApiTarget(name, runtime.agentServers),
          ),
          ...(options.langGraphProxy === true
            ? {
                langGraphProxy: runtime.agentServers.filter((server) =>
                  options.langGraphApi?.includes(server.name),
                ),
              }
            : {}),
        }),
  });
  let stopping: Promise<void> | null = null;
  const purger = new IdempotencyPurger(
    idempotency,
    now,
    options.idempotencyRetentionMs ?? IDEMPOTENCY_RETENTION_MS,
    options.logger ?? silentLogger,
  );
  return {
    app,
    runtime,
    tokens,
    metrics,
    rateLimit:
      options.rateLimit === false ? false : { ...RATE_LIMIT_DEFAULTS, ...options.rateLimit },
    start: async () => {
      if (options.runCoordinator ?? true) {
        await runtime.coordinator.listen();
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
          // The API needs no coordinator: it keeps answering (a completion arriving now is recorded)
          // while the coordinator drains its launches and handlers within the grace.
          await runtime.coordinator.stop();
        } finally {
          try {
            await app.close();
          } finally {
            await runtime.store.close();
          }
        }
      })()),
  };
}

/** What a scheduler's metrics read at scrape time (docs/operations.md#metrics-and-probes). */
export function metricsSources(rt: SchedulerRuntime): MetricsSources {
  return {
    inFlight: () => rt.coordinator.inFlight,
    budget: () => rt.thresholds.maxConcurrentRuns,
    queue: () => rt.store.runs.queueStats(rt.clock.now()),
    now: () => rt.clock.now(),
  };
}
