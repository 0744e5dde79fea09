/**
 * Builders for the contract suite: tasks made by the domain's `createTask` from public schedule inputs,
 * owners and scopes, and a fixed virtual `now` (T0). No test here reads the real clock.
 */
import type { OwnerScope } from "../../src/domain/ports/queries.js";
import { ownerId, taskId, threadId } from "../../src/domain/ids.js";
import type { OwnerId, TaskId } from "../../src/domain/ids.js";
import { DEFAULT_POLICY, DEFAULT_TASK_OPTIONS } from "../../src/domain/options.js";
import type { CatchUpOptions, RetryOptions, TaskOptions } from "../../src/domain/options.js";
import { parseSchedule } from "../../src/domain/schedule/parse-schedule.js";
import type { ScheduleInput } from "../../src/domain/schedule/schedule-input.js";
import type { ExecutionContext, JsonValue, Target } from "../../src/domain/target.js";
import { createTask } from "../../src/domain/task-fields.js";
import type { Task } from "../../src/domain/task.js";
import { instant } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";

/** The virtual "now" every scenario starts from: Monday 2030-01-07 09:00:00.000 UTC. */
export const T0: Instant = instant(Date.UTC(2030, 0, 7, 9, 0, 0, 0));

export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;

/** T0 plus `ms` milliseconds. */
export function at(ms: number): Instant {
  return instant(T0 + ms);
}

/** T0 plus `n` minutes: `minute(1)` is 09:01, the first fire of an every-minute cron created at T0. */
export function minute(n: number, plusMs = 0): Instant {
  return at(n * MINUTE + plusMs);
}

export function isoOf(value: Instant): string {
  return new Date(value).toISOString();
}

export const ALICE: OwnerId = ownerId("alice");
export const BOB: OwnerId = ownerId("bob");
export const ALICE_SCOPE: OwnerScope = Object.freeze({ kind: "owner", owner: ALICE });
export const BOB_SCOPE: OwnerScope = Object.freeze({ kind: "owner", owner: BOB });
export const ALL: OwnerScope = Object.freeze({ kind: "all" });

export const EVERY_MINUTE: ScheduleInput = Object.freeze({ type: "cron", cron: "* * * * *" });

export function cron(expression: string, timezone = "UTC"): ScheduleInput {
  return { type: "cron", cron: expression, timezone };
}

export function onceAt(runAt: Instant): ScheduleInput {
  return { type: "once", run_at: isoOf(runAt) };
}

export function every(duration: string): ScheduleInput {
  return { type: "interval", every: duration };
}

export function agentTarget(server = "main", input: JsonValue = { messages: [] }): Target {
  return { kind: "agent", server, assistantId: "assistant-1", input };
}

export function webhookTarget(): Target {
  return {
    kind: "webhook",
    url: "https://hooks.example.com/punctual",
    method: "POST",
    headers: { "x-team": "ops" },
    input: { report: "daily" },
    cancelUrl: null,
    idempotent: true,
  };
}

export function handlerTarget(name: string): Target {
  return { kind: "handler", name, input: null };
}

export const FRESH_THREAD: ExecutionContext = Object.freeze({ mode: "fresh_thread_per_run" });

export function reuseThread(id: string): ExecutionContext {
  return { mode: "reuse_thread", threadId: threadId(id) };
}

/** Options to change from the defaults; nested groups may be given in part. */
export type OptionsPatch = Partial<Omit<TaskOptions, "catchUp" | "retry">> & {
  readonly catchUp?: Partial<CatchUpOptions>;
  readonly retry?: Partial<RetryOptions>;
};

export function taskOptions(patch: OptionsPatch = {}): TaskOptions {
  return {
    ...DEFAULT_TASK_OPTIONS,
    ...patch,
    catchUp: { ...DEFAULT_TASK_OPTIONS.catchUp, ...patch.catchUp },
    retry: { ...DEFAULT_TASK_OPTIONS.retry, ...patch.retry },
  };
}

export interface TaskFixture {
  readonly owner?: OwnerId;
  readonly title?: string;
  readonly description?: string | null;
  readonly schedule?: ScheduleInput;
  readonly target?: Target;
  readonly context?: ExecutionContext;
  readonly options?: OptionsPatch;
  readonly metadata?: Readonly<Record<string, string>>;
  /** The creation instant, and the "now" the schedule is parsed against. @default T0 */
  readonly createdAt?: Instant;
  readonly key?: string | null;
  readonly group?: string | null;
}

let taskSequence = 0;

/** Task ids sort in creation order, so that equal `created_at`s still list in creation order. */
export function nextTaskId(): TaskId {
  taskSequence++;
  return taskId(`task-${String(taskSequence).padStart(6, "0")}`);
}

/** A new task as the service creates it: every-minute cron, agent target, fresh threads, by Alice. */
export function buildTask(fixture: TaskFixture = {}): Task {
  const now = fixture.createdAt ?? T0;
  const schedule = parseSchedule(fixture.schedule ?? EVERY_MINUTE, { referenceAt: now });
  return createTask(
    {
      title: fixture.title ?? "Daily report",
      description: fixture.description ?? null,
      schedule,
      target: fixture.target ?? agentTarget(),
      context: fixture.context ?? FRESH_THREAD,
      options: taskOptions(fixture.options),
      metadata: fixture.metadata ?? {},
    },
    {
      id: nextTaskId(),
      owner: fixture.owner ?? ALICE,
      now,
      policy: DEFAULT_POLICY,
      webhookSecret: "whsec_contract",
      key: fixture.key ?? null,
      group: fixture.group ?? null,
    },
  );
}
