/**
 * The server `punctual serve` runs (docs/operations.md): the HTTP API over a scheduler's runtime and,
 * unless told otherwise, its coordinator, in one process. Part of the composition root: it only wires.
 */
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { silentLogger } from "./application/events/logger.js";
import type { TokenService } from "./application/access/token-service.js";
import type { SchedulerMetrics } from "./adapters/metrics/scheduler-metrics.js";
import type { AddressLimitOptions, RateLimitOptions } from "./adapters/http/rate-limit.js";
import type { AuthProxyOptions } from "./adapters/http/auth-proxy.js";
import { deerflowApiTarget, langGraphApiTarget } from "./adapters/launchers/agent/agent-servers.js";
import { optionKeys } from "./application/policy/known-options.js";
import { buildRuntime, metricsSources } from "./composition-runtime.js";
import type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";
import { checkOptionKeys, SCHEDULER_KEYS } from "./composition-options.js";
import { tokenServiceFor } from "./composition-stores.js";

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

/** What the server runs before its HTTP app exists: the runtime, its metrics and tokens. */
interface ServerCore {
  readonly runtime: SchedulerRuntime;
  readonly metrics: SchedulerMetrics;
  readonly tokens: TokenService;
}

/** Opens the runtime (store, migrations) with its metrics listening from the first event on. */
async function openCore(options: ServerOptions): Promise<ServerCore> {
  // prom-client is loaded before the runtime opens: the metrics count every decision from the start.
  const metricsModule = await import("./adapters/metrics/scheduler-metrics.js");
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
  return { runtime, metrics, tokens: tokenServiceFor(runtime.store) };
}

/** Builds the HTTP app over `core` (loading the HTTP stack now) and the server around both. */
async function serveCore(core: ServerCore, options: ServerOptions): Promise<PunctualServer> {
  // The HTTP stack is loaded only by the server: `punctual worker` never parses Fastify.
  const [
    { buildHttpApp },
    { IDEMPOTENCY_RETENTION_MS, IdempotencyPurger },
    agent,
    { RATE_LIMIT_DEFAULTS },
  ] = await Promise.all([
    import("./adapters/http/http-app.js"),
    import("./adapters/http/idempotency-purger.js"),
    import("./adapters/launchers/agent/agent-observation.js"),
    import("./adapters/http/rate-limit.js"),
  ]);
  const { observationFromAgentRun } = agent;
  const { runtime, metrics, tokens } = core;
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

/**
 * The HTTP API and (unless `runCoordinator` is false) the coordinator, as the HTTP tests run them: both
 * built here, started by `start()`. `punctual serve` starts through `startServer` instead.
 * @throws validation_failed when an option's name is unknown ("did you mean maxConcurrentRuns?")
 */
export async function createServer(options: ServerOptions): Promise<PunctualServer> {
  checkOptionKeys(options, SERVER_KEYS);
  return serveCore(await openCore(options), options);
}

/** How long `serve` waits for the coordinator's first claim round before it loads the HTTP stack anyway. */
const FIRST_ROUND_PATIENCE_MS = 2_000;

/** Resolves once the coordinator has ended its first claim round, its first pass, or failed one. */
function firstRound(runtime: SchedulerRuntime): Promise<void> {
  return new Promise((resolve) => {
    const offs = (["coordinator:claim", "coordinator:tick", "store:failed"] as const).map((event) =>
      runtime.events.on(event, () => {
        for (const off of offs) off();
        resolve();
      }),
    );
  });
}

/**
 * `punctual serve`'s start (docs/operations.md#starting-replicas): the store opened, the coordinator
 * (unless `runCoordinator` is false) starts and ends its first claim round before the HTTP stack is
 * even loaded, so a replica of a crash-looping fleet claims its share within the CPU a worker's start
 * takes; then the HTTP app is built and listens. `opened` receives the stop to call from then on: until
 * the server exists it drains the coordinator and closes the store; a start that a stop overtook
 * rejects without listening.
 * @throws validation_failed when an option's name is unknown
 */
export async function startServer(
  options: ServerOptions,
  opened: (stop: () => Promise<void>) => void,
): Promise<{ readonly server: PunctualServer; readonly baseUrl: string }> {
  checkOptionKeys(options, SERVER_KEYS);
  const core = await openCore(options);
  const { runtime } = core;
  // An object, not two variables: the stop given to `opened` changes both while this function awaits.
  const state: { server: PunctualServer | null; stopping: Promise<void> | null } = {
    server: null,
    stopping: null,
  };
  let stopAsked: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopAsked = resolve));
  opened(
    () =>
      (state.stopping ??= (async () => {
        stopAsked();
        if (state.server !== null) {
          await state.server.stop();
          return;
        }
        try {
          await runtime.coordinator.stop();
        } finally {
          await runtime.store.close();
        }
      })()),
  );
  const overtaken = (): void => {
    if (state.stopping !== null) throw new Error("stopped while starting");
  };
  if (options.runCoordinator ?? true) {
    // A stop asked before this point (a SIGTERM held while the modules loaded is delivered by
    // `opened`) has already drained a coordinator that never started: starting it now would claim
    // runs under a store about to close.
    overtaken();
    await runtime.coordinator.listen();
    overtaken();
    const round = firstRound(runtime);
    runtime.coordinator.start();
    // Bounded: a database that answers slowly or not at all must not keep the API (and its 503s and
    // health checks) from listening; the HTTP stack then loads beside the round still in progress.
    let bound: NodeJS.Timeout | undefined;
    const patience = new Promise<void>((resolve) => {
      bound = setTimeout(resolve, FIRST_ROUND_PATIENCE_MS);
      bound.unref();
    });
    await Promise.race([round, stopped, patience]);
    clearTimeout(bound);
  }
  overtaken();
  const built = await serveCore(core, options);
  overtaken();
  state.server = built;
  // The coordinator already runs: `start()` listens to it again and starts it again, both idempotent.
  return { server: built, baseUrl: await built.start() };
}
