/**
 * Owner commands on a task (SPEC 4.2-4.3) as pure functions: each takes the task and its active runs as
 * read under the row lock, and returns the new task and the run rows to write. They throw only when the
 * command is refused.
 */
import { admit } from "./admission.js";
import type { Admission } from "./admission.js";
import {
  ActiveRunError,
  IllegalTransitionError,
  LimitExceededError,
  TaskNotMutableError,
  ValidationError,
} from "./errors.js";
import type { FieldError } from "./errors.js";
import type { OwnerId, TaskId } from "./ids.js";
import { idempotencyKeyFor } from "./occurrence.js";
import type { CatchUpPolicy, SchedulePolicy } from "./options.js";
import { isExclusive } from "./options.js";
import { newRunFromDecision } from "./new-run.js";
import type { NewRun } from "./new-run.js";
import type { Run } from "./run.js";
import { holdsSlot } from "./run.js";
import { cancelRun } from "./run-transitions.js";
import type { RunChange, RunTaskContext } from "./run-transitions.js";
import { nextAfter, nextDueAfter, nextFireAfter } from "./schedule/schedule-spec.js";
import type { ScheduleSpec } from "./schedule/schedule-spec.js";
import { isTerminalTaskStatus, TASK_LIMITS } from "./task.js";
import type { Task, TaskUserFields } from "./task.js";
import { threadScopeOf, THREAD_ID_PATTERN } from "./target.js";
import type { Instant } from "./time.js";

/** What a command writes: the new task (if it changed), new runs, and rewritten active runs. */
export interface CommandOutcome {
  readonly task: Task;
  readonly newRuns: readonly NewRun[];
  readonly runUpdates: readonly Run[];
  /** Runs whose targets must be asked to stop once the transaction commits. */
  readonly cancelTargets: readonly Run[];
}

export interface CreateContext {
  readonly id: TaskId;
  readonly owner: OwnerId;
  readonly now: Instant;
  readonly policy: SchedulePolicy;
  readonly webhookSecret: string;
}

/** Characters as a reader counts them (Unicode code points), not UTF-16 code units. */
export function characterCount(text: string): number {
  return Array.from(text).length;
}

/** Checks the invariants of user-owned fields that hold whatever the surface (SPEC 4.1, 3.2). */
export function validateUserFields(
  fields: TaskUserFields,
  now: Instant,
  policy: SchedulePolicy,
  checkOnceDelay: boolean,
): void {
  const errors: FieldError[] = [];
  const titleLength = characterCount(fields.title.trim());
  if (titleLength < 1 || titleLength > TASK_LIMITS.titleMax) {
    errors.push({ field: "title", message: `must be 1 to ${TASK_LIMITS.titleMax} characters` });
  }
  if (
    fields.description !== null &&
    characterCount(fields.description) > TASK_LIMITS.descriptionMax
  ) {
    errors.push({
      field: "description",
      message: `must be at most ${TASK_LIMITS.descriptionMax} characters`,
    });
  }
  if (Object.keys(fields.metadata).length > TASK_LIMITS.metadataKeysMax) {
    errors.push({
      field: "metadata",
      message: `must have at most ${TASK_LIMITS.metadataKeysMax} keys`,
    });
  }
  if (fields.context.mode === "reuse_thread" && !THREAD_ID_PATTERN.test(fields.context.threadId)) {
    errors.push({
      field: "context.thread_id",
      message: "must be 1-128 letters, digits, '_', '-' or '.'",
    });
  }
  if (checkOnceDelay && fields.schedule.type === "once") {
    const earliest = now + policy.minOnceDelayMs;
    const runAt = nextAfter(fields.schedule, (now - 1) as Instant);
    if (runAt === null || runAt < earliest) {
      const seconds = policy.minOnceDelayMs / 1000;
      errors.push({
        field: "schedule.run_at",
        message:
          seconds > 0
            ? `must be at least ${seconds} second${seconds === 1 ? "" : "s"} in the future`
            : "must not be in the past",
      });
    }
  }
  if (errors.length > 0) throw new ValidationError(errors);
}

/** A new task: `enabled`, deciding from its creation instant on. */
export function createTask(fields: TaskUserFields, ctx: CreateContext): Task {
  validateUserFields(fields, ctx.now, ctx.policy, true);
  const nextRunAt = nextDueAfter(fields.schedule, ctx.now);
  if (nextRunAt === null) {
    throw ValidationError.of("schedule", "the schedule has no occurrence after now");
  }
  return {
    ...fields,
    title: fields.title.trim(),
    id: ctx.id,
    owner: ctx.owner,
    status: "enabled",
    nextRunAt,
    decidedThrough: ctx.now,
    admittedCount: 0,
    lastRunAt: null,
    lastRunId: null,
    runCount: 0,
    lastError: null,
    version: 1,
    webhookSecret: ctx.webhookSecret,
    createdAt: ctx.now,
    updatedAt: ctx.now,
    deletedAt: null,
  };
}

/**
 * PATCH semantics on user-owned fields, `version` + 1. A schedule edit keeps `decided_through`, so it never
 * re-decides nor loses an occurrence; on a terminal task with a future occurrence it re-arms the task.
 */
export function editTask(
  task: Task,
  patch: Partial<TaskUserFields>,
  ctx: { readonly now: Instant; readonly policy: SchedulePolicy },
): Task {
  const schedule =
    patch.schedule === undefined ? task.schedule : keepAnchor(task.schedule, patch.schedule);
  const fields: TaskUserFields = {
    title: patch.title ?? task.title,
    description: patch.description === undefined ? task.description : patch.description,
    schedule,
    target: patch.target ?? task.target,
    context: patch.context ?? task.context,
    options: patch.options ?? task.options,
    metadata: patch.metadata ?? task.metadata,
  };
  const scheduleChanged = patch.schedule !== undefined;
  validateUserFields(fields, ctx.now, ctx.policy, scheduleChanged);
  const edited: Task = {
    ...task,
    ...fields,
    title: fields.title.trim(),
    version: task.version + 1,
    updatedAt: ctx.now,
  };
  if (!scheduleChanged) return edited;
  if (isTerminalTaskStatus(task.status)) {
    // Re-arming starts from now: the task expected no fires while it was terminal.
    const from = task.decidedThrough > ctx.now ? task.decidedThrough : ctx.now;
    const next = nextDueAfter(schedule, from);
    if (next === null || maxRunsReached(schedule, task.admittedCount))
      return { ...edited, nextRunAt: null };
    return { ...edited, status: "enabled", decidedThrough: from, nextRunAt: next, lastError: null };
  }
  // SPEC 4.3: next_run_at is recomputed from now; decided_through stays, so nothing decided is redone.
  const from = task.decidedThrough > ctx.now ? task.decidedThrough : ctx.now;
  const next = maxRunsReached(schedule, task.admittedCount) ? null : nextDueAfter(schedule, from);
  return { ...edited, nextRunAt: next };
}

function maxRunsReached(schedule: ScheduleSpec, admitted: number): boolean {
  return schedule.maxRuns !== null && admitted >= schedule.maxRuns;
}

/** An interval keeps its anchor unless `every` or `start_at` changed (SPEC 3.3). */
function keepAnchor(previous: ScheduleSpec, next: ScheduleSpec): ScheduleSpec {
  if (previous.type !== "interval" || next.type !== "interval") return next;
  if (previous.everyMs !== next.everyMs || previous.startAt !== next.startAt) return next;
  return { ...next, anchorAt: previous.anchorAt };
}

/** The facts about a task that run transitions need. */
function runContext(task: Task): RunTaskContext {
  return { scheduleType: task.schedule.type, options: task.options };
}

/** Applies the verdicts run changes carry to the task (a once task whose run was cancelled ends). */
function withVerdicts(task: Task, changes: readonly RunChange[]): Task {
  let result = task;
  for (const change of changes) {
    const verdict = change.taskVerdict;
    if (verdict === undefined) continue;
    result = {
      ...result,
      lastError: verdict.lastError,
      ...(verdict.status === undefined ? {} : { status: verdict.status, nextRunAt: null }),
    };
  }
  return result;
}

function cancelQueued(
  task: Task,
  activeRuns: readonly Run[],
  now: Instant,
  reason: "task_paused" | "task_cancelled" | "task_deleted",
  which: (run: Run) => boolean,
): RunChange[] {
  return activeRuns
    .filter((run) => run.status === "queued" && which(run))
    .map((run) => cancelRun(run, now, reason, runContext(task)));
}

function requestCancelActive(
  task: Task,
  activeRuns: readonly Run[],
  now: Instant,
  reason: "cancel_requested" | "task_deleted",
): { updates: Run[]; targets: Run[] } {
  const updates: Run[] = [];
  const targets: Run[] = [];
  for (const run of activeRuns) {
    if (!holdsSlot(run.status) || run.cancelRequestedAt !== null) continue;
    const change = cancelRun(run, now, reason, runContext(task));
    updates.push(change.run);
    if (change.cancelTarget === true) targets.push(change.run);
  }
  return { updates, targets };
}

/** Pause: no new occurrences; queued scheduled runs cancelled; active ones continue unless asked. */
export function pauseTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly cancelRunning: boolean },
): CommandOutcome {
  if (task.status !== "enabled" && task.status !== "paused") {
    throw new IllegalTransitionError("task", task.status, "paused");
  }
  const cancelled = cancelQueued(
    task,
    activeRuns,
    ctx.now,
    "task_paused",
    (r) => r.trigger === "scheduled",
  );
  const running = ctx.cancelRunning
    ? requestCancelActive(task, activeRuns, ctx.now, "cancel_requested")
    : { updates: [], targets: [] };
  // A once task whose only occurrence the pause cancelled has ended: `cancelled`, not `paused`.
  return {
    task: withVerdicts({ ...task, status: "paused", updatedAt: ctx.now }, cancelled),
    newRuns: [],
    runUpdates: [...cancelled.map((c) => c.run), ...running.updates],
    cancelTargets: running.targets,
  };
}

/** Resume: occurrences inside the pause are decided now, per `catch_up` (SPEC 4.3). */
export function resumeTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly catchUp: CatchUpPolicy },
): CommandOutcome & { readonly admission: Admission } {
  if (task.status !== "paused" && task.status !== "enabled") {
    throw new IllegalTransitionError("task", task.status, "enabled");
  }
  const enabled: Task = { ...task, status: "enabled", updatedAt: ctx.now };
  const admission = admit({
    task: enabled,
    now: ctx.now,
    activeRuns: activeRuns.map(activeView),
    mode:
      task.status === "paused" ? { kind: "resume", catchUp: ctx.catchUp } : { kind: "scheduled" },
  });
  return { ...applyAdmission(enabled, activeRuns, admission, ctx.now), admission };
}

/** The read model admission needs of an active run. */
export function activeView(run: Run): {
  id: Run["id"];
  status: "queued" | "launching" | "running";
  cancelRequested: boolean;
} {
  if (run.status !== "queued" && run.status !== "launching" && run.status !== "running") {
    throw new IllegalTransitionError("run", run.status, "active");
  }
  return { id: run.id, status: run.status, cancelRequested: run.cancelRequestedAt !== null };
}

/** The rows an admission writes for `task`, with its cancellations applied to the active runs. */
export function applyAdmission(
  task: Task,
  activeRuns: readonly Run[],
  admission: Admission,
  now: Instant,
): CommandOutcome {
  const scope = { id: task.id, owner: task.owner, threadScope: threadScopeOf(task.target) };
  const updates: Run[] = [];
  const targets: Run[] = [];
  for (const instruction of admission.cancellations) {
    const run = activeRuns.find((r) => r.id === instruction.runId);
    if (run === undefined) continue;
    const change = cancelRun(run, now, instruction.reason, runContext(task));
    updates.push(change.run);
    if (change.cancelTarget === true) targets.push(change.run);
  }
  return {
    task: { ...task, ...admission.task },
    newRuns: admission.decisions.map((d) => newRunFromDecision(scope, d, now)),
    runUpdates: updates,
    cancelTargets: targets,
  };
}

/** Cancel the task: terminal `cancelled`, queued runs cancelled; launched runs finish normally. */
export function cancelTask(task: Task, activeRuns: readonly Run[], now: Instant): CommandOutcome {
  if (isTerminalTaskStatus(task.status)) {
    throw new IllegalTransitionError("task", task.status, "cancelled");
  }
  const cancelled = cancelQueued(task, activeRuns, now, "task_cancelled", () => true);
  return {
    task: { ...task, status: "cancelled", nextRunAt: null, updatedAt: now },
    newRuns: [],
    runUpdates: cancelled.map((c) => c.run),
    cancelTargets: [],
  };
}

/** Delete: refused while a run is launching or running unless `force` (which asks it to stop). */
export function deleteTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly force: boolean },
): CommandOutcome {
  const launched = activeRuns.filter((r) => holdsSlot(r.status));
  if (launched.length > 0 && !ctx.force) {
    throw new TaskNotMutableError(
      "the task has a run launching or running: wait for it, cancel it, or delete with force=true",
    );
  }
  const running = requestCancelActive(task, activeRuns, ctx.now, "task_deleted");
  const queued = cancelQueued(task, activeRuns, ctx.now, "task_deleted", () => true);
  return {
    task: { ...task, nextRunAt: null, deletedAt: ctx.now, updatedAt: ctx.now },
    newRuns: [],
    runUpdates: [...queued.map((c) => c.run), ...running.updates],
    cancelTargets: running.targets,
  };
}

function runFields(task: Task): Pick<NewRun, "exclusive" | "threadScope" | "threadId"> {
  return {
    exclusive: isExclusive(task.options.overlap),
    threadScope: threadScopeOf(task.target),
    threadId: task.context.mode === "reuse_thread" ? task.context.threadId : null,
  };
}

const FRESH = {
  attempt: 0,
  failures: 0,
  claimToken: null,
  claimExpiresAt: null,
  claimedBy: null,
  targetRunId: null,
  launchedAt: null,
  deadlineAt: null,
  finishedAt: null,
  latenessMs: null,
  late: false,
  cancelRequestedAt: null,
  error: null,
  result: null,
  reason: null,
  missedCount: null,
  missedUntil: null,
  status: "queued",
} as const;

/** A client's idempotency key for a trigger: 1 to 200 characters (SPEC 5.4 bounds the derived key). */
export function validateClientKey(key: string): void {
  if (key.length < 1 || key.length > TASK_LIMITS.idempotencyKeyMax) {
    throw ValidationError.of(
      "idempotency_key",
      `must be 1 to ${TASK_LIMITS.idempotencyKeyMax} characters`,
    );
  }
}

/**
 * Trigger (run now): a manual occurrence keyed by the client's key. Allowed on paused and terminal tasks;
 * refused under overlap `skip` while the task has an active run.
 */
export function triggerTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly clientKey: string },
): NewRun {
  validateClientKey(ctx.clientKey);
  if (task.options.overlap === "skip" && activeRuns.length > 0) {
    throw new ActiveRunError(
      "the task has an active run and its overlap policy is skip: wait for the run, or cancel it",
    );
  }
  return {
    ...FRESH,
    ...runFields(task),
    taskId: task.id,
    owner: task.owner,
    trigger: "manual",
    scheduledFor: ctx.now,
    fireAt: ctx.now,
    notBefore: ctx.now,
    queuedAt: ctx.now,
    idempotencyKey: idempotencyKeyFor(task.id, "manual", ctx.clientKey),
  };
}

/**
 * Backfill `[from, to)`: the task's nominal times as `backfill` runs, oldest first, whatever the overlap
 * policy; those on excluded dates would not have fired and are not replayed. Each nominal time has its
 * own key, so a repeat adds nothing (the store drops duplicates).
 */
export function backfillTask(
  task: Task,
  ctx: { readonly now: Instant; readonly from: Instant; readonly to: Instant },
): NewRun[] {
  const { now, from, to } = ctx;
  if (!(from < to)) throw ValidationError.of("from", "must be before `to`");
  if (to > now) throw ValidationError.of("to", "must not be in the future");
  const runs: NewRun[] = [];
  let at = nextFireAfter(task.schedule, (from - 1) as Instant);
  while (at !== null && at < to) {
    if (runs.length >= TASK_LIMITS.backfillMax) {
      throw new LimitExceededError(
        "backfill",
        TASK_LIMITS.backfillMax,
        `a backfill covers at most ${TASK_LIMITS.backfillMax} nominal times`,
      );
    }
    runs.push({
      ...FRESH,
      ...runFields(task),
      taskId: task.id,
      owner: task.owner,
      trigger: "backfill",
      scheduledFor: at,
      fireAt: at,
      notBefore: now,
      queuedAt: now,
      idempotencyKey: idempotencyKeyFor(task.id, "backfill", at),
    });
    at = nextFireAfter(task.schedule, at);
  }
  return runs;
}
