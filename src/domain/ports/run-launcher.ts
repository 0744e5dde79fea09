/**
 * The launcher port (docs/architecture.md#ports): starts a claimed run on its target, cancels it, and
 * reconciles or observes what the target knows of it. Implemented by the agent, webhook and handler
 * launchers.
 */
import type { AbortSignalLike } from "../abort.js";
import type { CompletionVerdict, ReconcileFinding } from "../run-change.js";
import type { Run } from "../run.js";
import type { JsonValue } from "../target.js";
import type { Task } from "../task.js";

/** The details a launcher needs to start one run. */
export interface LaunchRequest {
  readonly run: Run;
  readonly task: Task;
  /** Aborted when the launch must stop waiting (timeout, shutdown). */
  readonly signal: AbortSignalLike;
  /**
   * The W3C trace context of the launch's span (`traceparent`, `tracestate`), for the target: empty or
   * absent when tracing is off (docs/operations.md#tracing).
   */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

/** A launch answered at once (`RunLauncher.startNow`): nothing to abort, the call returns when it is over. */
export type StartNowRequest = Omit<LaunchRequest, "signal">;

/** What a launcher reports for a started run. */
export interface LaunchedRun {
  readonly targetRunId: string | null;
  /** The thread the target says it used; flagged when it differs from the requested one. */
  readonly threadId: string;
  /** A verdict already known at launch (a webhook's 2xx, a handler that finished). */
  readonly completion?: {
    readonly status: "succeeded" | "failed";
    readonly result?: JsonValue;
    readonly error?: string;
  };
}

/**
 * What a target says about a launched run when asked (docs/semantics.md#completion): still active, finished with a verdict
 * (a run that vanished from an agent server is a `cancelled` verdict), or no answer to be had now.
 */
export type RunObservation =
  | { readonly kind: "active" }
  | { readonly kind: "finished"; readonly verdict: CompletionVerdict }
  | { readonly kind: "unknown" };

/**
 * Starts runs on a target. May only fail with ThreadBusyError, LaunchFailedError (certainly nothing
 * started) or LaunchIndeterminateError (it may have started); cancellation propagates through `signal`.
 */
export interface RunLauncher {
  launch(request: LaunchRequest): Promise<LaunchedRun>;
  /**
   * Starts the run in this process and answers at once, when this launcher starts runs of `task` that
   * way (an in-process handler): such a launch has nothing to wait for, so the runtime watches no
   * timeout and makes no signal or promise for it. Returns null, having done nothing, for a run it does
   * not start this way (the runtime then calls `launch`). Throws what `launch` would reject with.
   */
  startNow?(request: StartNowRequest): LaunchedRun | null;
  /** Asks the target to stop a run (agent cancel endpoint, webhook `cancel_url`, handler AbortSignal). */
  cancel(run: Run, task: Task): Promise<void>;
  /** After an uncertain launch: does the target show this run? `unknown` when it cannot be asked. */
  reconcile(run: Run, task: Task, signal: AbortSignalLike): Promise<ReconcileFinding>;
  /**
   * Whether runs of `task` are watched by polling the target (agent targets: the server is the source of
   * truth for completion, docs/semantics.md#completion). Absent or false: the target reports completion itself.
   */
  watches?(task: Task): boolean;
  /** How a launched run with a known `targetRunId` is doing on the target. Never throws. */
  observe?(run: Run, task: Task, signal: AbortSignalLike): Promise<RunObservation>;
  /**
   * How long after an uncertain launch (no target run id) the target may be searched for the run: the
   * request's own timeout, after which it can no longer be in flight.
   */
  reconcileDelayMs?(task: Task): number | undefined;
  /**
   * A launched run of `task` has ended (its terminal status is recorded): the target may tidy up after
   * it (an agent server deletes a fresh thread whose target asks for it). Never throws.
   */
  ended?(run: Run, task: Task): Promise<void>;
}
