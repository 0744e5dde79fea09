/**
 * The composition root's core (docs/architecture.md#the-composition-root): opens the store and wires one
 * scheduler's parts around it (events, the dispatch and task services, the launchers, the run watcher and
 * the coordinator). It only constructs and connects: every decision is in the domain, every loop in the
 * runtime, and what a store offers beyond the ports (wake-ups, a reference clock) is read from the store.
 */
import { DateHolidaysSource } from "./adapters/holidays/date-holidays-source.js";
import type { AgentServerConfig } from "./adapters/launchers/agent/agent-servers.js";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Actor } from "./application/access/actor.js";
import { createDispatch } from "./application/dispatch/dispatch.js";
import type { Dispatch } from "./application/dispatch/dispatch.js";
import type { Logger } from "./application/events/logger.js";
import { silentLogger } from "./application/events/logger.js";
import { agreeBudget } from "./application/policy/fleet-budget.js";
import { logRunFailures } from "./application/events/run-failure-log.js";
import { buildPolicy, withBudget } from "./application/policy/policy-options.js";
import { limitsOf } from "./application/policy/limits.js";
import type { PolicyOptions } from "./application/policy/policy-options.js";
import { SchedulerEvents } from "./application/events/internal-events.js";
import type { Store, StoreFactory } from "./domain/ports/store.js";
import { TaskService } from "./application/tasks/task-service.js";
import { HandlerLauncher } from "./adapters/launchers/handler/handler-launcher.js";
import type { HandlersOption } from "./adapters/launchers/handler/handler-definition.js";
import { createLogHandler } from "./adapters/launchers/handler/log-handler.js";
import { createIdGenerator } from "./adapters/storage/shared/time-ordered-id.js";
import { buildTargets } from "./composition-targets.js";
import type { CallbackBase, TargetOptions } from "./composition-targets.js";
import { SystemClock } from "./runtime/clock.js";
import type { Clock } from "./runtime/clock.js";
import { registeredHandlerNames } from "./application/tasks/registered-handler-names.js";
import type { Instant } from "./domain/time.js";
import { Coordinator } from "./runtime/coordinator.js";
import type { CoordinatorOptions } from "./runtime/coordinator-options.js";
import { RunWatcher } from "./runtime/run-watcher.js";
import { tidyAfterEndedRuns } from "./runtime/ended-runs.js";
import type { RunWatcherOptions } from "./runtime/run-watcher.js";
import { WakeSignal } from "./runtime/wake-signal.js";
import type { TracerProvider } from "@opentelemetry/api";
import { openTelemetryTracer } from "./adapters/tracing/otel-tracer.js";
import { AdmissionWindow } from "./application/policy/admission-window.js";
import { Quotas } from "./application/policy/quotas.js";
import type { OwnerQuotas } from "./application/policy/quotas.js";
import { secretSealerFromEnv } from "./adapters/storage/shared/secret-keyring.js";
import type { MetricsSources } from "./adapters/metrics/scheduler-metrics.js";

export interface SchedulerOptions extends TargetOptions {
  readonly store: StoreFactory;
  /**
   * In-process handler targets: functions or `defineHandler` definitions by name, or a list of
   * definitions (docs/library.md#typed-handlers); `log` is built in.
   */
  readonly handlers?: HandlersOption;
  /**
   * Handler names tasks may name beyond `handlers`: those that other processes (`punctual worker`) run,
   * so that an API-only process accepts their tasks without loading their code (docs/deploy.md). This
   * replica never claims their runs. @default $PUNCTUAL_HANDLER_NAMES in `serve` (comma-separated), else none
   */
  readonly handlerNames?: readonly string[];
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
  /**
   * Where spans go (docs/operations.md#tracing). @default the provider registered with
   * `@opentelemetry/api` (an OpenTelemetry SDK's), else none
   */
  readonly tracerProvider?: TracerProvider;
  /**
   * The operator key that seals webhook signing secrets at rest (docs/security.md#secrets-at-rest):
   * 32 bytes in base64 or hex, and older keys that only open. @default `PUNCTUAL_SECRET_KEY` and
   * `PUNCTUAL_SECRET_KEY_PREVIOUS` from the environment; neither: secrets in clear
   */
  readonly secretKeys?: { readonly current?: string; readonly previous?: readonly string[] };
}

/** The running parts of a scheduler, built once its store is open. */
export interface SchedulerRuntime {
  readonly store: Store;
  readonly tasks: TaskService;
  readonly dispatch: Dispatch;
  readonly coordinator: Coordinator;
  /** Polls running runs on targets that must be asked (started and stopped with the coordinator). */
  readonly watcher: RunWatcher;
  readonly clock: Clock;
  /** Admissions, claims, run changes and ticks as they happen (`events.on(...)`). */
  readonly events: SchedulerEvents;
  /** Where targets reach the callback routes. */
  readonly callbackBase: CallbackBase;
  /** The configured agent servers. */
  readonly agentServers: readonly AgentServerConfig[];
  /** The thresholds in force, as the services and the coordinator hold them (docs/operations.md#thresholds). */
  readonly thresholds: RuntimeThresholds;
}

/** The thresholds a running scheduler applies, in the units the log shows. */
export interface RuntimeThresholds {
  readonly maxConcurrentRuns: number;
  readonly leaseMs: number;
  readonly tickMs: number;
  readonly sweepMs: number;
  readonly retentionMs: number;
  readonly shutdownTimeoutMs: number;
  /** The silence after which a replica is lost (docs/operations.md#replica-liveness-what-silent-means). */
  readonly livenessTimeoutMs: number;
  /** One owner's launching or running runs at most (docs/semantics.md#fair-share). */
  readonly maxActiveRunsPerOwner: number;
  /** Owners with their own maximum. */
  readonly ownerMaxActiveRuns: Readonly<Record<string, number>>;
  /** The longest `options.run_timeout` at create and edit. */
  readonly maxRunTimeoutMs: number;
  /** Every owner's quotas, and the owners whose differ (docs/operations.md#quotas). */
  readonly quotas: OwnerQuotas & { readonly overrides: Readonly<Record<string, OwnerQuotas>> };
}

/** How long the registered names read for one check serve the next ones (a batch create checks each task). */
const REGISTERED_NAMES_CACHE_MS = 1_000;

/**
 * The handler names live replicas registered (docs/deploy.md#handler-names), read again at most once a
 * second: a batch of a thousand handler tasks costs one read, and a worker started a second ago counts.
 */
function liveHandlerNames(
  store: Store,
  clock: Clock,
  livenessMs: number,
): () => Promise<ReadonlySet<string>> {
  let cached: { at: number; names: Promise<ReadonlySet<string>> } | null = null;
  return () => {
    const now = clock.now();
    if (cached === null || now - cached.at >= REGISTERED_NAMES_CACHE_MS || now < cached.at) {
      const names = registeredHandlerNames(store.replicas, (now - livenessMs) as Instant);
      // A failed read is not kept: the next check asks again.
      names.catch(() => {
        cached = null;
      });
      cached = { at: now, names };
    }
    return cached.names;
  };
}

/** Opens the store and builds the services and the coordinator around it. */
export async function buildRuntime(options: SchedulerOptions): Promise<SchedulerRuntime> {
  const clock = options.clock ?? new SystemClock();
  const logger = options.logger ?? silentLogger;
  const requested = buildPolicy(options.policy);
  const limits = limitsOf(options.policy);
  const newId = createIdGenerator(() => clock.now());
  const secrets = secretSealerFromEnv(
    options.secretKeys === undefined
      ? process.env
      : {
          PUNCTUAL_SECRET_KEY: options.secretKeys.current,
          PUNCTUAL_SECRET_KEY_PREVIOUS: options.secretKeys.previous?.join(","),
        },
  );
  const store = await options.store.open({ newId, secrets });
  await store.migrate();
  // A key added, changed or removed since the last start: every stored secret is brought to the
  // current form before anything reads one (docs/security.md#rotating-the-operator-key).
  const resealed = (await store.resealSecrets?.()) ?? 0;
  if (resealed > 0)
    logger.info({ tasks: resealed }, "signing secrets resealed under the current key");
  // The budget in force is the fleet's stored one; a share given as a part of it follows it.
  const policy = withBudget(
    requested,
    await agreeBudget({
      store,
      requested: requested.maxConcurrentRuns,
      explicit: options.policy?.maxConcurrentRuns !== undefined,
      now: clock.now(),
      log: logger,
    }),
  );
  const events = new SchedulerEvents({
    onListenerError: (error, event) => {
      logger.error({ err: error, event }, "an event listener threw; the scheduler carries on");
    },
  });
  logRunFailures(events, logger);
  const handlers = new HandlerLauncher(options.handlers ?? {}, { log: createLogHandler(logger) });
  const targets = buildTargets(options, handlers, logger);
  const launcher = targets.launcher;
  const wake = new WakeSignal();
  // One window for scheduled admissions and triggers: both count against runs_per_minute.
  const quotas =
    options.policy?.quotas === undefined ? Quotas.UNLIMITED : new Quotas(options.policy.quotas);
  const admissions = new AdmissionWindow();
  const dispatch = createDispatch({ store, policy, events, quotas, admissions });
  const watcher = new RunWatcher({
    recovery: dispatch.recovery,
    runWrites: dispatch.runWrites,
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
  const coordinator = new Coordinator({
    dispatch,
    launcher,
    clock,
    replicaId: options.replicaId ?? `${hostname()}-${randomBytes(4).toString("hex")}`,
    handlerNames: handlers.names,
    inProcess: handlers,
    watcher,
    logger,
    wake,
    events,
    tracer: openTelemetryTracer(options.tracerProvider),
    // docs/schedules.md#holidays: `tasks` is built below, before the first pass.
    holidayUpkeep: (now) => tasks.calendars.extendHolidays(now),
    ...(options.coordinator === undefined ? {} : { options: options.coordinator }),
    ...(store.wakes === undefined ? {} : { wakes: store.wakes }),
    // Only the system clock is corrected by the store's: a virtual clock is the test's to move.
    ...(store.referenceClock === undefined || !(clock instanceof SystemClock)
      ? {}
      : {
          referenceClock: store.referenceClock,
          applyClockOffset: (ms: number) => {
            clock.setOffset(ms);
          },
          wallStepMs: () => clock.wallStepMs(),
        }),
  });
  // docs/targets.md#langgraph-crons: a fresh thread asked to be deleted goes once its run has ended.
  tidyAfterEndedRuns({ events, store, launcher, logger });
  handlers.connect({
    completed: (runId, verdict, attempt) => coordinator.reportCompletion(runId, verdict, attempt),
    lost: (runId, attempt) => coordinator.reportLost(runId, attempt),
    heartbeat: async (runId) => {
      await dispatch.runWrites.recordHeartbeat(runId, clock.now());
    },
  });
  const tasks = new TaskService({
    quotas,
    admissions,
    store,
    threads: targets.threads,
    policy,
    newId,
    newSecret: () => randomBytes(32).toString("base64url"),
    handlerNames: new Set([...handlers.names, ...(options.handlerNames ?? [])]),
    registeredHandlerNames: liveHandlerNames(store, clock, policy.livenessMs),
    handlerInputProblems: (name, input) => handlers.inputProblems(name, input),
    agentServers: targets.agentServers,
    agentTargetProblems: targets.agentTargetProblems,
    webhookTargetProblems: targets.webhookTargetProblems,
    signsWithTaskSecret: targets.signsWithTaskSecret,
    limits,
    signals: {
      wake: () => {
        wake.wake();
      },
      cancelRequested: (run, task) => {
        coordinator.requestCancel(run, task);
      },
    },
    events,
    holidays: new DateHolidaysSource(),
  });
  return {
    store,
    tasks,
    dispatch,
    coordinator,
    watcher,
    clock,
    events,
    callbackBase: targets.callbackBase,
    agentServers: targets.agentServerConfigs,
    thresholds: {
      maxConcurrentRuns: dispatch.budget.policy.maxConcurrentRuns,
      leaseMs: dispatch.budget.policy.leaseMs,
      tickMs: coordinator.settings.tickMs,
      sweepMs: coordinator.settings.sweepMs,
      retentionMs: coordinator.settings.retentionMs,
      shutdownTimeoutMs: coordinator.settings.shutdownTimeoutMs,
      livenessTimeoutMs: dispatch.budget.policy.livenessMs,
      maxActiveRunsPerOwner:
        dispatch.budget.policy.ownerShare?.maxActiveRuns ??
        dispatch.budget.policy.maxConcurrentRuns,
      ownerMaxActiveRuns: Object.fromEntries(dispatch.budget.policy.ownerShare?.overrides ?? []),
      maxRunTimeoutMs: limits.runTimeoutMaxMs,
      quotas: quotas.summary(),
    },
  };
}

/** What a scheduler's metrics read at scrape time (docs/operations.md#metrics-and-probes). */
export function metricsSources(rt: SchedulerRuntime): MetricsSources {
  return {
    inFlight: () => rt.coordinator.inFlight,
    budget: () => rt.thresholds.maxConcurrentRuns,
    queue: () => rt.store.runs.queueStats(rt.clock.now()),
    now: () => rt.clock.now(),
    lastHeartbeatAt: () => rt.coordinator.lastHeartbeatAt,
  };
}
