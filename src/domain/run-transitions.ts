/**
 * What happens to a run between its claim and its end (docs/semantics.md#the-life-of-a-run): the claim,
 * the launch outcome, the completion and the cancellation. Each function returns the new run plus what
 * the task must record, refuses a move the state machine forbids, and returns null ("no change") where
 * the run has moved on since the caller read it. Launch bookkeeping and completion touch disjoint task
 * fields. Sweeps and reconciliation are in run-recovery.ts.
 */
import { IllegalTransitionError, RunNotRedrivableError } from "./errors.js";
import type { FencingToken } from "./ids.js";
import type { SchedulePolicy, TaskOptions } from "./options.js";
import {
  copyRun,
  isTerminalRunStatus,
  movedCopy,
  moveRun,
  redriveMove,
  REDRIVABLE_RUN_STATUSES,
} from "./run.js";
import type { Run, RunDraft, RunReason } from "./run.js";
import {
  cancelledBeforeStart,
  failAttempt,
  finish,
  finished,
  launched,
  releasedClaim,
  verdictFor,
} from "./run-change.js";
import type {
  CompletionVerdict,
  LaunchAnswer,
  LaunchOutcome,
  RunChange,
  RunTaskContext,
} from "./run-change.js";
import type { DurationMs, Instant } from "./time.js";

/** Claims a queued run for launch: `launching`, one more attempt, a lease and a fencing token. */
export function claimRun(
  run: Run,
  claim: { now: Instant; token: FencingToken; leaseMs: DurationMs; replicaId: string },
  options: TaskOptions,
): Run {
  const latenessMs = claim.now - run.fireAt;
  // Filled in on the copy, no object of changes: one claim per fire.
  const next = movedCopy(run, "launching");
  next.attempt = run.attempt + 1;
  next.claimToken = claim.token;
  next.claimExpiresAt = (claim.now + claim.leaseMs) as Instant;
  next.claimedBy = claim.replicaId;
  next.late = latenessMs > options.lateAfterMs;
  return next;
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
  answer: LaunchAnswer,
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
  const released = copyRun(run);
  released.claimToken = null;
  released.claimExpiresAt = null;
  if (outcome.kind !== "launched" && outcome.kind !== "indeterminate") return { run: released };
  released.launchedAt = run.launchedAt ?? now;
  return {
    run: released,
    taskLaunch: { lastRunAt: run.launchedAt ?? now, lastRunId: run.id, runCountIncrement: 1 },
  };
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
    // A late verdict is kept in `result` only; it ends a cancelled run's hold on its thread.
    const next = copyRun(run);
    next.result = run.result ?? result;
    next.deadlineAt = null;
    return { run: next };
  }
  const { now, task } = ctx;
  const error = verdict.error ?? null;
  switch (verdict.status) {
    case "succeeded": {
      // Filled in on the copy, no objects of changes: one verdict per fire.
      const next = movedCopy(run, "succeeded");
      finish(next, now);
      keepOvertaken(next, run, now);
      next.result = result;
      next.error = null;
      next.reason = null;
      return { run: next, taskVerdict: verdictFor(run, task, "succeeded", null) };
    }
    case "failed": {
      const change = failAttempt(
        run,
        now,
        task,
        "target_failed",
        error ?? "the target reported a failure",
        verdict.retry,
      );
      const next = copyRun(change.run);
      if (run.status !== "launching" || change.run.status !== "queued") {
        keepOvertaken(next, run, now);
        next.result = result;
        return { ...change, run: next };
      }
      // A retry does not wait for the record of the launch this verdict proves: the verdict books it,
      // and that record, fenced by the claim the retry released, then writes nothing (lease_lost).
      const launchedAt = run.launchedAt ?? now;
      next.launchedAt = launchedAt;
      next.result = result;
      return {
        ...change,
        run: next,
        taskLaunch: { lastRunAt: launchedAt, lastRunId: run.id, runCountIncrement: 1 },
      };
    }
    case "cancelled": {
      // The reason it was asked to stop (owner, superseded, task deleted) outlives the confirmation.
      const reason: RunReason =
        run.cancelRequestedAt !== null ? (run.reason ?? "cancel_requested") : "target_cancelled";
      const message = error ?? "the target cancelled the run";
      const next = movedCopy(run, "cancelled");
      finish(next, now);
      keepOvertaken(next, run, now);
      next.reason = reason;
      next.result = result;
      next.error = message;
      return { run: next, taskVerdict: verdictFor(run, task, "cancelled", message) };
    }
  }
}

/**
 * A verdict the target gave about its run `targetRunId` (the watcher's poll, an agent server's webhook):
 * recorded only while the run still points at that target run, so a verdict about an earlier attempt
 * never ends a later one (no change). A run whose launch was uncertain (`running`, no target run id)
 * learns the id from the verdict first; any other run without one (a relaunch) is no change either.
 */
export function completeFromTarget(
  run: Run,
  targetRunId: string,
  verdict: CompletionVerdict,
  ctx: { now: Instant; task: RunTaskContext },
): RunChange | null {
  if (run.targetRunId === null) {
    if (run.status !== "running") return null;
    const learnt = copyRun(run);
    learnt.targetRunId = targetRunId;
    return completeRun(learnt, verdict, ctx);
  }
  if (run.targetRunId !== targetRunId) return null;
  return completeRun(run, verdict, ctx);
}

/**
 * A verdict for a run still `launching` overtook the record of its launch: it did start, and its claim
 * stays so that the fenced launch record can still book the launch.
 */
function keepOvertaken(next: RunDraft, run: Run, now: Instant): void {
  if (run.status !== "launching") return;
  next.launchedAt = run.launchedAt ?? now;
  next.claimToken = run.claimToken;
  next.claimExpiresAt = run.claimExpiresAt;
}

/**
 * Cancels a run (docs/semantics.md#cancellation): a queued run ends at once (a once task's scheduled run takes its task with
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
  if (run.status === "running" && task.targetTold === false)
    return cancelUntold(run, now, reason, task);
  if (run.status === "launching" || run.status === "running") {
    if (run.cancelRequestedAt !== null) return { run };
    const asked = copyRun(run);
    asked.cancelRequestedAt = now;
    asked.reason = reason;
    return { run: asked, cancelTarget: run.status === "running" };
  }
  return { run };
}

/** What a run cancelled without telling its target records (docs/semantics.md#cancellation). */
export const TARGET_NOT_TOLD = "target not told";

/**
 * A running run whose target cannot be told to stop (a webhook without `cancel_url`) ends `cancelled`
 * at once with "target not told", freeing its slot of the budget; it keeps its `deadline_at`, and while
 * that is ahead its thread (and, exclusive, its task) stays occupied: the work may still be going on. A
 * later verdict is kept in `result` only and ends the hold (`completeRun`).
 */
function cancelUntold(
  run: Run,
  now: Instant,
  reason: Extract<
    RunReason,
    "cancel_requested" | "superseded" | "task_paused" | "task_cancelled" | "task_deleted"
  >,
  task: RunTaskContext,
): RunChange {
  const message = `cancelled (${run.reason ?? reason}); ${TARGET_NOT_TOLD}: its thread stays occupied until a verdict or its deadline`;
  return {
    run: moveRun(run, "cancelled", {
      claimToken: null,
      claimExpiresAt: null,
      finishedAt: now,
      cancelRequestedAt: run.cancelRequestedAt ?? now,
      reason: run.cancelRequestedAt === null ? reason : (run.reason ?? reason),
      error: message,
    }),
    taskVerdict: verdictFor(run, task, "cancelled", message),
  };
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

/** A heartbeat from a running run's target: its deadline moves to `now + run_timeout` (docs/semantics.md#completion). */
export function heartbeatRun(run: Run, now: Instant, options: TaskOptions): RunChange | null {
  if (run.status !== "running") return null;
  const next = copyRun(run);
  next.deadlineAt = (now + options.runTimeoutMs) as Instant;
  return { run: next };
}

/**
 * Redrive (docs/semantics.md#redrive): an operator puts a `failed`, `timed_out` or `cancelled` run back in
 * the queue. The same row, with its identity and idempotency key, waits for the budget and its thread as
 * any queued run does; its next claim is attempt + 1. `failures` keeps its count, so a redrive past
 * `max_attempts` gets exactly one more attempt. Queued as of `now` (`queued_at`), so its queue timeout
 * counts from the redrive and it takes its place behind the runs already waiting on its thread.
 * @throws illegal_transition (RunNotRedrivableError) for any other status, saying why
 */
export function redriveRun(run: Run, now: Instant): Run {
  if (!(REDRIVABLE_RUN_STATUSES as readonly Run["status"][]).includes(run.status)) {
    throw new RunNotRedrivableError(run.id, run.status);
  }
  return redriveMove(run, {
    reason: null,
    notBefore: now,
    queuedAt: now,
    claimToken: null,
    claimExpiresAt: null,
    targetRunId: null,
    launchedAt: null,
    deadlineAt: null,
    finishedAt: null,
    latenessMs: null,
    late: false,
    cancelRequestedAt: null,
    result: null,
  });
}
