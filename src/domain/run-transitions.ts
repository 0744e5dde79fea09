/**
 * What happens to a run after admission: claim, launch outcome, completion, cancellation and the sweeps
 * (SPEC 5.2, 5.4-5.6). Each function returns the new run plus what the task must record, and refuses a move
 * the state machine forbids. Launch bookkeeping and completion touch disjoint task fields (SPEC 5.5).
 */
import { IllegalTransitionError } from "./errors.js";
import type { FencingToken, RunId } from "./ids.js";
import { hashFraction } from "./occurrence.js";
import type { RetryOptions, SchedulePolicy, TaskOptions } from "./options.js";
import { isTerminalRunStatus, moveRun } from "./run.js";
import type { Run, RunReason } from "./run.js";
import type { JsonValue } from "./target.js";
import type { Task, TaskStatus } from "./task.js";
import type { DurationMs, Instant } from "./time.js";

/** Launch bookkeeping for the task: written only by a recorded launch. */
export interface TaskLaunchPatch {
  readonly lastRunAt: Instant;
  readonly lastRunId: RunId;
  readonly runCountIncrement: 1;
}

/** Verdict fields for the task: written only by completion (status only for a once task's scheduled run). */
export interface TaskVerdictPatch {
  readonly lastError: string | null;
  readonly status?: Extract<TaskStatus, "completed" | "failed" | "cancelled">;
}

export interface RunChange {
  readonly run: Run;
  readonly taskLaunch?: TaskLaunchPatch;
  readonly taskVerdict?: TaskVerdictPatch;
  /** The target should be asked to stop the run (cancel hook). */
  readonly cancelTarget?: boolean;
}

/** The facts about the task that run transitions need. */
export interface RunTaskContext {
  readonly scheduleType: "cron" | "once" | "interval";
  readonly options: TaskOptions;
}

/** A task's `RunTaskContext`. */
export function runTaskContext(task: Task): RunTaskContext {
  return { scheduleType: task.schedule.type, options: task.options };
}

/**
 * The task after a run change's task patches are written (SPEC 5.5): launch bookkeeping (`last_run_*`,
 * `run_count` moved relatively) and verdict fields only; every other field is left as it was.
 */
export function withTaskPatches(
  task: Task,
  patches: { readonly taskLaunch?: TaskLaunchPatch; readonly taskVerdict?: TaskVerdictPatch },
): Task {
  const launch = patches.taskLaunch;
  const verdict = patches.taskVerdict;
  return {
    ...task,
    ...(launch === undefined
      ? {}
      : {
          lastRunAt: launch.lastRunAt,
          lastRunId: launch.lastRunId,
          runCount: task.runCount + launch.runCountIncrement,
        }),
    ...(verdict === undefined
      ? {}
      : { lastError: verdict.lastError, status: verdict.status ?? task.status }),
  };
}

/** Claims a queued run for launch: `launching`, one more attempt, a lease and a fencing token. */
export function claimRun(
  run: Run,
  claim: { now: Instant; token: FencingToken; leaseMs: DurationMs; replicaId: string },
  options: TaskOptions,
): Run {
  const latenessMs = claim.now - run.fireAt;
  return moveRun(run, "launching", {
    attempt: run.attempt + 1,
    claimToken: claim.token,
    claimExpiresAt: (claim.now + claim.leaseMs) as Instant,
    claimedBy: claim.replicaId,
    late: latenessMs > options.lateAfterMs,
  });
}

/** What the launcher said (SPEC 5.4): exactly one of four outcomes. */
export type LaunchOutcome =
  | {
      readonly kind: "launched";
      readonly targetRunId: string | null;
      readonly threadMismatch?: string;
    }
  | { readonly kind: "busy"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }
  | {
      readonly kind: "indeterminate";
      readonly message: string;
      /** When the request was sent: the run may have started from then on (its `launched_at`). */
      readonly sentAt?: Instant;
    };

/** Exponential backoff with deterministic jitter (up to +50%), capped at `maxDelayMs`. */
export function retryBackoffMs(retry: RetryOptions, failures: number, seed: string): DurationMs {
  const base = Math.min(retry.maxDelayMs, retry.initialMs * 2 ** Math.max(0, failures - 1));
  const spread = Math.floor(base * 0.5 * hashFraction(`${seed}|${failures}`));
  return Math.min(retry.maxDelayMs, base + spread) as DurationMs;
}

/** Applies a launch outcome to a `launching` run (the write is fenced by the claim token). */
export function applyLaunchOutcome(
  run: Run,
  outcome: LaunchOutcome,
  ctx: { now: Instant; task: RunTaskContext; policy: SchedulePolicy },
): RunChange {
  const { now, task } = ctx;
  if (run.status !== "launching") return lateLaunchOutcome(run, outcome, now);
  switch (outcome.kind) {
    case "launched":
    case "indeterminate":
      // An uncertain launch may have started when its request was sent, not when it timed out: the
      // later instant would inflate lateness and push back its deadline and its reconciliation.
      return launched(
        run,
        outcome.kind === "indeterminate" ? (outcome.sentAt ?? now) : now,
        task.options,
        {
          targetRunId: outcome.kind === "launched" ? outcome.targetRunId : null,
          error:
            outcome.kind === "indeterminate"
              ? `launch outcome unknown, treated as launched: ${outcome.message}`
              : (outcome.threadMismatch ?? null),
        },
      );
    case "busy":
      // Nothing started: a run asked to stop ends here instead of waiting for the thread again.
      if (run.cancelRequestedAt !== null) return cancelledBeforeStart(run, now, task);
      // Not a failure: back to the queue in the same FIFO place (queued_at unchanged).
      return {
        run: moveRun(run, "queued", {
          ...releasedClaim(),
          notBefore: (now + ctx.policy.busyBackoffMs) as Instant,
        }),
      };
    case "failed":
      if (run.cancelRequestedAt !== null) return cancelledBeforeStart(run, now, task);
      return failAttempt(run, now, task, "launch_failed", outcome.message);
  }
}

/**
 * A launch outcome together with the verdict the target gave at launch (a webhook's 2xx answer): the
 * launch is booked as `applyLaunchOutcome` books it, then the verdict is recorded if the launch left the
 * run `running` (a launching -> succeeded move in one write; `launched_at` stays). Without a verdict it is
 * `applyLaunchOutcome`.
 */
export function applyLaunchAnswer(
  run: Run,
  answer: { readonly outcome: LaunchOutcome; readonly completion?: CompletionVerdict },
  ctx: { now: Instant; task: RunTaskContext; policy: SchedulePolicy },
): RunChange {
  const launch = applyLaunchOutcome(run, answer.outcome, ctx);
  if (answer.completion === undefined || launch.run.status !== "running") return launch;
  const verdict = completeRun(launch.run, answer.completion, { now: ctx.now, task: ctx.task });
  // Object.assign, not a spread: a spread followed by new fields is slow in V8, and this is per launch.
  return Object.assign(
    {},
    verdict,
    launch.taskLaunch === undefined ? {} : { taskLaunch: launch.taskLaunch },
    launch.cancelTarget === undefined ? {} : { cancelTarget: launch.cancelTarget },
  );
}

/** The run started at `launchedAt` (the run timeout counts from there, SPEC 5.5). */
function launched(
  run: Run,
  launchedAt: Instant,
  options: TaskOptions,
  fields: { targetRunId: string | null; error: string | null },
): RunChange {
  const latenessMs = Math.max(0, launchedAt - run.fireAt);
  return {
    run: moveRun(run, "running", {
      claimToken: null,
      claimExpiresAt: null,
      targetRunId: fields.targetRunId,
      launchedAt,
      deadlineAt: (launchedAt + options.runTimeoutMs) as Instant,
      latenessMs,
      late: latenessMs > options.lateAfterMs,
      error: fields.error,
    }),
    taskLaunch: { lastRunAt: launchedAt, lastRunId: run.id, runCountIncrement: 1 },
    cancelTarget: run.cancelRequestedAt !== null,
  };
}

/**
 * A launch outcome for a run that is no longer `launching`. Its verdict overtook the launch record (the
 * target answered fast): the launch is booked and the verdict stands. Any other state means the outcome
 * is stale, which the claim token normally prevents: refused.
 */
const OVERTAKING_VERDICTS: readonly Run["status"][] = ["succeeded", "failed", "cancelled"];

function lateLaunchOutcome(run: Run, outcome: LaunchOutcome, now: Instant): RunChange {
  const overtook = run.claimToken !== null && OVERTAKING_VERDICTS.includes(run.status);
  if (!overtook) {
    throw new IllegalTransitionError("run", run.status, `launch outcome ${outcome.kind}`);
  }
  const released = { ...run, claimToken: null, claimExpiresAt: null };
  if (outcome.kind !== "launched" && outcome.kind !== "indeterminate") return { run: released };
  return {
    run: { ...released, launchedAt: run.launchedAt ?? now },
    taskLaunch: { lastRunAt: run.launchedAt ?? now, lastRunId: run.id, runCountIncrement: 1 },
  };
}

/** A run asked to stop that certainly never started: it ends `cancelled` with the reason it was asked. */
function cancelledBeforeStart(run: Run, now: Instant, task: RunTaskContext): RunChange {
  const message = "cancelled before it started";
  return {
    run: moveRun(run, "cancelled", {
      ...finished(now),
      reason: run.reason ?? "cancel_requested",
      error: message,
    }),
    taskVerdict: verdictFor(run, task, "cancelled", message),
  };
}

function releasedClaim(): Partial<Run> {
  return { claimToken: null, claimExpiresAt: null };
}

function finished(now: Instant): Partial<Run> {
  // Written out rather than spread from `releasedClaim()`: V8 builds a spread followed by new fields
  // through a slow path (about a microsecond each), and every run ends through here.
  return { claimToken: null, claimExpiresAt: null, finishedAt: now, deadlineAt: null };
}

/**
 * A certain failure of one attempt: counts against the retry budget. With attempts left the run is
 * queued again with backoff, keeping its identity and idempotency key; otherwise it ends `failed`.
 */
function failAttempt(
  run: Run,
  now: Instant,
  task: RunTaskContext,
  reason: Extract<RunReason, "launch_failed" | "target_failed" | "replica_lost" | "run_timeout">,
  message: string,
): RunChange {
  const failures = run.failures + 1;
  const retry = task.options.retry;
  if (failures < retry.maxAttempts && run.cancelRequestedAt === null) {
    const backoff = retryBackoffMs(retry, failures, run.id);
    return {
      run: moveRun(run, "queued", {
        ...releasedClaim(),
        failures,
        notBefore: (now + backoff) as Instant,
        targetRunId: null,
        deadlineAt: null,
        reason: null,
        error: message,
      }),
    };
  }
  const to = reason === "run_timeout" ? "timed_out" : "failed";
  return {
    run: moveRun(run, to, { ...finished(now), failures, reason, error: message }),
    taskVerdict: verdictFor(run, task, to, message),
  };
}

/** The task's verdict fields after its run ended with `status` (SPEC 4.2). */
function verdictFor(
  run: Run,
  task: RunTaskContext,
  status: "succeeded" | "failed" | "timed_out" | "cancelled",
  error: string | null,
): TaskVerdictPatch {
  const once = task.scheduleType === "once" && run.trigger === "scheduled";
  switch (status) {
    case "succeeded":
      return once ? { lastError: null, status: "completed" } : { lastError: null };
    case "failed":
    case "timed_out":
      return once ? { lastError: error, status: "failed" } : { lastError: error };
    case "cancelled":
      return once ? { lastError: error, status: "cancelled" } : { lastError: error };
  }
}

/** A verdict reported by the target or the handler (SPEC 5.5). */
export interface CompletionVerdict {
  readonly status: "succeeded" | "failed" | "cancelled";
  readonly error?: string | null;
  readonly result?: JsonValue | null;
}

/**
 * Records a completion. The first verdict wins: a verdict for a run that already ended keeps its status
 * and only records the result. A failed run is retried under the task's retry policy.
 */
export function completeRun(
  run: Run,
  verdict: CompletionVerdict,
  ctx: { now: Instant; task: RunTaskContext },
): RunChange {
  const result = verdict.result ?? null;
  if (run.status !== "running" && run.status !== "launching") {
    return { run: { ...run, result: run.result ?? result } };
  }
  const { now, task } = ctx;
  const error = verdict.error ?? null;
  switch (verdict.status) {
    case "succeeded":
      return {
        run: moveRun(
          run,
          "succeeded",
          Object.assign(finished(now), overtaken(run, now), { result, error: null, reason: null }),
        ),
        taskVerdict: verdictFor(run, task, "succeeded", null),
      };
    case "failed": {
      const change = failAttempt(
        run,
        now,
        task,
        "target_failed",
        error ?? "the target reported a failure",
      );
      return { ...change, run: { ...change.run, result } };
    }
    case "cancelled": {
      // The reason it was asked to stop (owner, superseded, task deleted) outlives the confirmation.
      const reason: RunReason =
        run.cancelRequestedAt !== null ? (run.reason ?? "cancel_requested") : "target_cancelled";
      const message = error ?? "the target cancelled the run";
      return {
        run: moveRun(run, "cancelled", {
          ...finished(now),
          ...overtaken(run, now),
          reason,
          result,
          error: message,
        }),
        taskVerdict: verdictFor(run, task, "cancelled", message),
      };
    }
  }
}

/**
 * A verdict for a run still `launching` overtook the record of its launch: it did start, and its claim
 * stays so that the fenced launch record can still book the launch.
 */
function overtaken(run: Run, now: Instant): Partial<Run> {
  if (run.status !== "launching") return {};
  return {
    launchedAt: run.launchedAt ?? now,
    claimToken: run.claimToken,
    claimExpiresAt: run.claimExpiresAt,
  };
}

/**
 * Cancels a run (SPEC 5.6): a queued run ends at once (a once task's scheduled run takes its task with
 * it); a launching or running run gets `cancel_requested_at` and keeps the reason it was asked until it
 * ends, and a running run's target is asked to stop (it ends when the target confirms or times out).
 */
export function cancelRun(
  run: Run,
  now: Instant,
  reason: Extract<
    RunReason,
    "cancel_requested" | "superseded" | "task_paused" | "task_cancelled" | "task_deleted"
  >,
  task: RunTaskContext,
): RunChange {
  if (run.status === "queued") {
    const message = `cancelled before it started (${reason})`;
    return {
      run: moveRun(run, "cancelled", { ...finished(now), reason, error: message }),
      taskVerdict: verdictFor(run, task, "cancelled", message),
    };
  }
  if (run.status === "launching" || run.status === "running") {
    if (run.cancelRequestedAt !== null) return { run };
    return {
      run: { ...run, cancelRequestedAt: now, reason },
      cancelTarget: run.status === "running",
    };
  }
  return { run };
}

/**
 * The owner asks to cancel a run (`POST /v1/runs/{id}/cancel`): as `cancelRun`, but a run that has
 * already ended cannot be cancelled (`illegal_transition`), so the caller learns it escaped.
 */
export function requestRunCancel(run: Run, now: Instant, task: RunTaskContext): RunChange {
  if (isTerminalRunStatus(run.status)) {
    throw new IllegalTransitionError("run", run.status, "cancelled");
  }
  return cancelRun(run, now, "cancel_requested", task);
}

/** A `running` (or `launching`) run past its deadline: `timed_out`, its target is told to stop (SPEC 5.5). */
export function timeOutRun(run: Run, now: Instant, task: RunTaskContext): RunChange {
  const message = "the run did not finish before its run_timeout";
  if (run.cancelRequestedAt !== null) {
    return {
      run: moveRun(run, "cancelled", {
        ...finished(now),
        reason: run.reason ?? "cancel_requested",
        error: message,
      }),
      taskVerdict: verdictFor(run, task, "cancelled", message),
      cancelTarget: true,
    };
  }
  if (run.targetRunId === null) {
    // SPEC 1.7 / 5.4: the launch was uncertain (no run id from the target), so it may still be running
    // there: a retry would be a blind second launch. It ends timed_out, with no retry.
    return {
      run: moveRun(run, "timed_out", {
        ...finished(now),
        failures: run.failures + 1,
        reason: "run_timeout",
        error: `${message}; its launch was uncertain, so it is not launched again`,
      }),
      taskVerdict: verdictFor(run, task, "timed_out", message),
      cancelTarget: true,
    };
  }
  return { ...failAttempt(run, now, task, "run_timeout", message), cancelTarget: true };
}

/** A queued run older than `queue_timeout`: `skipped`, reason `queue_timeout` (SPEC 5.3). */
export function expireQueuedRun(run: Run, now: Instant, task: RunTaskContext): RunChange {
  const message = "the run waited in the queue longer than its queue_timeout";
  const once = task.scheduleType === "once" && run.trigger === "scheduled";
  return {
    run: moveRun(run, "skipped", { ...finished(now), reason: "queue_timeout", error: message }),
    ...(once ? { taskVerdict: { lastError: message, status: "failed" as const } } : {}),
  };
}

/** A `running` handler run whose replica went silent: failed attempt, reason `replica_lost` (SPEC 5.2). */
export function loseRunWithReplica(run: Run, now: Instant, task: RunTaskContext): RunChange {
  return failAttempt(run, now, task, "replica_lost", "the replica running this handler stopped");
}

/** What the target said about a run whose launch claim expired (SPEC 5.2). */
export type ReconcileFinding =
  | {
      readonly kind: "found";
      readonly targetRunId: string | null;
      /** When the target says it created the run, if it says. */
      readonly createdAt?: Instant | null;
    }
  | { readonly kind: "absent" }
  | { readonly kind: "unknown" };

/**
 * Reconciles a `launching` run whose claim expired: running if the target shows it (or cannot be asked),
 * queued again if the target can be asked and shows none. Never consumes the retry budget.
 */
export function reconcileExpiredClaim(
  run: Run,
  finding: ReconcileFinding,
  ctx: { now: Instant; task: RunTaskContext },
): RunChange {
  switch (finding.kind) {
    case "found": {
      const createdAt = finding.createdAt ?? ctx.now;
      return launched(run, createdAt < ctx.now ? createdAt : ctx.now, ctx.task.options, {
        targetRunId: finding.targetRunId,
        error: null,
      });
    }
    case "unknown":
      return launched(run, ctx.now, ctx.task.options, {
        targetRunId: null,
        error: "the launch claim expired before the outcome was recorded; treated as launched",
      });
    case "absent":
      // Nothing started: a run asked to stop ends; any other goes back to the queue, no retry consumed.
      if (run.cancelRequestedAt !== null) return cancelledBeforeStart(run, ctx.now, ctx.task);
      return { run: moveRun(run, "queued", releasedClaim()) };
  }
}

/**
 * Reconciles a `running` run whose launch was uncertain (SPEC 5.4: treated as launched, no target run id
 * known) once the target can be asked: the target shows the run -> its id is recorded and the run is
 * watched from then on; the target shows none -> nothing started, so the run goes back to the queue
 * without consuming a retry (a run asked to stop ends instead); no answer -> unchanged, asked again later
 * (the run timeout bounds it). Null when there is nothing to record.
 */
export function reconcileUncertainLaunch(
  run: Run,
  finding: ReconcileFinding,
  ctx: { now: Instant; task: RunTaskContext },
): RunChange | null {
  if (run.status !== "running" || run.targetRunId !== null) return null;
  switch (finding.kind) {
    case "found":
      return finding.targetRunId === null
        ? null
        : {
            run: {
              ...run,
              ...correctedLaunch(run, finding.createdAt ?? null, ctx),
              targetRunId: finding.targetRunId,
              error: null,
            },
          };
    case "unknown":
      return null;
    case "absent":
      if (run.cancelRequestedAt !== null) return cancelledBeforeStart(run, ctx.now, ctx.task);
      return {
        run: moveRun(run, "queued", {
          ...releasedClaim(),
          targetRunId: null,
          launchedAt: null,
          deadlineAt: null,
          latenessMs: null,
          notBefore: ctx.now,
          reason: null,
          error: "the uncertain launch started nothing on the target; queued again",
        }),
      };
  }
}

/**
 * The launch fields of an uncertain launch once the target says when it created the run: `launched_at`
 * becomes that instant, kept between the request's sending and now (the target's clock may be skewed),
 * and the deadline and lateness follow it. Nothing changes when the target gives no instant.
 */
function correctedLaunch(
  run: Run,
  createdAt: Instant | null,
  ctx: { now: Instant; task: RunTaskContext },
): Partial<Run> {
  if (createdAt === null || run.launchedAt === null) return {};
  const launchedAt = Math.min(ctx.now, Math.max(run.launchedAt, createdAt)) as Instant;
  const latenessMs = Math.max(0, launchedAt - run.fireAt);
  const options = ctx.task.options;
  return {
    launchedAt,
    deadlineAt: run.deadlineAt === null ? null : ((launchedAt + options.runTimeoutMs) as Instant),
    latenessMs,
    late: latenessMs > options.lateAfterMs,
  };
}

/** A heartbeat from a running run's target: its deadline moves to `now + run_timeout` (SPEC 5.5). */
export function heartbeatRun(run: Run, now: Instant, options: TaskOptions): RunChange | null {
  if (run.status !== "running") return null;
  return { run: { ...run, deadlineAt: (now + options.runTimeoutMs) as Instant } };
}

/**
 * A handler run this replica handed back at shutdown: queued again for another replica, keeping its
 * identity and idempotency key. Shutdown is not a failure of the run: no retry is consumed (SPEC 5.4).
 */
export function handBackRun(run: Run, now: Instant): RunChange | null {
  if (run.status !== "running") return null;
  return {
    run: moveRun(run, "queued", {
      claimToken: null,
      claimExpiresAt: null,
      targetRunId: null,
      deadlineAt: null,
      notBefore: now,
      reason: null,
      error: "handed back when its replica shut down",
    }),
  };
}
