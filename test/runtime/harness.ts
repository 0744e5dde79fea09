/**
 * A coordinator on the virtual clock for tests: a memory store, the real services, and a fake launcher
 * whose launches, cancels and reconciliations the test controls and counts. Time moves only when the test
 * says so; `runUntil` replays wake-ups the way `punctual/testing` does.
 */
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { createDispatch } from "../../src/application/dispatch/dispatch.js";
import type { Logger } from "../../src/application/events/logger.js";
import type { SchedulerEvents } from "../../src/application/events/internal-events.js";
import type { Tracer } from "../../src/application/events/tracing.js";
import type { ReferenceClock, Store, WakeSource } from "../../src/domain/ports/store.js";
import { TaskService } from "../../src/application/tasks/task-service.js";
import type { TaskView } from "../../src/application/shapes/view-mappers.js";
import { buildPolicy } from "../../src/application/policy/policy-options.js";
import type { PolicyOptions } from "../../src/application/policy/policy-options.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { AbortSignalLike } from "../../src/domain/abort.js";
import type { RunId, TaskId } from "../../src/domain/ids.js";
import type {
  LaunchedRun,
  LaunchRequest,
  RunLauncher,
} from "../../src/domain/ports/run-launcher.js";
import type { Run } from "../../src/domain/run.js";
import type { ReconcileFinding } from "../../src/domain/run-change.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { Coordinator } from "../../src/runtime/coordinator.js";
import type { InProcessRuns } from "../../src/runtime/coordinator-deps.js";
import type { CoordinatorOptions } from "../../src/runtime/coordinator-options.js";
import { WakeSignal } from "../../src/runtime/wake-signal.js";

/** One call of the fake launcher: the test settles it (or the behaviour did). */
export interface LaunchCall {
  readonly run: Run;
  readonly task: Task;
  readonly signal: AbortSignalLike;
  /** The virtual instant of the call. */
  readonly at: Instant;
  readonly settled: boolean;
  resolve(launched?: Partial<LaunchedRun>): void;
  reject(error: unknown): void;
}

type Behaviour = (call: LaunchCall) => void;

/** Resolves every launch at once as started on the requested thread. */
export const launchAtOnce: Behaviour = (call) => {
  call.resolve();
};
/** Leaves every launch pending until the test settles it. */
export const leavePending: Behaviour = () => undefined;

export class FakeLauncher implements RunLauncher {
  readonly calls: LaunchCall[] = [];
  readonly cancels: Run[] = [];
  readonly reconciles: Run[] = [];
  behaviour: Behaviour = launchAtOnce;
  finding: (run: Run) => ReconcileFinding = () => ({ kind: "unknown" });
  readonly #clock: VirtualClock;

  constructor(clock: VirtualClock) {
    this.#clock = clock;
  }

  launch(request: LaunchRequest): Promise<LaunchedRun> {
    return new Promise((resolvePromise, rejectPromise) => {
      let settled = false;
      const call: LaunchCall = {
        run: request.run,
        task: request.task,
        signal: request.signal,
        at: this.#clock.now(),
        get settled() {
          return settled;
        },
        resolve: (launched = {}) => {
          settled = true;
          resolvePromise({
            targetRunId: `t-${request.run.id}`,
            threadId: request.run.threadId,
            ...launched,
          });
        },
        reject: (error) => {
          settled = true;
          rejectPromise(error instanceof Error ? error : new Error(String(error)));
        },
      };
      this.calls.push(call);
      this.behaviour(call);
    });
  }

  cancel(run: Run): Promise<void> {
    this.cancels.push(run);
    return Promise.resolve();
  }

  reconcile(run: Run): Promise<ReconcileFinding> {
    this.reconciles.push(run);
    return Promise.resolve(this.finding(run));
  }

  /** Calls for one task's runs. */
  callsFor(taskId: string): LaunchCall[] {
    return this.calls.filter((call) => call.run.taskId === taskId);
  }

  /** Launch calls per (run, attempt): docs/semantics.md#guarantees says each is at most 1. */
  launchesPerAttempt(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const call of this.calls) {
      const key = `${call.run.id}#${call.run.attempt}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  }
}

/** A logger that keeps every line, to assert on what was logged. */
export class RecordingLogger implements Logger {
  readonly lines: { level: string; obj: object; msg: string }[] = [];
  debug(obj: object, msg = ""): void {
    this.lines.push({ level: "debug", obj, msg });
  }
  info(obj: object, msg = ""): void {
    this.lines.push({ level: "info", obj, msg });
  }
  warn(obj: object, msg = ""): void {
    this.lines.push({ level: "warn", obj, msg });
  }
  error(obj: object, msg = ""): void {
    this.lines.push({ level: "error", obj, msg });
  }
  at(level: string): string[] {
    return this.lines.filter((line) => line.level === level).map((line) => line.msg);
  }
}

export interface HarnessOptions {
  readonly start?: string;
  readonly policy?: PolicyOptions;
  readonly coordinator?: CoordinatorOptions;
  /** Share a store and clock with another harness (a second replica). */
  readonly store?: Store;
  readonly clock?: VirtualClock;
  readonly launcher?: FakeLauncher;
  readonly replicaId?: string;
  /** The handler names the coordinator serves (claims and registers). @default HANDLER_NAMES */
  readonly servedHandlers?: ReadonlySet<string>;
  /** Runs executing in this process (handler targets). @default none */
  readonly inProcess?: InProcessRuns;
  /** The events the services and the coordinator send. @default none */
  readonly events?: SchedulerEvents;
  /** The store's clock, for the skew correction. */
  readonly referenceClock?: ReferenceClock;
  /** Receives measured clock offsets (with `referenceClock`). */
  readonly applyClockOffset?: (offsetMs: number) => void;
  /** How far the wall clock stepped since the last offset applied (with `referenceClock`). */
  readonly wallStepMs?: () => number;
  /** Spans of the coordinator and its launches. @default none */
  readonly tracer?: Tracer;
  /** Wake-ups from other replicas (`coordinator.listen()` subscribes). @default none */
  readonly wakes?: WakeSource;
}

/** Handler names the fake launcher "runs": tasks target `{ kind: "handler", name: "job" }`. */
export const HANDLER_NAMES: ReadonlySet<string> = new Set(["job"]);

export type Harness = ReturnType<typeof createHarness>;

/** A replica: the real services and coordinator around a memory store, on a virtual clock. */
export function createHarness(options: HarnessOptions = {}) {
  const clock =
    options.clock ?? new VirtualClock(Date.parse(options.start ?? "2026-01-05T00:00:00Z"));
  const newId = createIdGenerator(() => clock.now());
  const store = options.store ?? createMemoryStore({ newId });
  const policy = buildPolicy(options.policy);
  const launcher = options.launcher ?? new FakeLauncher(clock);
  const logger = new RecordingLogger();
  const wake = new WakeSignal();
  const events = options.events === undefined ? {} : { events: options.events };
  const dispatch = createDispatch({ store, policy, ...events });
  const coordinator = new Coordinator({
    dispatch,
    launcher,
    clock,
    replicaId: options.replicaId ?? "replica-a",
    handlerNames: options.servedHandlers ?? HANDLER_NAMES,
    logger,
    wake,
    ...events,
    // Sweeps run on every tick unless a test says otherwise: the sweep paths are what is tested.
    options: { sweepMs: 0, ...options.coordinator },
    ...(options.applyClockOffset === undefined
      ? {}
      : { applyClockOffset: options.applyClockOffset }),
    ...(options.referenceClock === undefined ? {} : { referenceClock: options.referenceClock }),
    ...(options.wallStepMs === undefined ? {} : { wallStepMs: options.wallStepMs }),
    ...(options.inProcess === undefined ? {} : { inProcess: options.inProcess }),
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    ...(options.wakes === undefined ? {} : { wakes: options.wakes }),
  });
  const tasks = new TaskService({
    store,
    threads: { threadExists: () => Promise.resolve(true) },
    policy,
    newId,
    newSecret: () => "secret",
    handlerNames: HANDLER_NAMES,
    agentServers: null,
    signals: {
      wake: () => {
        wake.wake();
      },
      cancelRequested: (run, task) => {
        coordinator.requestCancel(run, task);
      },
    },
    ...events,
  });

  /** One tick at the current instant, then lets launches and writes that can finish, finish. */
  const tick = async (): Promise<void> => {
    await coordinator.tick();
    await flushPromises();
  };

  return {
    clock,
    store,
    policy,
    launcher,
    logger,
    dispatch,
    coordinator,
    tasks,
    tick,
    /** Creates a task as the library's owner, with the fake launcher's handler target by default. */
    create: async (input: Record<string, unknown>): Promise<TaskView> => {
      const created = await tasks.create(
        LOCAL_ACTOR,
        { title: "test", target: { kind: "handler", name: "job" }, ...input },
        clock.now(),
      );
      return created.task;
    },
    /** Sets the clock (forward only) and ticks once. */
    at: async (iso: string | number): Promise<void> => {
      await clock.set((typeof iso === "string" ? Date.parse(iso) : iso) as Instant);
      await tick();
    },
    /** Moves the clock forward by `ms` and ticks once. */
    advance: async (ms: number): Promise<void> => {
      await clock.advance(ms);
      await tick();
    },
    /** Ticks at every wake-up the coordinator would sleep until, up to `until` (at most every `stepMs`). */
    runUntil: async (until: string | number, stepMs = 1000): Promise<void> => {
      const target = typeof until === "string" ? Date.parse(until) : until;
      for (;;) {
        await tick();
        const now = clock.now();
        if (now >= target) return;
        const next = await dispatch.wakeUps.nextWakeAt();
        const wakeAt = next !== null && next > now ? Math.min(next, now + stepMs) : now + stepMs;
        await clock.set(Math.min(target, wakeAt) as Instant);
      }
    },
    /** Every run of a task, oldest nominal time first. */
    runs: async (taskId: string): Promise<Run[]> => {
      const page = await store.runs.listRuns({ kind: "all" }, taskId as TaskId, { limit: 200 });
      return [...page.items].reverse();
    },
    run: async (id: string): Promise<Run> => {
      const run = await store.runs.findRun({ kind: "all" }, id as RunId);
      if (run === null) throw new Error(`no run ${id}`);
      return run;
    },
    task: async (id: string): Promise<Task> => {
      const task = await store.tasks.findTask({ kind: "all" }, id as TaskId);
      if (task === null) throw new Error(`no task ${id}`);
      return task;
    },
    /** Every run in the store that holds a slot, for the one-run-per-thread invariant. */
    slotHolders: async (taskIds: readonly string[]): Promise<Run[]> => {
      const all = await Promise.all(
        taskIds.map((id) => store.runs.listRuns({ kind: "all" }, id as TaskId, { limit: 200 })),
      );
      return all
        .flatMap((page) => page.items)
        .filter((r) => r.status === "launching" || r.status === "running");
    },
  };
}

/** `ms` after the ISO instant. */
export function after(iso: string, ms: number): number {
  return Date.parse(iso) + ms;
}

export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;

/** `base` with some of its run repository's methods replaced (the others bound to it). */
export function withRunMethods(base: Store, replaced: Partial<Store["runs"]>): Store {
  const runs = new Proxy(base.runs, {
    get: (target, property) => {
      const own: unknown = Reflect.get(replaced, property);
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
  return {
    kind: base.kind,
    tasks: base.tasks,
    replicas: base.replicas,
    runs,
    migrate: () => base.migrate(),
    close: () => base.close(),
    ping: () => base.ping(),
    migrationStatus: () => base.migrationStatus(),
  };
}
