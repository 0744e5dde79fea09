/**
 * One call of a launcher (docs/semantics.md#launch), outside any transaction, with a timeout inside the claim's lease.
 * Maps whatever the launcher does to exactly one launch outcome; it never records anything itself.
 */
import type { Logger } from "../application/events/logger.js";
import { isPunctualError } from "../domain/errors.js";
import type { LaunchedRun, RunLauncher } from "../domain/ports/run-launcher.js";
import type { Run } from "../domain/run.js";
import type { CompletionVerdict, LaunchAnswer, LaunchOutcome } from "../domain/run-change.js";
import type { Task } from "../domain/task.js";
import type { Instant } from "../domain/time.js";
import { LazyAbort } from "../application/dispatch/lazy-abort.js";
import type { Clock } from "./clock.js";
import { LaunchDeadlines } from "./launch-deadlines.js";

export interface LaunchCallRequest {
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  /** The claim's lease: the call gives up before it ends, with a margin to record the outcome. */
  readonly leaseMs: number;
  readonly log: Logger;
  readonly run: Run;
  readonly task: Task;
  /** The launch span's trace context, passed to the launcher for the target. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
  /** A verdict the launcher gives after the call was given up on. */
  readonly onLateCompletion: (verdict: CompletionVerdict) => void;
  /** The replica's one timer for launch timeouts. @default a timer for this call alone */
  readonly deadlines?: LaunchDeadlines;
}

/** Abort reasons, made once: building an Error (or DOMException) per launch is measurable. */
const LAUNCH_TIMED_OUT = new Error("the launch timed out before the lease");
const LAUNCH_SETTLED = "launch settled";
const TIMED_OUT = Symbol("launch timed out");

/** The margin left between the launch timeout and the end of the lease. */
export function launchTimeoutMs(leaseMs: number): number {
  return leaseMs - Math.min(5000, Math.floor(leaseMs / 4));
}

/**
 * Calls the launcher and stops waiting before the lease ends. A launcher that has not answered by then
 * may have started the run: the outcome is indeterminate (treated as launched, never launched again),
 * whether or not the launcher honours the abort.
 */
export async function callLauncher(request: LaunchCallRequest): Promise<LaunchAnswer> {
  const { launcher, clock, run, task, log } = request;
  const defective = defectAnswer(task);
  if (defective !== null) return defective;
  const stop = new LazyAbort();
  const timeoutMs = launchTimeoutMs(request.leaseMs);
  // The launcher sends at once: from this instant the run may have started (an uncertain launch's
  // launched_at, and the start of its reconciliation delay).
  const sentAt = clock.now();
  const answer: Promise<LaunchAnswer> = launcher
    .launch({
      run,
      task,
      ...(request.traceHeaders === undefined ? {} : { traceHeaders: request.traceHeaders }),
      get signal() {
        return stop.signal;
      },
    })
    .then(
      (launched) => answered(run, launched, log),
      (error: unknown) => ({ outcome: failed(run, error, log, sentAt) }),
    );
  // The answer or the deadline, whichever comes first: one shared timer, no race of two promises.
  const deadlines = request.deadlines ?? new LaunchDeadlines(clock);
  const first = await new Promise<LaunchAnswer | typeof TIMED_OUT>((resolve) => {
    const forget = deadlines.watch((sentAt + timeoutMs) as Instant, () => {
      resolve(TIMED_OUT);
    });
    void answer.then((settled) => {
      forget();
      resolve(settled);
    });
  });
  if (first !== TIMED_OUT) {
    stop.abort(LAUNCH_SETTLED);
    return first;
  }
  stop.abort(LAUNCH_TIMED_OUT);
  log.warn(
    { runId: run.id, timeoutMs },
    "the launcher did not answer before the launch timeout; treating the launch as indeterminate",
  );
  // Not awaited: a launcher that never answers must not hold up the coordinator or its shutdown.
  void answer.then(({ completion }) => {
    if (completion !== undefined) request.onLateCompletion(completion);
  });
  return { outcome: { kind: "indeterminate", message: LAUNCH_TIMED_OUT.message, sentAt } };
}

/**
 * The stored target or options did not parse (docs/operations.md#a-task-that-does-not-parse): its
 * stand-ins are never launched, and nothing started. Null for a sound task.
 */
function defectAnswer(task: Task): LaunchAnswer | null {
  if (task.defect === null) return null;
  const fields = task.defect.fields.map((item) => item.field).join(", ");
  return { outcome: { kind: "failed", message: `the task's stored ${fields} does not parse` } };
}

/**
 * The launch of a run its launcher starts at once in this process (`RunLauncher.startNow`: an
 * in-process handler), answered synchronously: no timeout is watched, no signal or promise made, since
 * the call is over when it returns. Null when the launcher does not start this run that way: then
 * `callLauncher`.
 */
export function startNow(
  request: Omit<LaunchCallRequest, "leaseMs" | "onLateCompletion" | "deadlines">,
): LaunchAnswer | null {
  const { launcher, run, task, log } = request;
  if (launcher.startNow === undefined) return null;
  const defective = defectAnswer(task);
  if (defective !== null) return defective;
  let launched: LaunchedRun | null;
  try {
    launched = launcher.startNow(
      request.traceHeaders === undefined
        ? { run, task }
        : { run, task, traceHeaders: request.traceHeaders },
    );
  } catch (error) {
    return { outcome: failed(run, error, log, request.clock.now()) };
  }
  return launched === null ? null : answered(run, launched, log);
}

function answered(run: Run, launched: LaunchedRun, log: Logger): LaunchAnswer {
  const mismatch =
    launched.threadId !== run.threadId
      ? `the target answered for thread ${launched.threadId}, not ${run.threadId}`
      : undefined;
  if (mismatch !== undefined) log.warn({ runId: run.id }, mismatch);
  // Literals with every field, no spread of a conditional one: one answer per fire.
  const outcome: LaunchOutcome =
    mismatch === undefined
      ? { kind: "launched", targetRunId: launched.targetRunId }
      : { kind: "launched", targetRunId: launched.targetRunId, threadMismatch: mismatch };
  return launched.completion === undefined
    ? { outcome }
    : { outcome, completion: launched.completion };
}

/** Maps a launcher failure to its outcome; anything outside the contract counts as indeterminate. */
function failed(run: Run, error: unknown, log: Logger, sentAt: Instant): LaunchOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (isPunctualError(error)) {
    switch (error.code) {
      case "thread_busy":
        return { kind: "busy", message };
      case "launch_failed":
        return { kind: "failed", message };
      default:
        return { kind: "indeterminate", message, sentAt };
    }
  }
  log.error(
    { err: error, runId: run.id },
    "launcher broke its contract; treating the launch as indeterminate",
  );
  return { kind: "indeterminate", message, sentAt };
}
