/**
 * The service tests' world: the real TaskService and the dispatch use cases (createDispatch) over the in-memory store, a clock
 * advanced by hand (never the real one, never a timer), a fake thread lookup, a scripted fake launcher and
 * recorded service signals. Every `now` is passed explicitly, as the coordinator and the API pass it.
 */
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import type { MemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { Actor } from "../../src/application/access/actor.js";
import { createDispatch } from "../../src/application/dispatch/dispatch.js";
import type { Dispatch } from "../../src/application/dispatch/dispatch.js";
import type { TaskCreateInput } from "../../src/application/shapes/task-input.js";
import { TaskService } from "../../src/application/tasks/task-service.js";
import type { ServiceSignals } from "../../src/application/tasks/task-service.js";
import { formatInstant } from "../../src/application/shapes/view-mappers.js";
import type { RunView, TaskView } from "../../src/application/shapes/view-mappers.js";
import {
  isPunctualError,
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../src/domain/errors.js";
import { ownerId } from "../../src/domain/ids.js";
import type { OwnerId, RunId, ThreadId } from "../../src/domain/ids.js";
import { DEFAULT_POLICY } from "../../src/domain/options.js";
import type { SchedulePolicy } from "../../src/domain/options.js";
import type { ClaimedRun } from "../../src/domain/ports/run-repository.js";
import type {
  LaunchedRun,
  LaunchRequest,
  RunLauncher,
} from "../../src/domain/ports/run-launcher.js";
import type { ThreadLookup } from "../../src/domain/ports/thread-lookup.js";
import type { Run } from "../../src/domain/run.js";
import type { LaunchOutcome, ReconcileFinding, RunChange } from "../../src/domain/run-change.js";
import type { Task } from "../../src/domain/task.js";
import { durationMs, instant } from "../../src/domain/time.js";
import type { DurationMs, Instant } from "../../src/domain/time.js";

/** Where every scenario starts: Monday 2030-01-07 09:00:00 UTC. */
export const T0: Instant = instant(Date.UTC(2030, 0, 7, 9, 0, 0));

export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
/** The default retention of terminal runs (PUNCTUAL_RETENTION). */
export const RETENTION: DurationMs = durationMs(30 * 24 * HOUR);

/** A retention of `ms` milliseconds, for `purge`. */
export function retention(ms: number): DurationMs {
  return durationMs(ms);
}

/** T0 plus `n` minutes and `plusMs` milliseconds. */
export function minute(n: number, plusMs = 0): Instant {
  return instant(T0 + n * MINUTE + plusMs);
}

/** The RFC 3339 text the views use for `at`. */
export function iso(at: Instant): string {
  return formatInstant(at);
}

export const ALICE: Actor = Object.freeze({ owner: ownerId("alice"), admin: false });
export const BOB: Actor = Object.freeze({ owner: ownerId("bob"), admin: false });
export const ADMIN: Actor = Object.freeze({ owner: ownerId("root"), admin: true });

export const REPLICA = "replica-a";
export const HANDLERS: ReadonlySet<string> = new Set(["log", "report"]);
export const AGENT_SERVERS: ReadonlySet<string> = new Set(["main", "other"]);

/** `now`, moved only by the test. */
export class ManualClock {
  #now: Instant;

  constructor(start: Instant) {
    this.#now = start;
  }

  get now(): Instant {
    return this.#now;
  }

  set(at: Instant): Instant {
    this.#now = at;
    return at;
  }

  advance(ms: number): Instant {
    return this.set(instant(this.#now + ms));
  }
}

/** Threads known per owner and scope; every question is recorded. */
export class FakeThreadLookup implements ThreadLookup {
  readonly #known = new Set<string>();
  readonly calls: { owner: OwnerId; threadScope: string; threadId: ThreadId }[] = [];

  add(owner: OwnerId, threadScope: string, threadId: string): this {
    this.#known.add(`${owner}|${threadScope}|${threadId}`);
    return this;
  }

  threadExists(owner: OwnerId, threadScope: string, threadId: ThreadId): Promise<boolean> {
    this.calls.push({ owner, threadScope, threadId });
    return Promise.resolve(this.#known.has(`${owner}|${threadScope}|${threadId}`));
  }
}

/** What the service told the runtime. */
export class RecordingSignals implements ServiceSignals {
  wakes = 0;
  readonly cancelRequests: { run: Run; task: Task }[] = [];

  wake(): void {
    this.wakes++;
  }

  cancelRequested(run: Run, task: Task): void {
    this.cancelRequests.push({ run, task });
  }
}

/** One scripted answer of the fake launcher. */
export type LaunchStep =
  | { readonly kind: "launched"; readonly targetRunId?: string | null; readonly threadId?: string }
  | { readonly kind: "busy" }
  | { readonly kind: "failed" }
  | { readonly kind: "indeterminate" };

/** A launcher that answers from a script (default: launched), recording what it was asked. */
export class FakeLauncher implements RunLauncher {
  readonly launches: Run[] = [];
  readonly cancels: Run[] = [];
  readonly #script: LaunchStep[] = [];
  finding: ReconcileFinding = { kind: "unknown" };

  /** Queues the answers of the next launches. */
  answer(...steps: LaunchStep[]): this {
    this.#script.push(...steps);
    return this;
  }

  launch(request: LaunchRequest): Promise<LaunchedRun> {
    this.launches.push(request.run);
    const step = this.#script.shift() ?? { kind: "launched" };
    switch (step.kind) {
      case "launched":
        return Promise.resolve({
          targetRunId:
            step.targetRunId === undefined ? `target-${request.run.id}` : step.targetRunId,
          threadId: step.threadId ?? request.run.threadId,
        });
      case "busy":
        return Promise.reject(new ThreadBusyError("the thread has a run active elsewhere"));
      case "failed":
        return Promise.reject(new LaunchFailedError("400: the target refused the input"));
      case "indeterminate":
        return Promise.reject(new LaunchIndeterminateError("504: gateway timeout"));
    }
  }

  cancel(run: Run): Promise<void> {
    this.cancels.push(run);
    return Promise.resolve();
  }

  reconcile(): Promise<ReconcileFinding> {
    return Promise.resolve(this.finding);
  }
}

/** Maps a launcher failure to its outcome, as the coordinator does (docs/semantics.md#launch). */
function outcomeOf(error: unknown): LaunchOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (isPunctualError(error)) {
    if (error.code === "thread_busy") return { kind: "busy", message };
    if (error.code === "launch_failed") return { kind: "failed", message };
  }
  return { kind: "indeterminate", message };
}

export interface Harness {
  readonly clock: ManualClock;
  readonly store: MemoryStore;
  readonly tasks: TaskService;
  readonly dispatch: Dispatch;
  readonly threads: FakeThreadLookup;
  readonly signals: RecordingSignals;
  readonly launcher: FakeLauncher;
  readonly policy: SchedulePolicy;
}

export interface HarnessOptions {
  readonly policy?: Partial<SchedulePolicy>;
  readonly start?: Instant;
}

/** A fresh world: empty memory store, services wired as the composition root wires them. */
export function harness(options: HarnessOptions = {}): Harness {
  const clock = new ManualClock(options.start ?? T0);
  const newId = createIdGenerator(() => clock.now);
  const store = createMemoryStore({ newId });
  const policy: SchedulePolicy = { ...DEFAULT_POLICY, ...options.policy };
  const threads = new FakeThreadLookup();
  const signals = new RecordingSignals();
  let secrets = 0;
  const tasks = new TaskService({
    store,
    threads,
    policy,
    newId,
    newSecret: () => `whsec_test_${++secrets}`,
    handlerNames: HANDLERS,
    agentServers: AGENT_SERVERS,
    signals,
  });
  const dispatch = createDispatch({ store, policy });
  return { clock, store, tasks, dispatch, threads, signals, launcher: new FakeLauncher(), policy };
}

/** The claim step of one replica at `now`. */
export function claim(
  h: Harness,
  now: Instant,
  options: { limit?: number; replicaId?: string } = {},
): Promise<readonly ClaimedRun[]> {
  return h.dispatch.claims.claim({
    now,
    replicaId: options.replicaId ?? REPLICA,
    limit: options.limit ?? 10,
    handlerNames: HANDLERS,
  });
}

/** Calls the fake launcher for a claimed run and records its answer, fenced by the claim token. */
export async function launch(
  h: Harness,
  claimed: ClaimedRun,
  now: Instant,
): Promise<RunChange | null> {
  const { run, task } = claimed;
  const token = run.claimToken;
  if (token === null) throw new Error(`run ${run.id} was claimed without a token`);
  let outcome: LaunchOutcome;
  try {
    const launched = await h.launcher.launch({
      run,
      task,
      signal: new AbortController().signal,
    });
    outcome = {
      kind: "launched",
      targetRunId: launched.targetRunId,
      ...(launched.threadId === run.threadId
        ? {}
        : { threadMismatch: `the target answered for thread ${launched.threadId}` }),
    };
  } catch (error) {
    outcome = outcomeOf(error);
  }
  return h.dispatch.runWrites.recordLaunch(run.id, token, outcome, now);
}

/** Claims at `now` and launches each claimed run, returning the launched runs. */
export async function claimAndLaunch(
  h: Harness,
  now: Instant,
  options: { limit?: number; replicaId?: string } = {},
): Promise<Run[]> {
  const launched: Run[] = [];
  for (const claimed of await claim(h, now, options)) {
    const change = await launch(h, claimed, now);
    if (change !== null) launched.push(change.run);
  }
  return launched;
}

/** Every run of a task, newest first, read page by page through the service. */
export async function history(h: Harness, actor: Actor, taskId: string): Promise<RunView[]> {
  const runs: RunView[] = [];
  let cursor: string | undefined;
  do {
    const page = await h.tasks.listRuns(actor, taskId, {
      limit: 2,
      ...(cursor === undefined ? {} : { cursor }),
    });
    runs.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return runs;
}

/** A task as stored, through the service (admin view, so any owner). */
export function reload(h: Harness, id: string): Promise<TaskView> {
  return h.tasks.get(ADMIN, id);
}

export function reloadRun(h: Harness, id: RunId | string): Promise<RunView> {
  return h.tasks.getRun(ADMIN, id);
}

/** A cron task input: agent target on server `main`, fresh threads, UTC. */
export function cronInput(cron: string, extra: Partial<TaskCreateInput> = {}): TaskCreateInput {
  return {
    title: "Daily report",
    schedule: { type: "cron", cron, timezone: "UTC" },
    target: { kind: "agent", server: "main", assistant_id: "reporter", input: { messages: [] } },
    ...extra,
  };
}

/** A once task input at `runAt`. */
export function onceInput(runAt: Instant, extra: Partial<TaskCreateInput> = {}): TaskCreateInput {
  return cronInput("* * * * *", {
    title: "Reminder",
    schedule: { type: "once", run_at: iso(runAt) },
    ...extra,
  });
}

/** A handler task input. */
export function handlerInput(cron: string, extra: Partial<TaskCreateInput> = {}): TaskCreateInput {
  return cronInput(cron, { target: { kind: "handler", name: "log" }, ...extra });
}

/** Creates a task as `actor` at the clock's `now`. */
export async function createTask(
  h: Harness,
  input: TaskCreateInput,
  actor: Actor = ALICE,
): Promise<TaskView> {
  const { task } = await h.tasks.create(actor, input, h.clock.now);
  return task;
}
