/**
 * Builders for domain tests: tasks, runs and options at a fixed virtual instant (no clock is read).
 * Tasks and runs are plain values; runs in later states are made with the real transition functions so
 * that their fields are the ones production would write.
 */
import type { ActiveRunView } from "../../src/domain/admission.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "../../src/domain/ids.js";
import { DEFAULT_POLICY, DEFAULT_TASK_OPTIONS } from "../../src/domain/options.js";
import type { CatchUpPolicy, SchedulePolicy, TaskOptions } from "../../src/domain/options.js";
import type { Run } from "../../src/domain/run.js";
import { applyLaunchOutcome, claimRun } from "../../src/domain/run-transitions.js";
import { withTaskPatches } from "../../src/domain/run-change.js";
import type { RunChange, RunTaskContext } from "../../src/domain/run-change.js";
import type { NewRun } from "../../src/domain/new-run.js";
import { nextAfter } from "../../src/domain/schedule/next-after.js";
import { parseSchedule } from "../../src/domain/schedule/parse-schedule.js";
import type { ScheduleSpec } from "../../src/domain/schedule/schedule-types.js";
import type { Task, TaskUserFields } from "../../src/domain/task.js";
import type { Target } from "../../src/domain/target.js";
import { durationMs, instant } from "../../src/domain/time.js";
import type { DurationMs, Instant } from "../../src/domain/time.js";

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The fixed virtual "now" most tests start from: Monday 2 March 2026, 09:00 UTC. */
export const T0: Instant = at("2026-03-02T09:00:00Z");

/** An instant from an ISO-8601 text with offset. */
export function at(text: string): Instant {
  return instant(Date.parse(text));
}

/** `base` moved by `ms`. */
export function plus(base: Instant, ms: number): Instant {
  return instant(base + ms);
}

/** An instant as short readable text: `09:05` on T0's day, else the full ISO text. */
export function hhmm(value: Instant | null): string {
  if (value === null) return "null";
  const iso = new Date(value).toISOString();
  const clock = iso.endsWith(":00.000Z") ? iso.slice(11, 16) : iso.slice(11, 19);
  return iso.startsWith("2026-03-02") ? clock : `${iso.slice(0, 10)} ${clock}`;
}

export const TASK_ID = "task-1" as TaskId;
export const OWNER = "local" as OwnerId;

/** A schedule in its public shape, parsed as at `referenceAt` (T0 by default). */
export function schedule(input: unknown, referenceAt: Instant = T0): ScheduleSpec {
  return parseSchedule(input, { referenceAt });
}

/** Every five minutes from T0 (T0 itself does not fire). */
export const EVERY_5_MIN: ScheduleSpec = schedule({ type: "interval", every: "PT5M" });

export interface OptionOverrides {
  readonly overlap?: TaskOptions["overlap"];
  readonly catchUp?: { readonly windowMs?: number; readonly policy?: CatchUpPolicy };
  readonly lateAfterMs?: number;
  readonly retry?: {
    readonly maxAttempts?: number;
    readonly initialMs?: number;
    readonly maxDelayMs?: number;
  };
  readonly runTimeoutMs?: number;
  readonly queueTimeoutMs?: number;
}

/** Default task options with some fields replaced (durations in plain milliseconds). */
export function options(overrides: OptionOverrides = {}): TaskOptions {
  const d = DEFAULT_TASK_OPTIONS;
  const catchUp = overrides.catchUp ?? {};
  const retry = overrides.retry ?? {};
  return {
    overlap: overrides.overlap ?? d.overlap,
    catchUp: {
      windowMs: durationMs(catchUp.windowMs ?? d.catchUp.windowMs),
      policy: catchUp.policy ?? d.catchUp.policy,
    },
    lateAfterMs: durationMs(overrides.lateAfterMs ?? d.lateAfterMs),
    retry: {
      maxAttempts: retry.maxAttempts ?? d.retry.maxAttempts,
      initialMs: durationMs(retry.initialMs ?? d.retry.initialMs),
      maxDelayMs: durationMs(retry.maxDelayMs ?? d.retry.maxDelayMs),
    },
    runTimeoutMs: durationMs(overrides.runTimeoutMs ?? d.runTimeoutMs),
    queueTimeoutMs: durationMs(overrides.queueTimeoutMs ?? d.queueTimeoutMs),
  };
}

export interface PolicyOverrides {
  readonly maxConcurrentRuns?: number;
  readonly leaseMs?: number;
  readonly minOnceDelayMs?: number;
  readonly busyBackoffMs?: number;
}

/** The default policy with some fields replaced (durations in plain milliseconds). */
export function policy(overrides: PolicyOverrides = {}): SchedulePolicy {
  const d = DEFAULT_POLICY;
  return {
    ...d,
    maxConcurrentRuns: overrides.maxConcurrentRuns ?? d.maxConcurrentRuns,
    leaseMs: durationMs(overrides.leaseMs ?? d.leaseMs),
    minOnceDelayMs: durationMs(overrides.minOnceDelayMs ?? d.minOnceDelayMs),
    busyBackoffMs: durationMs(overrides.busyBackoffMs ?? d.busyBackoffMs),
  };
}

export const LOG_HANDLER: Target = { kind: "handler", name: "log", input: null };

/** The user-owned fields of a task, as `createTask` and `editTask` take them. */
export function userFields(overrides: Partial<TaskUserFields> = {}): TaskUserFields {
  return {
    title: "Morning report",
    description: null,
    schedule: EVERY_5_MIN,
    target: LOG_HANDLER,
    context: { mode: "fresh_thread_per_run" },
    options: options(),
    metadata: {},
    ...overrides,
  };
}

/**
 * An enabled task created at T0 (decided through T0), with any field replaced. `next_run_at` follows the
 * schedule from `decided_through` unless given.
 */
export function buildTask(overrides: Partial<Task> = {}): Task {
  const fields = userFields(overrides);
  const decidedThrough = overrides.decidedThrough ?? T0;
  return {
    id: TASK_ID,
    owner: OWNER,
    status: "enabled",
    nextRunAt: nextAfter(fields.schedule, decidedThrough),
    decidedThrough,
    admittedCount: 0,
    lastRunAt: null,
    lastRunId: null,
    runCount: 0,
    lastError: null,
    version: 1,
    webhookSecret: "secret",
    key: null,
    group: null,
    createdAt: T0,
    updatedAt: T0,
    deletedAt: null,
    defect: null,
    ...fields,
    ...overrides,
  };
}

/** What run transitions need to know about `task`. */
export function taskContext(task: Task = buildTask()): RunTaskContext {
  return {
    scheduleType: task.schedule.type,
    options: task.options,
    targetKind: task.target.kind,
    onceAt: task.schedule.type === "once" ? task.schedule.runAt : null,
  };
}

/** A context for run transitions with the given schedule type and options. */
export function ctxOf(
  scheduleType: RunTaskContext["scheduleType"] = "interval",
  opts: OptionOverrides = {},
): RunTaskContext {
  return { scheduleType, options: options(opts), targetKind: "handler" };
}

/** A queued scheduled run of TASK_ID for T0, on its own fresh thread, with any field replaced. */
export function buildRun(overrides: Partial<Run> = {}): Run {
  const id = overrides.id ?? ("run-1" as RunId);
  const scheduledFor = overrides.scheduledFor ?? T0;
  return {
    id,
    taskId: TASK_ID,
    owner: OWNER,
    trigger: "scheduled",
    scheduledFor,
    fireAt: scheduledFor,
    status: "queued",
    reason: null,
    missedCount: null,
    missedUntil: null,
    attempt: 0,
    failures: 0,
    notBefore: scheduledFor,
    threadScope: "handler",
    threadId: id as string as ThreadId,
    exclusive: true,
    claimToken: null,
    claimExpiresAt: null,
    claimedBy: null,
    targetRunId: null,
    idempotencyKey: `punctual:${TASK_ID}:scheduled:${scheduledFor}`,
    queuedAt: scheduledFor,
    launchedAt: null,
    deadlineAt: null,
    finishedAt: null,
    latenessMs: null,
    late: false,
    cancelRequestedAt: null,
    error: null,
    result: null,
    moved: false,
    ...overrides,
  };
}

export const TOKEN = "token-1" as FencingToken;
export const LEASE_MS = 60_000 as DurationMs;

/** `run` claimed at `now` by replica `r1` with TOKEN. */
export function claimed(
  run: Run = buildRun(),
  now: Instant = run.notBefore,
  opts = options(),
): Run {
  return claimRun(run, { now, token: TOKEN, leaseMs: LEASE_MS, replicaId: "r1" }, opts);
}

/** `run` claimed and launched at `now` (target run `target-1`). */
export function running(run: Run = buildRun(), now: Instant = run.notBefore, ctx = ctxOf()): Run {
  return applyLaunchOutcome(
    claimed(run, now, ctx.options),
    { kind: "launched", targetRunId: "target-1" },
    { now, task: ctx, policy: policy() },
  ).run;
}

/** An active run as admission sees it. */
export function activeView(
  status: ActiveRunView["status"],
  id = "r-active",
  cancelRequested = false,
): ActiveRunView {
  return { id: id as RunId, status, cancelRequested };
}

/** The task after a run change's task patches are written, as the stores write them (docs/semantics.md#completion). */
export function withChange(task: Task, change: RunChange): Task {
  return withTaskPatches(task, change);
}

/** A run as a store would insert it from a `NewRun` (the store mints the id; a fresh thread gets it). */
export function inserted(run: NewRun, id: string): Run {
  return { ...run, id: id as RunId, threadId: run.threadId ?? (id as ThreadId) };
}

/** Freezes a value and everything inside it, to prove a function does not mutate its input. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
