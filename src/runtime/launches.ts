/**
 * This replica's launches in flight (docs/architecture.md#how-a-fire-flows): each claimed run is launched
 * outside any transaction (launch-call.ts), and its answer, fenced by the claim token, is written behind
 * in batches (run-write-queue.ts). A verdict that arrives later queues behind its run's launch answer, so
 * it never lands first. A launch whose answer cannot be recorded keeps its claim until the claim expires
 * and is reconciled: it is never released while its outcome is unknown.
 */
import type { PolicyInForce } from "../application/dispatch/budget-holder.js";
import type { RunWrite, RunWrites } from "../application/dispatch/run-writes.js";
import type { Logger } from "../application/events/logger.js";
import { NO_SPAN, NO_TRACING } from "../application/events/tracing.js";
import type { TraceSpan, Tracer } from "../application/events/tracing.js";
import type { FencingToken, RunId } from "../domain/ids.js";
import type { ClaimedRun, RunChangeResult } from "../domain/ports/run-repository.js";
import type { RunLauncher } from "../domain/ports/run-launcher.js";
import type { CompletionVerdict, LaunchAnswer } from "../domain/run-change.js";
import type { Instant } from "../domain/time.js";
import type { Run } from "../domain/run.js";
import type { Task } from "../domain/task.js";
import type { BackgroundWork } from "./background-work.js";
import type { Clock } from "./clock.js";
import { callLauncher, startNow } from "./launch-call.js";
import { LaunchDeadlines } from "./launch-deadlines.js";
import { RunWriteQueue } from "./run-write-queue.js";
import type { QueuedWrite } from "./run-write-queue.js";

export interface LaunchesDeps {
  readonly runWrites: RunWrites;
  readonly budget: PolicyInForce;
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  readonly log: Logger;
  readonly background: BackgroundWork;
  /** Launch answers and verdicts written per store transaction at most. */
  readonly writeBatch: number;
  /** Aborted when shutdown stops waiting for in-flight work: writes still retrying give up. */
  readonly giveUp: AbortSignal;
  /** Asks a run's target to stop (a launch recorded for a run asked to stop meanwhile). */
  readonly cancelTarget: (run: Run, task: Task) => void;
  /**
   * A verdict reported after launch was written: `requeued` when the run is queued again (a retry), so
   * that the coordinator looks at when it comes due; otherwise a launch slot is free.
   */
  readonly completed: (requeued: boolean) => void;
  /** A batch of writes failed and will be tried again (for the `store:failed` event). */
  readonly writeFailed?: () => void;
  /** Spans for each launch and each verdict written here (docs/operations.md#tracing). @default none */
  readonly tracer?: Tracer;
}

/** Launch spans kept for the verdicts that follow them, at most (the oldest are forgotten first). */
const KEPT_LAUNCH_SPANS = 10_000;
/** Launched runs kept for the verdicts that follow them, at most (the oldest are forgotten first). */
const KEPT_LAUNCHED_RUNS = 10_000;

/** What a span says of a run: its ids, the task's key, the attempt (bounded values only). */
function runAttributes(run: Run, task: Task): Record<string, string | number> {
  return {
    "punctual.run.id": run.id,
    "punctual.task.id": run.taskId,
    ...(task.key === null ? {} : { "punctual.task.key": task.key }),
    "punctual.run.attempt": run.attempt,
    "punctual.run.trigger": run.trigger,
    "punctual.run.scheduled_for": new Date(run.scheduledFor).toISOString(),
    "punctual.target.kind": task.target.kind,
  };
}

export class Launches {
  readonly #deps: LaunchesDeps;
  /** Per launch in flight: its promise, or, for a launch answered at once, its queued answer's write. */
  readonly #inFlight = new Map<RunId, Promise<void> | LaunchWrite>();
  /** Per launch in flight: resolves once its answer is queued for writing (or the launch gave up). */
  readonly #answered = new Map<RunId, Promise<void>>();
  readonly #writes: RunWriteQueue;
  /** Consecutive failed store writes, for logging once per streak. */
  #storeFailures = 0;
  readonly #tracer: Tracer;
  /** Each launch's span, for the verdict's span that follows it (bounded, insertion order). */
  readonly #launchSpans = new Map<RunId, TraceSpan>();
  /** Every launch's timeout on one timer. */
  readonly #deadlines: LaunchDeadlines;
  /** Verdicts reported and not yet written (`reporting`). */
  #reporting = 0;
  /**
   * Each run this replica launched and whose verdict is awaited, as its launch answer wrote it, with its
   * task (bounded, insertion order): the verdict's write carries it, so the store need not read the run.
   */
  readonly #launched = new Map<RunId, ClaimedRun>();
  /** Runs whose verdict was reported while their launch answer was still being written. */
  readonly #verdictFirst = new Set<RunId>();
  /** Made only when someone waits for every verdict to be written (`allReported`, at shutdown). */
  #allReported: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;

  /** What follows each launch answer's write (made once, shared by every launch's write). */
  readonly #afterLaunch: AfterLaunch = {
    recorded: (write, result) => {
      const { run, task } = write;
      const verdictFirst = this.#verdictFirst.delete(run.id);
      if (!verdictFirst && result.kind === "changed" && result.change.run.status === "running") {
        this.#keepLaunched({ run: result.change.run, task });
      }
      this.#recorded(write.run, write.task, result, write.answer.completion, write.span);
    },
    notRecorded: (write, error) => {
      this.#verdictFirst.delete(write.run.id);
      // The claim stays until it expires and is reconciled: never released while the outcome is unknown.
      this.#deps.log.error(
        { err: error, runId: write.run.id },
        "could not record a launch outcome; the claim will be reconciled",
      );
    },
    left: (write) => {
      this.#inFlight.delete(write.run.id);
    },
  };

  /** What follows each verdict's write (made once, shared by every verdict's write). */
  readonly #afterCompletion: AfterCompletion = {
    completed: (requeued) => {
      this.#deps.completed(requeued);
    },
    failed: (runId, error) => {
      this.#deps.log.error({ runId, err: error }, "could not record a completion");
    },
    // After `completed`: the claim trigger counts this verdict as still reporting when it looks.
    reported: () => {
      this.#reporting--;
      if (this.#reporting === 0 && this.#allReported !== null) {
        this.#allReported.resolve();
        this.#allReported = null;
      }
    },
  };

  constructor(deps: LaunchesDeps) {
    this.#deps = deps;
    this.#tracer = deps.tracer ?? NO_TRACING;
    this.#deadlines = new LaunchDeadlines(deps.clock);
    this.#writes = new RunWriteQueue({
      clock: deps.clock,
      write: (writes) => deps.runWrites.recordRunWrites(writes, deps.clock.now()),
      maxBatch: deps.writeBatch,
      giveUp: deps.giveUp,
      onFailure: (error) => {
        deps.writeFailed?.();
        if (this.#storeFailures++ === 0) {
          deps.log.warn({ err: error }, "a store write failed; retrying with back-off");
        }
      },
      isRefusal: (error) => deps.runWrites.isRefusal(error),
      onRefusal: (write, error) => {
        deps.log.error(
          { err: error, runId: write.runId },
          "the store refused a run's verdict; the run is recorded failed without its result",
        );
      },
      onWaiterError: (error) => {
        deps.log.error({ err: error }, "what follows a recorded launch or verdict failed");
      },
      onSuccess: () => {
        if (this.#storeFailures > 0) {
          deps.log.info({ failures: this.#storeFailures }, "store writes succeed again");
          this.#storeFailures = 0;
        }
      },
    });
  }

  /** Launches in flight. */
  get size(): number {
    return this.#inFlight.size;
  }

  /** Verdicts reported after launch whose write has not finished yet. */
  get reporting(): number {
    return this.#reporting;
  }

  /** Settles once no verdict reported here is waiting to be written (logged if it could not be). */
  allReported(): Promise<void> {
    if (this.#reporting === 0) return Promise.resolve();
    if (this.#allReported === null) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.#allReported = { promise, resolve };
    }
    return this.#allReported.promise;
  }

  /**
   * Settles once the launch answers and verdicts queued for writing so far (write-behind) are written or
   * given up: a written verdict frees its budget slot. Null when none is waiting.
   */
  queuedWrites(): Promise<void> | null {
    return this.#writes.written();
  }

  /** Whether `runId` is being launched here. */
  has(runId: RunId): boolean {
    return this.#inFlight.has(runId);
  }

  /** The launches in flight, each settling once its answer is recorded (or given up). */
  get pending(): readonly Promise<void>[] {
    return Array.from(this.#inFlight.values(), (launch) =>
      launch instanceof LaunchWrite ? launch.settled() : launch,
    );
  }

  /**
   * Launches `item` (claimed by the claim `claimSpan` traced, if any) in the background. A run its
   * launcher starts at once in this process (an in-process handler) is answered synchronously and its
   * answer queued here; any other is called and waited for, within the launch timeout.
   */
  start(item: ClaimedRun, claimSpan?: TraceSpan): void {
    const { run, task } = item;
    const token = run.claimToken;
    if (token === null) return;
    const span = this.#launchSpan(run, task, claimSpan);
    const now = startNow({
      launcher: this.#deps.launcher,
      clock: this.#deps.clock,
      log: this.#deps.log,
      run,
      task,
      traceHeaders: span.headers,
    });
    if (now !== null) {
      // Answered already: queued at once, so no verdict can queue ahead of it and nothing waits for it
      // (no promise is made: the write tells its launch how it went, and leaves #inFlight itself).
      const write = new LaunchWrite(this.#afterLaunch, run, task, token, now, span, true);
      this.#inFlight.set(run.id, write);
      this.#queueLaunch(write);
      return;
    }
    const id = run.id;
    let answered: () => void = () => undefined;
    this.#answered.set(
      id,
      new Promise<void>((resolve) => {
        answered = resolve;
      }),
    );
    const launch = this.#launch(run, task, token, span, answered).finally(() => {
      answered();
      this.#answered.delete(id);
      this.#inFlight.delete(id);
    });
    this.#inFlight.set(id, launch);
  }

  /**
   * Hands a claimed run back without launching it (a claim this replica may no longer own): recorded as
   * a launch that found the target busy, so the run is queued again where it was, without a failure; the
   * write is fenced by the claim token, so it is refused (and logged) if the claim was taken over.
   */
  handBack(item: ClaimedRun, message: string): void {
    const { run } = item;
    const token = run.claimToken;
    if (token === null) return;
    const write = this.#writes
      .enqueue(
        {
          kind: "launch",
          runId: run.id,
          token,
          answer: { outcome: { kind: "busy", message } },
          claimed: item,
        },
        run.claimExpiresAt,
      )
      .then((result) => {
        if (result.kind === "refused" && result.error.code !== "lease_lost") throw result.error;
      });
    void this.#deps.background.track(write, { runId: run.id }, "could not hand a claim back");
  }

  /**
   * Records a verdict that arrives after launch (handler targets, webhook callbacks). It is queued behind
   * the run's launch answer (written in the same batch or a later one, in order), so a fast verdict
   * never lands before its launch. With `attempt`, it is refused once the run is past that attempt.
   */
  reportCompletion(runId: RunId, verdict: CompletionVerdict, attempt?: number): Promise<void> {
    // Queued behind the launch answer when it is still awaited (both may be written in one batch, the
    // launch first); a launch answered at once is queued already.
    const answered = this.#answered.get(runId);
    this.#reporting++;
    const span = this.#completionSpan(runId, verdict);
    // Its own promise, which never rejects (a failure is logged): no tracking promise per verdict;
    // shutdown waits for every verdict through `allReported`.
    if (answered === undefined) return this.#queueCompletion(runId, verdict, attempt, span);
    return answered.then(() => this.#queueCompletion(runId, verdict, attempt, span));
  }

  /** Queues a verdict's write, with the run as its launch wrote it when this replica kept it. */
  #queueCompletion(
    runId: RunId,
    verdict: CompletionVerdict,
    attempt: number | undefined,
    span: TraceSpan,
  ): Promise<void> {
    const launched = this.#launched.get(runId);
    if (launched !== undefined) this.#launched.delete(runId);
    // Its launch answer is still on its way (often in the same batch): nothing to keep for it then.
    else if (this.#inFlight.has(runId)) this.#verdictFirst.add(runId);
    // Fields added as known, no spread of conditional literals (one write per fire).
    const request: {
      kind: "completion";
      runId: RunId;
      verdict: CompletionVerdict;
      attempt?: number;
      launched?: ClaimedRun;
    } = { kind: "completion", runId, verdict };
    if (attempt !== undefined) request.attempt = attempt;
    if (launched !== undefined) request.launched = launched;
    const write = new CompletionWrite(this.#afterCompletion, request, span);
    this.#writes.push(write);
    return write.promise;
  }

  #keepLaunched(item: ClaimedRun): void {
    if (this.#launched.size >= KEPT_LAUNCHED_RUNS) {
      const oldest = this.#launched.keys().next();
      if (oldest.done !== true) this.#launched.delete(oldest.value);
    }
    this.#launched.set(item.run.id, item);
  }

  /** A span for the verdict of `runId`, the child of its launch's span when this replica launched it. */
  #completionSpan(runId: RunId, verdict: CompletionVerdict): TraceSpan {
    const parent = this.#launchSpans.get(runId);
    if (parent !== undefined) this.#launchSpans.delete(runId);
    if (this.#tracer.recording?.() === false) return NO_SPAN;
    return this.#tracer.startSpan(
      "punctual.complete",
      { "punctual.run.id": runId, "punctual.run.verdict": verdict.status },
      parent === undefined ? {} : { parent },
    );
  }

  #keepLaunchSpan(runId: RunId, span: TraceSpan): void {
    if (this.#launchSpans.size >= KEPT_LAUNCH_SPANS) {
      const oldest = this.#launchSpans.keys().next();
      if (oldest.done !== true) this.#launchSpans.delete(oldest.value);
    }
    this.#launchSpans.set(runId, span);
  }

  /** The launch's span, linked to the claim's; `NO_SPAN`, with no attributes made, when nothing records. */
  #launchSpan(run: Run, task: Task, claimSpan: TraceSpan | undefined): TraceSpan {
    // Asked here rather than through `startSpanLazily`, whose two closures a launch would make for nothing.
    if (this.#tracer.recording?.() === false) return NO_SPAN;
    return this.#tracer.startSpan(
      "punctual.launch",
      runAttributes(run, task),
      claimSpan === undefined ? {} : { links: [claimSpan] },
    );
  }

  /**
   * Launches one claimed run (docs/semantics.md#launch) and records the outcome through the write queue;
   * `answered` is called once the answer is queued, so that a verdict queues behind it.
   */
  async #launch(
    run: Run,
    task: Task,
    token: FencingToken,
    span: TraceSpan,
    answered: () => void,
  ): Promise<void> {
    let answer: LaunchAnswer;
    try {
      answer = await callLauncher({
        traceHeaders: span.headers,
        launcher: this.#deps.launcher,
        clock: this.#deps.clock,
        leaseMs: this.#deps.budget.policy.leaseMs,
        deadlines: this.#deadlines,
        log: this.#deps.log,
        run,
        task,
        onLateCompletion: (verdict) => {
          // Queued after the (indeterminate) launch answer, which is queued as soon as the call gives up.
          const write = this.#writes.enqueue(
            { kind: "completion", runId: run.id, verdict, attempt: run.attempt },
            null,
          );
          void this.#deps.background.track(
            write.then((result) => {
              if (result.kind === "refused") throw result.error;
            }),
            { runId: run.id },
            "could not record a late launch answer",
          );
        },
      });
    } catch (error) {
      span.end();
      throw error;
    }
    await this.#record(run, task, token, answer, span, answered);
  }

  /**
   * Queues the launch answer, fenced by the claim token, and settles once it is written (or given up),
   * ending the launch's span. A store outage must not strand a launched run: the queue retries until
   * the lease ends (then the claim is reconciled by whoever sweeps it, never launched again blindly). A
   * verdict known at launch is recorded with it, only if the launch leaves the run running. Never
   * rejects. `answered` is called once the answer is queued.
   */
  #record(
    run: Run,
    task: Task,
    token: FencingToken,
    answer: LaunchAnswer,
    span: TraceSpan,
    answered: () => void,
  ): Promise<void> {
    const write = new LaunchWrite(this.#afterLaunch, run, task, token, answer, span, false);
    this.#queueLaunch(write);
    answered();
    return write.settled();
  }

  /** Queues a launch answer's write, its span told the outcome first. */
  #queueLaunch(write: LaunchWrite): void {
    const { span, answer } = write;
    if (span !== NO_SPAN) {
      const { outcome, completion } = answer;
      span.setAttributes({ "punctual.launch.outcome": outcome.kind });
      if (outcome.kind === "failed" || outcome.kind === "indeterminate") span.fail(outcome.message);
      if (outcome.kind === "launched" && completion === undefined)
        this.#keepLaunchSpan(write.run.id, span);
    }
    this.#writes.push(write);
  }

  /** What follows a launch answer's write: its verdict's span, the target told to stop, or the refusal logged. */
  #recorded(
    run: Run,
    task: Task,
    result: RunChangeResult,
    completion: CompletionVerdict | undefined,
    span: TraceSpan,
  ): void {
    const { log } = this.#deps;
    if (result.kind === "changed") {
      if (completion !== undefined && span !== NO_SPAN) {
        // The verdict came with the launch answer (a webhook's 2xx) and was written with it.
        this.#tracer
          .startSpan(
            "punctual.complete",
            { "punctual.run.id": run.id, "punctual.run.verdict": completion.status },
            { parent: span },
          )
          .end();
      }
      if (result.change.cancelTarget === true) this.#deps.cancelTarget(result.change.run, task);
    } else if (result.kind === "refused" && result.error.code === "lease_lost") {
      log.warn(
        { runId: run.id },
        "the launch claim was taken over before its outcome was recorded",
      );
    } else if (result.kind === "refused") {
      log.error(
        { err: result.error, runId: run.id },
        "could not record a launch outcome; the claim will be reconciled",
      );
    }
  }
}

/** What a launch answer's write reports to the launches (`Launches.#afterLaunch`). */
interface AfterLaunch {
  recorded(write: LaunchWrite, result: RunChangeResult): void;
  notRecorded(write: LaunchWrite, error: unknown): void;
  /** A launch answered at once is over: it leaves the launches in flight. */
  left(write: LaunchWrite): void;
}

/**
 * A launch answer in the write queue, and what follows its write. One object per launch, its own waiter
 * (`QueuedWrite`): no promise is made unless someone waits for it (`settled`, at shutdown).
 */
class LaunchWrite implements QueuedWrite {
  readonly write: RunWrite;
  readonly until: Instant | null;
  #done = false;
  #settle: (() => void) | null = null;
  #settled: Promise<void> | null = null;

  constructor(
    readonly after: AfterLaunch,
    readonly run: Run,
    readonly task: Task,
    token: FencingToken,
    readonly answer: LaunchAnswer,
    readonly span: TraceSpan,
    /** Answered at once: the write ends the launch (leaves `inFlight`). */
    readonly answeredAtOnce: boolean,
  ) {
    // With the run as claimed: the store may decide on it instead of reading it again.
    this.write = { kind: "launch", runId: run.id, token, answer, claimed: { run, task } };
    this.until = run.claimExpiresAt;
  }

  written(result: RunChangeResult): void {
    try {
      this.after.recorded(this, result);
    } finally {
      this.#end();
    }
  }

  notWritten(error: unknown): void {
    try {
      this.after.notRecorded(this, error);
    } finally {
      this.#end();
    }
  }

  /** Settles once the answer is written or given up (never rejects). */
  settled(): Promise<void> {
    if (this.#done) return Promise.resolve();
    this.#settled ??= new Promise<void>((resolve) => {
      this.#settle = resolve;
    });
    return this.#settled;
  }

  #end(): void {
    this.#done = true;
    this.span.end();
    if (this.answeredAtOnce) this.after.left(this);
    this.#settle?.();
  }
}

/** What a verdict's write reports to the launches (`Launches.#afterCompletion`). */
interface AfterCompletion {
  /** Written: `requeued` when the run is queued again (a retry). */
  completed(requeued: boolean): void;
  /** Not written (refused, or given up): logged. */
  failed(runId: RunId, error: unknown): void;
  /** Written or given up: no longer reporting. */
  reported(): void;
}

/** A verdict in the write queue: its promise settles once it is written (rejects if refused or given up). */
class CompletionWrite implements QueuedWrite {
  readonly until = null;
  /** Settles once the verdict is written, or its failure logged: never rejects. */
  readonly promise: Promise<void>;
  // Set by the promise's executor, which runs at once (no placeholder closure made per verdict).
  #resolve!: () => void;

  constructor(
    readonly after: AfterCompletion,
    readonly write: RunWrite & { readonly kind: "completion" },
    readonly span: TraceSpan,
  ) {
    this.promise = new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
  }

  written(result: RunChangeResult): void {
    try {
      if (result.kind === "refused") {
        this.span.fail(result.error.message);
        this.span.end();
        this.after.failed(this.write.runId, result.error);
        return;
      }
      this.span.end();
      this.after.completed(result.kind === "changed" && result.change.run.status === "queued");
    } catch (error) {
      this.after.failed(this.write.runId, error);
    } finally {
      this.after.reported();
      this.#resolve();
    }
  }

  notWritten(error: unknown): void {
    this.span.end();
    try {
      this.after.failed(this.write.runId, error);
    } finally {
      this.after.reported();
      this.#resolve();
    }
  }
}
