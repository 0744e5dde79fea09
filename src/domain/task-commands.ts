/**
 * Owner commands on a task (docs/semantics.md#task-statuses, docs/semantics.md#task-operations) as pure functions: each takes the task and its active runs as
 * read under the row lock, and returns the new task and the run rows to write. They throw only when the
 * command is refused. Creating and editing the user-owned fields is in task-fields.ts.
 */
import { admit } from "./admission.js";
import type { Admission } from "./admission.js";
import { activeView, admissionRows } from "./admit-task.js";
import {
  ActiveRunError,
  IllegalTransitionError,
  LimitExceededError,
  TaskNotMutableError,
  ValidationError,
} from "./errors.js";
import { idempotencyKeyFor } from "./occurrence.js";
import type { CatchUpPolicy } from "./options.js";
import { isExclusive } from "./options.js";
import type { NewRun } from "./new-run.js";
import type { Run } from "./run.js";
import { holdsSlot } from "./run.js";
import { cancelRun, redriveRun } from "./run-transitions.js";
import { runTaskContext } from "./run-change.js";
import type { RunChange } from "./run-change.js";
import { nextOccurrenceAfter } from "./schedule/schedule-spec.js";
import { isTerminalTaskStatus, TASK_LIMITS } from "./task.js";
import type { Task } from "./task.js";
import { threadScopeOf } from "./target.js";
import { refuseDefective } from "./task-defect.js";
import type { Instant } from "./time.js";

/** What a command writes: the new task (if it changed), new runs, and rewritten active runs. */
export interface CommandOutcome {
  readonly task: Task;
  readonly newRuns: readonly NewRun[];
  readonly runUpdates: readonly Run[];
  /** Runs whose targets must be asked to stop once the transaction commits. */
  readonly cancelTargets: readonly Run[];
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
  reason: "task_paused" | "task_cancelled" | "task_deleted" | "superseded",
  which: (run: Run) => boolean,
): RunChange[] {
  return activeRuns
    .filter((run) => run.status === "queued" && which(run))
    .map((run) => cancelRun(run, now, reason, runTaskContext(task)));
}

function requestCancelActive(
  task: Task,
  activeRuns: readonly Run[],
  now: Instant,
  reason: "cancel_requested" | "task_deleted" | "superseded",
): { updates: Run[]; targets: Run[] } {
  const updates: Run[] = [];
  const targets: Run[] = [];
  for (const run of activeRuns) {
    if (!holdsSlot(run.status) || run.cancelRequestedAt !== null) continue;
    const change = cancelRun(run, now, reason, runTaskContext(task));
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
  refuseDefective(task, "pause");
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

/** Resume: occurrences inside the pause are decided now, per `catch_up` (docs/semantics.md#task-operations). */
export function resumeTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly catchUp: CatchUpPolicy },
): CommandOutcome & { readonly admission: Admission } {
  refuseDefective(task, "resume");
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

/** The rows an admission writes for `task`, with its cancellations applied to the active runs. */
export function applyAdmission(
  task: Task,
  activeRuns: readonly Run[],
  admission: Admission,
  now: Instant,
): CommandOutcome {
  return {
    task: { ...task, ...admission.task },
    ...admissionRows(task, activeRuns, admission, now),
  };
}

/** Cancel the task: terminal `cancelled`, queued runs cancelled; launched runs finish normally. */
export function cancelTask(task: Task, activeRuns: readonly Run[], now: Instant): CommandOutcome {
  refuseDefective(task, "cancel");
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

/**
 * Delete: refused while a run is launching or running unless `force` (which asks it to stop) or
 * `afterRun` (which lets it finish: the task is gone from the API and admits nothing from now, its
 * queued runs are cancelled, and its rows go once no run of it is active).
 */
export function deleteTask(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly force: boolean; readonly afterRun?: boolean },
): CommandOutcome {
  const launched = activeRuns.filter((r) => holdsSlot(r.status));
  if (launched.length > 0 && !ctx.force && ctx.afterRun !== true) {
    throw new TaskNotMutableError(
      "the task has a run launching or running: wait for it, cancel it, or delete with force=true",
    );
  }
  const running = ctx.force
    ? requestCancelActive(task, activeRuns, ctx.now, "task_deleted")
    : { updates: [], targets: [] };
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
    threadScope: threadScopeOf(task.target, task.owner),
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
  moved: false,
} as const;

/** A client's idempotency key for a trigger: 1 to 200 characters (docs/semantics.md#launch bounds the derived key). */
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
  refuseDefective(task, "trigger");
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
 * A trigger that takes a once task's occurrence (docs/semantics.md#task-statuses), as DeerFlow's manual
 * run of a once task does: the run stands for the occurrence (its `scheduled_for` is the task's
 * `run_at`, its fire time now), so the task no longer fires at `run_at` and the run's end is the task's
 * end (`holdsOnceOccurrence`: `completed`, `failed` or `cancelled`). Another schedule's trigger is a
 * plain one (`triggerTask`): a recurring task's occurrences are never taken.
 */
export function triggerTakingOccurrence(
  task: Task,
  activeRuns: readonly Run[],
  ctx: { readonly now: Instant; readonly clientKey: string },
): { readonly task: Task; readonly newRun: NewRun } {
  const newRun = triggerTask(task, activeRuns, ctx);
  if (task.schedule.type !== "once") return { task, newRun };
  const runAt = task.schedule.runAt;
  return {
    task: {
      ...task,
      nextRunAt: null,
      decidedThrough: runAt > task.decidedThrough ? runAt : task.decidedThrough,
    },
    newRun: { ...newRun, scheduledFor: runAt },
  };
}

/**
 * What a manual trigger does to the task's active runs (docs/semantics.md#task-operations): the overlap policy acts on it as on
 * any occurrence, so under `cancel_other` the queued runs are cancelled and the launching or running one
 * is asked to stop (reason `superseded`); the trigger's run waits for it. Other policies change nothing.
 */
export function supersededByTrigger(
  task: Task,
  activeRuns: readonly Run[],
  now: Instant,
): Omit<CommandOutcome, "newRuns"> {
  if (task.options.overlap !== "cancel_other") return { task, runUpdates: [], cancelTargets: [] };
  const queued = cancelQueued(task, activeRuns, now, "superseded", () => true);
  const running = requestCancelActive(task, activeRuns, now, "superseded");
  return {
    task: withVerdicts(task, queued),
    runUpdates: [...queued.map((c) => c.run), ...running.updates],
    cancelTargets: running.targets,
  };
}

/**
 * Redrive one of the task's ended runs (docs/semantics.md#redrive): the run goes back to the queue
 * (`redriveRun`), and the overlap policy acts on it as on a manual trigger: refused under `skip` while the
 * task has an active run; under `cancel_other` the active runs are cancelled or asked to stop.
 * @throws illegal_transition when the run is not failed, timed_out or cancelled
 * @throws run_active under `skip` while the task has an active run
 */
export function redriveTaskRun(
  task: Task,
  activeRuns: readonly Run[],
  run: Run,
  now: Instant,
): Omit<CommandOutcome, "newRuns"> & { readonly run: Run } {
  const redriven = redriveRun(run, now);
  if (task.options.overlap === "skip" && activeRuns.length > 0) {
    throw new ActiveRunError(
      "the task has an active run and its overlap policy is skip: wait for the run, or cancel it",
    );
  }
  const superseded = supersededByTrigger(task, activeRuns, now);
  return { ...superseded, runUpdates: [...superseded.runUpdates, redriven], run: redriven };
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
  refuseDefective(task, "backfill");
  const { now, from, to } = ctx;
  if (!(from < to)) throw ValidationError.of("from", "must be before `to`");
  if (to > now) throw ValidationError.of("to", "must not be in the future");
  const runs: NewRun[] = [];
  // By nominal time: a moved occurrence is replayed as the occurrence it is, at its moved instant.
  let occurrence = nextOccurrenceAfter(task.schedule, (from - 1) as Instant);
  while (occurrence !== null && occurrence.scheduledFor < to) {
    const at = occurrence.scheduledFor;
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
      fireAt: occurrence.fireAt,
      notBefore: now,
      queuedAt: now,
      idempotencyKey: idempotencyKeyFor(task.id, "backfill", at),
      moved: occurrence.moved,
    });
    occurrence = nextOccurrenceAfter(task.schedule, at);
  }
  return runs;
}
