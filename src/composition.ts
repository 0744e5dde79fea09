/**
 * The composition root's entry point for the library (docs/architecture.md#the-composition-root):
 * `createScheduler`. The server `punctual serve` runs is composition-server.ts's, the stores and token
 * service the CLI opens composition-stores.ts's, the option names both check composition-options.ts's.
 * It only wires: the runtime is built in composition-runtime.ts, the targets in composition-targets.ts,
 * the operations the library offers are the application's (scheduler-api.ts). Nothing but the package
 * entry points and the CLI imports this file.
 */
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
import type { HandlerInputMap } from "./application/shapes/handler-input-types.js";
import type {
  HandlerInputsOf,
  HandlersOption,
} from "./adapters/launchers/handler/handler-definition.js";
import type { MetricsOptions, SchedulerMetrics } from "./adapters/metrics/scheduler-metrics.js";
import { optionKeys } from "./application/policy/known-options.js";
import { buildRuntime, metricsSources } from "./composition-runtime.js";
import type { SchedulerOptions, SchedulerRuntime } from "./composition-runtime.js";
import { checkOptionKeys, SCHEDULER_KEYS } from "./composition-options.js";

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

const CREATE_SCHEDULER_KEYS = [
  ...SCHEDULER_KEYS,
  ...optionKeys<Omit<CreateSchedulerOptions, keyof SchedulerOptions>>()([
    "schedules",
    "schedulesGroup",
    "prune",
  ]),
];

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
  /** Read through a call: `stopping` changes while `start()` awaits. */
  const stopAsked = (): boolean => stopping !== null;
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
      // A stop asked while the store was opening wins: the coordinator does not start after it.
      if (stopAsked()) return;
      if (options.schedules !== undefined) {
        const plan = await applySchedules({
          schedules: options.schedules,
          group: options.schedulesGroup,
          prune: options.prune,
        });
        for (const line of planLines(plan)) logger.info({ group: plan.group }, `declared: ${line}`);
      }
      await rt.coordinator.listen();
      if (stopAsked()) return;
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
    owner: actor.owner,
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
