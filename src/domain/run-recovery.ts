/**
 * How a run that stopped moving is recovered (docs/semantics.md#the-life-of-a-run,
 * docs/architecture.md#where-each-decision-lives): deadlines, queue timeouts, replicas lost, claims that
 * expired before their launch was recorded, uncertain launches reconciled with the target, and handler
 * runs handed back at shutdown. The `sweep*` functions are the sweeps' decisions about a run they listed:
 * each checks the run is still what the sweep found and returns null ("no change") when it has moved on,
 * so the application only orchestrates and the store only writes.
 */
import { IllegalTransitionError } from "./errors.js";
import { copyRun, moveRun } from "./run.js";
import type { Run } from "./run.js";
import {
  cancelledAsAsked,
  cancelledBeforeStart,
  failAttempt,
  finished,
  launched,
  releasedClaim,
  holdsOnceOccurrence,
  verdictFor,
} from "./run-change.js";
import type { ReconcileFinding, RunChange, RunTaskContext } from "./run-change.js";
import type { Instant } from "./time.js";

/** A `running` (or `launching`) run past its deadline: `timed_out`, its target is told to stop (docs/semantics.md#completion). */
export function timeOutRun(run: Run, now: Instant, task: RunTaskContext): RunChange {
  const message = "the run did not finish before its run_timeout";
  if (run.cancelRequestedAt !== null) {
    return { ...cancelledAsAsked(run, now, task, message), cancelTarget: true };
  }
  if (run.targetRunId === null) {
    // docs/semantics.md#guarantees, docs/semantics.md#launch: the launch was uncertain (no run id from the target), so it may still be running
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

/** A queued run older than `queue_timeout`: `skipped`, reason `queue_timeout` (docs/semantics.md#the-life-of-an-occurrence). */
export function expireQueuedRun(run: Run, now: Instant, task: RunTaskContext): RunChange {
  const message = "the run waited in the queue longer than its queue_timeout";
  const once = holdsOnceOccurrence(run, task);
  return {
    run: moveRun(run, "skipped", { ...finished(now), reason: "queue_timeout", error: message }),
    ...(once ? { taskVerdict: { lastError: message, status: "failed" as const } } : {}),
  };
}

/**
 * A queued handler run that no live replica serves (docs/semantics.md#handler-runs-nobody-serves): `failed`,
 * reason `no_handler`, with no retry (a retry would wait for the same absent worker); a redrive queues it
 * again once a worker serving the handler runs.
 */
export function failUnservedRun(
  run: Run,
  now: Instant,
  task: RunTaskContext,
  handlerName: string,
): RunChange {
  const message =
    `no live replica serves the handler "${handlerName}" ` +
    "(a worker registers the handlers it runs with its heartbeat)";
  return {
    run: moveRun(run, "failed", { ...finished(now), reason: "no_handler", error: message }),
    taskVerdict: verdictFor(run, task, "failed", message),
  };
}

/**
 * The no-handler sweep's decision about a run it listed: `failUnservedRun` while the run is still queued
 * and was due before `dueBefore`; no change once claimed, cancelled or moved on.
 */
export function sweepUnservedHandler(
  run: Run,
  args: { now: Instant; dueBefore: Instant; task: RunTaskContext; handlerName: string },
): RunChange | null {
  if (run.status !== "queued" || !(run.notBefore < args.dueBefore)) return null;
  return failUnservedRun(run, args.now, args.task, args.handlerName);
}

/**
 * A `running` handler run whose replica went silent: failed attempt, reason `replica_lost`
 * (docs/semantics.md#run-statuses). Only a running run: a launching one is the expired-claim sweep's to
 * reconcile (`reconcileExpiredClaim`), which never consumes the retry budget.
 */
export function loseRunWithReplica(run: Run, now: Instant, task: RunTaskContext): RunChange {
  if (run.status !== "running") throw new IllegalTransitionError("run", run.status, "replica_lost");
  return failAttempt(run, now, task, "replica_lost", "the replica running this handler stopped");
}

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
 * Reconciles a `running` run whose launch was uncertain (docs/semantics.md#launch: treated as launched, no target run id
 * known) once the target can be asked: the target shows the run -> its id is recorded and the run is
 * watched from then on; the target shows none -> nothing started, so the run goes back to the queue
 * without consuming a retry (a run asked to stop ends instead); no answer -> unchanged, asked again later
 * (the run timeout bounds it). Null when there is nothing to record, or when the run is no longer the
 * attempt `ctx.attempt` the target was asked about.
 */
export function reconcileUncertainLaunch(
  run: Run,
  finding: ReconcileFinding,
  ctx: { now: Instant; task: RunTaskContext; attempt?: number },
): RunChange | null {
  if (run.status !== "running" || run.targetRunId !== null) return null;
  // The watcher asked about one attempt: a run relaunched since then is another attempt.
  if (ctx.attempt !== undefined && run.attempt !== ctx.attempt) return null;
  switch (finding.kind) {
    case "found":
      return finding.targetRunId === null
        ? null
        : {
            run: Object.assign(copyRun(run), correctedLaunch(run, finding.createdAt ?? null, ctx), {
              targetRunId: finding.targetRunId,
              error: null,
            }),
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

/**
 * A handler run this replica handed back at shutdown: queued again for another replica, keeping its
 * identity and idempotency key. Shutdown is not a failure of the run: no retry is consumed (docs/semantics.md#launch).
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

/**
 * The deadline sweep's decision about a run it listed: `timeOutRun` while the run is still launching or
 * running past its deadline; no change when it has moved on since the sweep read it.
 */
export function sweepDeadline(run: Run, now: Instant, task: RunTaskContext): RunChange | null {
  const active = run.status === "running" || run.status === "launching";
  if (!active || run.deadlineAt === null || !(run.deadlineAt < now)) return null;
  return timeOutRun(run, now, task);
}

/**
 * The queue-timeout sweep's decision: `expireQueuedRun` while the run is still queued and older than its
 * task's `queue_timeout`; no change otherwise (claimed, cancelled or requeued since it was listed).
 */
export function sweepQueueTimeout(run: Run, now: Instant, task: RunTaskContext): RunChange | null {
  if (run.status !== "queued" || !(run.queuedAt + task.options.queueTimeoutMs < now)) return null;
  return expireQueuedRun(run, now, task);
}

/**
 * The lost-replica sweep's decision about a handler run of a silent replica: `loseRunWithReplica` while
 * it is still running; no change once it has ended or been handed back.
 */
export function sweepLostReplica(run: Run, now: Instant, task: RunTaskContext): RunChange | null {
  return run.status === "running" ? loseRunWithReplica(run, now, task) : null;
}

/**
 * The expired-claim sweep's decision, given what the target said: `reconcileExpiredClaim` while the run
 * is still launching (the store has checked that its claim token is the expired one); no change when
 * the run has moved on (its launch answer or a verdict landed meanwhile).
 */
export function sweepExpiredClaim(
  run: Run,
  finding: ReconcileFinding,
  ctx: { now: Instant; task: RunTaskContext },
): RunChange | null {
  return run.status === "launching" ? reconcileExpiredClaim(run, finding, ctx) : null;
}
