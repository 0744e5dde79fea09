/**
 * The `handler` target (docs/semantics.md#tasks, docs/semantics.md#completion): functions registered in this process. A launch starts the
 * handler and returns at once; its verdict (resolve, throw, or abort) is reported later through the sink.
 * A handler receives `{ run, task, input, signal, heartbeat }`.
 */
import { LazyAbort } from "../../../application/dispatch/lazy-abort.js";
import { LaunchFailedError, LaunchIndeterminateError } from "../../../domain/errors.js";
import type { RunId } from "../../../domain/ids.js";
import type {
  LaunchedRun,
  LaunchRequest,
  RunLauncher,
  StartNowRequest,
} from "../../../domain/ports/run-launcher.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { CompletionVerdict, ReconcileFinding } from "../../../domain/run-change.js";
import type { JsonValue } from "../../../domain/target.js";
import { boundedRetryDelayMs, resultProblem } from "../../../application/policy/limits.js";
import type { FieldError } from "../../../domain/errors.js";
import type { DurationMs } from "../../../domain/time.js";
import { LazyHandlerContext } from "./handler-context.js";
import { registerHandlers, validateWith } from "./handler-definition.js";
import type { Handler, HandlersOption, RegisteredHandler } from "./handler-definition.js";
import { retryWordOf } from "./handler-errors.js";

/** Where verdicts go: the coordinator, which records them after the launch. */
export interface HandlerSink {
  /** A verdict about `attempt` of the run: refused once the run is past it (this replica was lost). */
  completed(runId: RunId, verdict: CompletionVerdict, attempt: number): Promise<void>;
  /** The replica gave the run up (shutdown): handed back while the run is still at `attempt`. */
  lost(runId: RunId, attempt: number): Promise<void>;
  heartbeat(runId: RunId): Promise<void>;
}

const SHUTDOWN = "replica shutting down";

/** Settled once: awaited so that a handler starts after its launch has answered. */
const STARTED: Promise<void> = Promise.resolve();

export class HandlerLauncher implements RunLauncher {
  readonly #handlers: ReadonlyMap<string, RegisteredHandler>;
  readonly #running = new Map<RunId, { controller: LazyAbort; done: Promise<void> }>();
  #sink: HandlerSink | null = null;

  constructor(handlers: HandlersOption, builtIn: Readonly<Record<string, Handler>> = {}) {
    const registered = registerHandlers(handlers);
    for (const [name, run] of Object.entries(builtIn)) {
      if (!registered.has(name))
        registered.set(name, { run: run as Handler<unknown>, schema: null });
    }
    this.#handlers = registered;
  }

  /** The names this launcher can run (a replica claims handler runs only for these). */
  get names(): ReadonlySet<string> {
    return new Set(this.#handlers.keys());
  }

  /**
   * What is wrong with `input` for the handler `name` by its schema, as fields under `target.input`
   * (none for a handler without a schema, or one this process does not have).
   */
  async inputProblems(name: string, input: JsonValue): Promise<readonly FieldError[]> {
    const schema = this.#handlers.get(name)?.schema ?? null;
    if (schema === null) return [];
    const checked = await validateWith(schema, input, "target.input");
    return checked.ok ? [] : checked.errors;
  }

  /** Connects the sink (the coordinator is built after the launcher). */
  connect(sink: HandlerSink): void {
    this.#sink = sink;
  }

  launch(request: LaunchRequest): Promise<LaunchedRun> {
    try {
      return Promise.resolve(this.startNow(request));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * Starts the handler and answers at once (docs/semantics.md#launch): the runtime watches no launch
   * timeout for it; the run's own `run_timeout` is the deadline the store's sweep keeps.
   */
  startNow(request: StartNowRequest): LaunchedRun {
    try {
      return this.#start(request);
    } catch (error) {
      if (error instanceof LaunchFailedError) throw error;
      // docs/semantics.md#launch: only the three launch errors escape; a broken launch may have started the handler.
      const message = error instanceof Error ? error.message : String(error);
      throw new LaunchIndeterminateError(`the handler launcher failed unexpectedly: ${message}`, {
        cause: error,
      });
    }
  }

  #start(request: StartNowRequest): LaunchedRun {
    const { run, task } = request;
    // Read before anything starts: a run that cannot be read fails the launch, never a started handler.
    const { id, threadId } = run;
    if (task.target.kind !== "handler") throw new LaunchFailedError("not a handler task");
    const handler = this.#handlers.get(task.target.name);
    const sink = this.#sink;
    if (handler === undefined || sink === null) {
      throw new LaunchFailedError(`no handler named "${task.target.name}" in this replica`);
    }
    const controller = new LazyAbort();
    // #execute leaves #running itself once its verdict is passed on (it cannot end before this set: it
    // calls the handler only after this launch has answered).
    const done = this.#execute(handler, run, task, controller, sink);
    this.#running.set(id, { controller, done });
    return { targetRunId: id, threadId };
  }

  async #execute(
    handler: RegisteredHandler,
    run: Run,
    task: Task,
    controller: LazyAbort,
    sink: HandlerSink,
  ): Promise<void> {
    let verdict: CompletionVerdict;
    try {
      try {
        // The handler is called after the launch has answered, so its verdict can never queue ahead of
        // the launch (a settled promise: one turn of the microtask queue, nothing made).
        await STARTED;
        const stored = task.target.kind === "handler" ? task.target.input : null;
        const input = handler.schema === null ? null : await checkedInput(handler.schema, stored);
        if (input !== null && !input.ok) {
          verdict = input.verdict;
        } else {
          const context = new LazyHandlerContext(
            run,
            task,
            input === null ? stored : input.value,
            controller,
            sink,
          );
          let result: unknown = handler.run(context);
          // A handler that returns at once (no promise) is not waited for a turn more.
          if (isThenable(result)) result = await result;
          verdict = { status: "succeeded", result: toJson(result) };
        }
      } catch (error) {
        if (controller.aborted && controller.reason === SHUTDOWN) {
          await sink.lost(run.id, run.attempt);
          return;
        }
        verdict = controller.aborted
          ? { status: "cancelled", error: messageOf(error) }
          : failedVerdict(error);
      }
      await sink.completed(run.id, verdict, run.attempt);
    } finally {
      this.#running.delete(run.id);
    }
  }

  cancel(run: Run): Promise<void> {
    this.#running.get(run.id)?.controller.abort("cancelled");
    return Promise.resolve();
  }

  reconcile(run: Run): Promise<ReconcileFinding> {
    // A handler runs only in the process that launched it: if it is here, it runs; otherwise this
    // process cannot tell, and the lost-replica sweep settles it.
    return Promise.resolve(
      this.#running.has(run.id) ? { kind: "found", targetRunId: run.id } : { kind: "unknown" },
    );
  }

  /** Resolves once every handler running now has settled and its verdict has been passed on. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#running.values()].map((entry) => entry.done));
  }

  /**
   * Gives up the handlers still running (shutdown): each one's signal aborts with the reason
   * "replica shutting down"; one that then throws is reported lost, one that resolves anyway succeeds.
   */
  abandon(): void {
    for (const entry of this.#running.values()) entry.controller.abort(SHUTDOWN);
  }

  /** Whether the run's handler is in progress in this process. */
  runsHere(runId: RunId): boolean {
    return this.#running.has(runId);
  }

  /** Handler runs in progress in this process. */
  get running(): number {
    return this.#running.size;
  }
}

/** The input as the handler's schema outputs it; a failed verdict (no retry) when it no longer passes. */
async function checkedInput(
  schema: NonNullable<RegisteredHandler["schema"]>,
  input: unknown,
): Promise<{ ok: true; value: unknown } | { ok: false; verdict: CompletionVerdict }> {
  const checked = await validateWith(schema, input, "target.input");
  if (checked.ok) return checked;
  const problems = checked.errors.map((e) => `${e.field}: ${e.message}`).join("; ");
  return {
    ok: false,
    verdict: {
      status: "failed",
      error: `the input no longer matches the handler's schema: ${problems}`,
      retry: { kind: "never", reason: "invalid_input" },
    },
  };
}

/** Whether `value` is awaited as a promise would be (a promise or any other thenable). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A handler's failure, with what it asked of the retry policy (handler-errors.ts). */
function failedVerdict(error: unknown): CompletionVerdict {
  const word = retryWordOf(error);
  const message = messageOf(error);
  if (word === null) return { status: "failed", error: message };
  if (word.kind === "never") {
    return { status: "failed", error: message, retry: { kind: "never", reason: "non_retryable" } };
  }
  const delayMs = boundedRetryDelayMs(word.delayMs) as DurationMs;
  return { status: "failed", error: message, retry: { kind: "after", delayMs } };
}

/** A handler's return value as stored JSON (`undefined` becomes null; non-JSON values are refused). */
function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  // docs/security.md#input-limits: a result is at most 64 KiB; a larger one fails the run rather than bloating the ledger.
  const refused = resultProblem(value, "the handler's");
  if (refused !== null) throw new Error(refused);
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}
