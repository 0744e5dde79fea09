/**
 * The composition root's entry points (docs/architecture.md#the-composition-root): the library's
 * `createScheduler`, the server `punctual serve` runs, and the stores and token service the CLI opens.
 * It only wires: the runtime is built in composition-runtime.ts, the targets in composition-targets.ts,
 * the operations the library offers are the application's (scheduler-api.ts). Nothing but the package
 * entry points and the CLI imports this file.
 */
import { createHash, randomBytes } from "node:crypto";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { LOCAL_ACTOR } from "./application/actor.js";
import { silentLogger } from "./application/logger.js";
import { LibraryEvents } from "./application/library-events.js";
import type { SchedulerEventListener, SchedulerEventName } from "./application/library-events.js";
import { schedulerApi } from "./application/scheduler-api.js";
import type {
  SchedulerCalendars,
  SchedulerRuns,
  SchedulerTasks,
} from "./application/scheduler-api.js";
import type { Store, StoreFactory } from "./application/store.js";
import type { HandlerInputMap } from "./application/typed-input.js";
import type {
  HandlerInputsOf,
  HandlersOption,
} from "./adapters/launchers/handler/handler-definition.js";
import { TokenService } from "./application/token-service.js";
import { buildHttpApp } from "./adapters/http/http-app.js";
import { deerflowApiTarget } from "./adapters/launchers/agent/agent-servers.js";
import { IDEMPOTENCY_RETENTION_MS, IdempotencyPurger } from "./adapters/http/idempotency-purger.js";
import { SchedulerMetrics } from "./adapters/http/metrics.js";
import type { RateLimitOptions } from "./adapters/http/rate-limit.js";
import { observationFromAgentRun } from "./adapters/launchers/agent/agent-observation.js";
import { postgres } from "./adapters/storage/postgres/postgres-store.js";
import type { PostgresOptions } from "./adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";
import { sqlite } from "./adapters/storage/sqlite/sqlite-store.js";
import { buildRuntime } from "./composition-runtime.js";
import type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";

/**
 * The library's scheduler (docs/library.md). `I` maps its typed handlers' names to their inputs
 * (docs/library.md#typed-handlers); `null` when it has none.
 */
export interface Scheduler<I extends HandlerInputMap | null = null> {
  /** Opens the store (applying migrations) and starts the coordinator. */
  start(): Promise<void>;
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
  /** The built runtime (opens the store on first use). */
  runtime(): Promise<SchedulerRuntime>;
}

/** Creates a scheduler; nothing happens until `start()` or the first call. */
export function createScheduler<const H extends HandlersOption = HandlersOption>(
  options: SchedulerOptions & { readonly handlers?: H },
): Scheduler<HandlerInputsOf<H>> {
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
  return {
    runtime,
    on: (event, listener) => notifications.on(event, listener),
    ...schedulerApi<HandlerInputsOf<H>>(options.actor ?? LOCAL_ACTOR, runtime),
    start: async () => {
      const rt = await runtime();
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

/**
 * A store from a database URL (docs/operations.md): `postgres://...`, `sqlite:PATH`, or a file path.
 * `postgresOptions` apply to a PostgreSQL URL only (a pooler, a direct URL for LISTEN).
 */
export function storeFromDatabaseUrl(
  url: string,
  postgresOptions: Omit<PostgresOptions, "schema"> = {},
): StoreFactory {
  if (/^postgres(ql)?:\/\//i.test(url)) return postgres(url, postgresOptions);
  if (url === ":memory:") return sqlite(":memory:");
  if (url.startsWith("sqlite://")) return sqlite(url.slice("sqlite://".length));
  if (url.startsWith("sqlite:")) return sqlite(url.slice("sqlite:".length));
  return sqlite(url);
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

/** The least delay of a once task in `punctual serve` (docs/schedules.md#once), unless `policy` says otherwise. */
export const SERVER_MIN_ONCE_DELAY_SECONDS = 1;

export async function createServer(options: ServerOptions): Promise<PunctualServer> {
  const metrics = new SchedulerMetrics({ perTaskLabels: options.metricsPerTask ?? false });
  // docs/schedules.md#once: a once task must be at least 1 s ahead in the server (0 in the library's domain).
  const policy = { minOnceDelaySeconds: SERVER_MIN_ONCE_DELAY_SECONDS, ...options.policy };
  const runtime = await buildRuntime({ ...options, policy });
  metrics.listenTo(runtime.events, () => runtime.coordinator.inFlight);
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
    callbacks: {
      dispatch: runtime.dispatch,
      now,
      readAgentRun: observationFromAgentRun,
      recorded: () => {
        runtime.coordinator.wakeSignal.wake();
      },
    },
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.httpLogger === undefined ? {} : { logger: options.httpLogger }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.deerflowApi === undefined
      ? {}
      : { deerflow: deerflowApiTarget(options.deerflowApi, runtime.agentServers) }),
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
          await app.close();
        } finally {
          await runtime.coordinator.stop();
          await runtime.store.close();
        }
      })()),
  };
}
