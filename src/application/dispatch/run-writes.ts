/**
 * Recording what launchers, targets and handlers said of a run (docs/semantics.md#launch,
 * docs/semantics.md#completion): launch answers fenced by the claim token, verdicts (the first wins),
 * heartbeats and hand-backs; each a domain decision made inside the store's transaction, each status
 * change reported (docs/architecture.md#where-each-decision-lives).
 */
import { LeaseLostError } from "../../domain/errors.js";
import type { FencingToken, RunId } from "../../domain/ids.js";
import type {
  ClaimedRun,
  RunChangeRequest,
  RunChangeResult,
  RunExpectation,
  RunRepository,
} from "../../domain/ports/run-repository.js";
import { isRefusal } from "../../domain/ports/store.js";
import type { Store } from "../../domain/ports/store.js";
import type { TaskRepository } from "../../domain/ports/task-repository.js";
import { runTaskContext } from "../../domain/run-change.js";
import type {
  CompletionVerdict,
  LaunchAnswer,
  LaunchOutcome,
  RunChange,
  RunTaskContext,
} from "../../domain/run-change.js";
import { handBackRun } from "../../domain/run-recovery.js";
import {
  applyLaunchAnswer,
  applyLaunchOutcome,
  completeFromTarget,
  completeRun,
  heartbeatRun,
} from "../../domain/run-transitions.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { TargetKind } from "../../domain/target.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import { changeOneRun, reportRunChanged } from "../runs/reported-change.js";
import type { PolicyInForce } from "./budget-holder.js";

/** One write of a `recordRunWrites` batch: a launch answer (fenced), or a verdict. */
export type RunWrite =
  | {
      readonly kind: "launch";
      readonly runId: RunId;
      readonly token: FencingToken;
      readonly answer: LaunchAnswer;
      /**
       * The run as this replica claimed it, with its task: what the store may decide on instead of
       * reading the run again (`RunChangeRequest.expect`). @default none
       */
      readonly claimed?: ClaimedRun;
    }
  | {
      readonly kind: "completion";
      readonly runId: RunId;
      readonly verdict: CompletionVerdict;
      /** The attempt the verdict is about (a handler's): refused (lease_lost) once the run is past it. */
      readonly attempt?: number;
      /**
       * The run as this replica's launch answer wrote it, with its task: what the store may decide on
       * instead of reading the run again (`RunChangeRequest.expect`). @default none
       */
      readonly launched?: ClaimedRun;
    };

export interface RunWritesDeps {
  readonly store: Pick<Store, "refuses">;
  readonly runs: RunRepository;
  readonly tasks: Pick<TaskRepository, "findTask">;
  readonly budget: PolicyInForce;
  /** Receives run status changes. @default none */
  readonly events?: EventSink;
}

export class RunWrites {
  readonly #store: Pick<Store, "refuses">;
  readonly #runs: RunRepository;
  readonly #tasks: Pick<TaskRepository, "findTask">;
  readonly #budget: PolicyInForce;
  readonly #events: EventSink;

  constructor(deps: RunWritesDeps) {
    this.#store = deps.store;
    this.#runs = deps.runs;
    this.#tasks = deps.tasks;
    this.#budget = deps.budget;
    this.#events = deps.events ?? NO_EVENTS;
  }

  /**
   * Whether a failed `recordRunWrites` will fail again (a value or constraint the store refuses), not an
   * outage (docs/storage.md#writes-the-store-refuses).
   */
  isRefusal(error: unknown): boolean {
    return isRefusal(this.#store, error);
  }

  /** Records what the launcher said, fenced by the claim token. @throws lease_lost */
  recordLaunch(
    runId: RunId,
    token: FencingToken,
    outcome: LaunchOutcome,
    now: Instant,
  ): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, { token }, (run, task) =>
      applyLaunchOutcome(run, outcome, {
        now,
        task: task,
        policy: this.#budget.policy,
      }),
    );
  }

  /**
   * Records a batch of launch answers and verdicts in one store transaction, in order: a launch and the
   * verdict that follows it may land together. Each launch is fenced by its claim token; a refused item
   * (lease_lost, not_found) leaves the others alone. Results are at the same indexes as `writes`.
   */
  async recordRunWrites(
    writes: readonly RunWrite[],
    now: Instant,
  ): Promise<readonly RunChangeResult[]> {
    const policy = this.#budget.policy;
    const requests = writes.map((write) => new WriteRequest(write, now, policy));
    const results = await this.#runs.changeRuns(requests);
    for (let i = 0; i < results.length; i++) {
      const result = results[i] as RunChangeResult;
      const { found, targetKind } = requests[i] as WriteRequest;
      if (result.kind === "changed" && found !== undefined && targetKind !== undefined) {
        reportRunChanged(this.#events, result.change.run, found, targetKind);
      }
    }
    return results;
  }

  /** Records a verdict from the target or handler; the first verdict wins (docs/semantics.md#completion). */
  recordCompletion(
    runId: RunId,
    verdict: CompletionVerdict,
    now: Instant,
  ): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, {}, (run, task) =>
      completeRun(run, verdict, { now, task: task }),
    );
  }

  /**
   * Records a verdict the target gave about its run `targetRunId`: written only while the run still
   * points at that target run (a verdict about an earlier attempt never ends a later one). A run whose
   * launch was uncertain learns its target run id from the verdict first.
   */
  recordTargetVerdict(
    runId: RunId,
    targetRunId: string,
    verdict: CompletionVerdict,
    now: Instant,
  ): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, {}, (run, task) =>
      completeFromTarget(run, targetRunId, verdict, { now, task: task }),
    );
  }

  /** A running run's target is alive: its deadline moves to now + run_timeout. */
  recordHeartbeat(runId: RunId, now: Instant): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, {}, (run, task) =>
      heartbeatRun(run, now, task.options),
    );
  }

  /**
   * A handler run this replica handed back at shutdown: queued again, no retry consumed. With `attempt`,
   * only while the run is still that attempt (a replica lost meanwhile hands back nothing).
   */
  recordHandBack(runId: RunId, now: Instant, attempt?: number): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, {}, (run) =>
      attempt !== undefined && run.attempt !== attempt ? null : handBackRun(run, now),
    );
  }

  /** A run and its task regardless of owner, for callbacks authenticated by a per-run secret. */
  runWithTask(runId: RunId): Promise<ClaimedRun | null> {
    // Deleted tasks included: a run cancelled without telling its target may still report its verdict
    // after a forced delete (docs/semantics.md#cancellation).
    return this.#runs.findRunWithTask(runId);
  }

  /** The task a run belongs to (null once deleted). */
  findTaskOf(run: Run): Promise<Task | null> {
    return this.#tasks.findTask({ kind: "all" }, run.taskId);
  }
}

/** What a store may decide on instead of reading `item`'s run: the run and its task as this replica has them. */
function expectationOf(item: ClaimedRun): RunExpectation {
  return { run: item.run, task: runTaskContext(item.task), taskVersion: item.task.version };
}

/**
 * One write of a `recordRunWrites` batch as the store's request, with what its first `decide` found (the
 * run's status and its task's target kind, for `run:changed`). `decide` is a method, not a closure made
 * per write (two writes a fire); one class for both kinds of write, so that every request has one shape.
 */
class WriteRequest implements RunChangeRequest {
  readonly id: RunId;
  /** The launch answer's claim token (a verdict is not fenced by one). */
  readonly token?: FencingToken;
  readonly expect?: RunExpectation;
  found: RunStatus | undefined = undefined;
  targetKind: TargetKind | undefined = undefined;
  readonly #write: RunWrite;
  readonly #now: Instant;
  readonly #policy: SchedulePolicy;

  constructor(write: RunWrite, now: Instant, policy: SchedulePolicy) {
    this.id = write.runId;
    const known = write.kind === "launch" ? write.claimed : write.launched;
    if (write.kind === "launch") this.token = write.token;
    if (known?.run.id === write.runId) this.expect = expectationOf(known);
    this.#write = write;
    this.#now = now;
    this.#policy = policy;
  }

  decide(run: Run, task: RunTaskContext): RunChange {
    this.found ??= run.status;
    this.targetKind ??= task.targetKind;
    const write = this.#write;
    if (write.kind === "launch") {
      return applyLaunchAnswer(run, write.answer, { now: this.#now, task, policy: this.#policy });
    }
    if (write.attempt !== undefined && run.attempt !== write.attempt) {
      // docs/operations.md#replica-liveness-what-silent-means: this replica was lost and the run moved on.
      throw new LeaseLostError(
        `the verdict is for attempt ${String(write.attempt)}, the run is at attempt ${String(run.attempt)}`,
      );
    }
    return completeRun(run, write.verdict, { now: this.#now, task });
  }
}
