/**
 * The coordinator's steps (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation, docs/architecture.md#cadence): admit due tasks, claim queued runs, record launch outcomes,
 * completions and the sweeps. The runtime calls these with `now` from its clock; every decision,
 * including "this run has moved on: no change", is a domain call run inside the store's transaction
 * (docs/architecture.md#where-each-decision-lives).
 */
import { AdmissionWindow } from "../policy/admission-window.js";
import { Quotas } from "../policy/quotas.js";
import { admitTask } from "../../domain/admit-task.js";
import { LeaseLostError } from "../../domain/errors.js";
import { selectClaimable, shareLimitsOwners } from "../../domain/claim.js";
import type { FencingToken, RunId } from "../../domain/ids.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { AdmissionReport } from "../../domain/ports/task-repository.js";
import type {
  ClaimedRun,
  RunChangeRequest,
  RunChangeResult,
} from "../../domain/ports/run-repository.js";
import type { TargetKind } from "../../domain/target.js";
import {
  applyLaunchAnswer,
  applyLaunchOutcome,
  claimRun,
  completeFromTarget,
  completeRun,
  heartbeatRun,
} from "../../domain/run-transitions.js";
import {
  handBackRun,
  reconcileUncertainLaunch,
  sweepDeadline,
  sweepExpiredClaim,
  sweepLostReplica,
  sweepQueueTimeout,
} from "../../domain/run-recovery.js";
import { runTaskContext } from "../../domain/run-change.js";
import type {
  CompletionVerdict,
  LaunchAnswer,
  LaunchOutcome,
  ReconcileFinding,
  RunChange,
} from "../../domain/run-change.js";
import type { Run, RunStatus } from "../../domain/run.js";
import type { Task } from "../../domain/task.js";
import type { DurationMs, Instant } from "../../domain/time.js";
import { changeRunReported } from "../runs/reported-change.js";
import type { ChangedRun } from "../runs/reported-change.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import { withBudget } from "../policy/policy-options.js";
import { isRefusal } from "../../domain/ports/store.js";
import type { Store } from "../../domain/ports/store.js";

/** One write of a `recordRunWrites` batch: a launch answer (fenced), or a verdict. */
export type RunWrite =
  | {
      readonly kind: "launch";
      readonly runId: RunId;
      readonly token: FencingToken;
      readonly answer: LaunchAnswer;
    }
  | {
      readonly kind: "completion";
      readonly runId: RunId;
      readonly verdict: CompletionVerdict;
      /** The attempt the verdict is about (a handler's): refused (lease_lost) once the run is past it. */
      readonly attempt?: number;
    };

export interface DispatchServiceDeps {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  /** Receives admissions, claims and run status changes. @default none */
  readonly events?: EventSink;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
  /** What this replica admitted per owner in the last minute, shared with manual triggers. */
  readonly admissions?: AdmissionWindow;
}

export class DispatchService {
  readonly #store: Store;
  /** Replaced only when the fleet's stored budget changes (`refreshBudget`). */
  #policy: SchedulePolicy;
  readonly #events: EventSink;
  readonly #quotas: Quotas;
  readonly #admissions: AdmissionWindow;

  constructor(deps: DispatchServiceDeps) {
    this.#store = deps.store;
    this.#policy = deps.policy;
    this.#events = deps.events ?? NO_EVENTS;
    this.#quotas = deps.quotas ?? Quotas.UNLIMITED;
    this.#admissions = deps.admissions ?? new AdmissionWindow();
  }

  /**
   * Whether a failed `recordRunWrites` will fail again (a value or constraint the store refuses), not an
   * outage (docs/storage.md#writes-the-store-refuses).
   */
  isRefusal(error: unknown): boolean {
    return isRefusal(this.#store, error);
  }

  get policy(): SchedulePolicy {
    return this.#policy;
  }

  /**
   * Applies the global budget stored in the database when it changed (docs/operations.md#sizing-the-budget),
   * and an owner's share with it when the share is a part of the budget; answers the change (with the
   * share in force when there is one), or null when there is none (or the store keeps no budget).
   */
  async refreshBudget(): Promise<{
    readonly from: number;
    readonly to: number;
    readonly maxActiveRunsPerOwner?: number;
  } | null> {
    const stored = (await this.#store.fleet?.storedBudget()) ?? null;
    const from = this.#policy.maxConcurrentRuns;
    if (stored === null || stored === from) return null;
    this.#policy = withBudget(this.#policy, stored);
    const share = this.#policy.ownerShare;
    return {
      from,
      to: stored,
      ...(share === undefined ? {} : { maxActiveRunsPerOwner: share.maxActiveRuns }),
    };
  }

  /** Admits up to `limit` due tasks in one batch (docs/semantics.md#the-life-of-an-occurrence). */
  async admitDue(now: Instant, limit: number): Promise<AdmissionReport> {
    // Counted as decided; a batch the store then fails to write over-counts, never under-counts.
    const report = await this.#store.tasks.admitDueTasks(now, limit, (task, activeRuns) => {
      const allowance = Math.max(
        0,
        this.#quotas.of(task.owner).runsPerMinute - this.#admissions.count(task.owner, now),
      );
      const { admission, write, queued } = admitTask(task, activeRuns, now, undefined, allowance);
      this.#events.emit("admission:decided", { taskId: task.id, admission });
      this.#admissions.add(task.owner, now, queued);
      return write;
    });
    for (const task of report.defective) this.#events.emit("task:defective", { task });
    this.#events.emit("admission:batch", { tasks: report.tasks });
    return report;
  }

  /** Claims queued runs this replica can launch, within the global budget (docs/semantics.md#launch). */
  async claim(args: {
    now: Instant;
    replicaId: string;
    limit: number;
    handlerNames: ReadonlySet<string>;
  }): Promise<readonly ClaimedRun[]> {
    const { now, replicaId, handlerNames } = args;
    const leaseMs = this.#policy.leaseMs;
    // No share when nobody is capped below the budget in force: the claim then counts nothing per owner.
    const share =
      this.#policy.ownerShare !== undefined &&
      shareLimitsOwners(this.#policy.ownerShare, this.#policy.maxConcurrentRuns)
        ? this.#policy.ownerShare
        : undefined;
    const claimed = await this.#store.runs.claimRuns(
      {
        now,
        replicaId,
        leaseMs,
        maxConcurrentRuns: this.#policy.maxConcurrentRuns,
        limit: args.limit,
        handlerNames,
        ...(share === undefined ? {} : { share }),
      },
      (input) =>
        selectClaimable({
          candidates: input.candidates,
          busyThreads: input.busyThreads,
          busyTasks: input.busyTasks,
          budget: input.budget,
          now,
          handlerNames,
          ...(input.ownerActive === undefined ? {} : { ownerActive: input.ownerActive }),
          ...(share === undefined ? {} : { share }),
        }),
      (run, task, token) => claimRun(run, { now, token, leaseMs, replicaId }, task.options),
    );
    for (const item of claimed) {
      this.#events.emit("run:claimed", { run: item.run, targetKind: item.task.target.kind });
    }
    return claimed;
  }

  /** Records what the launcher said, fenced by the claim token. @throws lease_lost */
  recordLaunch(
    runId: RunId,
    token: FencingToken,
    outcome: LaunchOutcome,
    now: Instant,
  ): Promise<RunChange | null> {
    return this.#change(runId, { token }, (run, task) =>
      applyLaunchOutcome(run, outcome, { now, task: runTaskContext(task), policy: this.#policy }),
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
    // The status each request's first `decide` found, for `run:changed`.
    const found: (RunStatus | undefined)[] = [];
    const kinds: (TargetKind | undefined)[] = [];
    const requests = writes.map((write, i): RunChangeRequest => {
      if (write.kind === "completion") {
        return {
          id: write.runId,
          decide: (run, task) => {
            found[i] ??= run.status;
            kinds[i] ??= task.targetKind;
            if (write.attempt !== undefined && run.attempt !== write.attempt) {
              // docs/operations.md#replica-liveness-what-silent-means: this replica was lost and the run moved on.
              throw new LeaseLostError(
                `the verdict is for attempt ${String(write.attempt)}, the run is at attempt ${String(run.attempt)}`,
              );
            }
            return completeRun(run, write.verdict, { now, task });
          },
        };
      }
      return {
        id: write.runId,
        token: write.token,
        decide: (run, task) => {
          found[i] ??= run.status;
          kinds[i] ??= task.targetKind;
          return applyLaunchAnswer(run, write.answer, { now, task, policy: this.#policy });
        },
      };
    });
    const results = await this.#store.runs.changeRuns(requests);
    results.forEach((result, i) => {
      const from = found[i];
      const targetKind = kinds[i];
      if (
        result.kind === "changed" &&
        from !== undefined &&
        targetKind !== undefined &&
        from !== result.change.run.status
      ) {
        this.#events.emit("run:changed", { run: result.change.run, from, targetKind });
      }
    });
    return results;
  }

  /** Records a verdict from the target or handler; the first verdict wins (docs/semantics.md#completion). */
  recordCompletion(
    runId: RunId,
    verdict: CompletionVerdict,
    now: Instant,
  ): Promise<RunChange | null> {
    return this.#change(runId, {}, (run, task) =>
      completeRun(run, verdict, { now, task: runTaskContext(task) }),
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
    return this.#change(runId, {}, (run, task) =>
      completeFromTarget(run, targetRunId, verdict, { now, task: runTaskContext(task) }),
    );
  }

  /** A running run's target is alive: its deadline moves to now + run_timeout. */
  recordHeartbeat(runId: RunId, now: Instant): Promise<RunChange | null> {
    return this.#change(runId, {}, (run, task) => heartbeatRun(run, now, task.options));
  }

  /**
   * Launching runs to reconcile with their targets: their claim expired, or their replica has been
   * silent for the liveness timeout (docs/operations.md#replica-liveness-what-silent-means), unless `judgesSilence`
   * is false (the runtime's word: this replica cannot tell silence now).
   */
  expiredClaims(now: Instant, limit: number, judgesSilence = true): Promise<readonly ClaimedRun[]> {
    return judgesSilence
      ? this.#store.runs.findExpiredClaims(now, limit, this.#silentSince(now))
      : this.#store.runs.findExpiredClaims(now, limit);
  }

  /** Heartbeats before this instant are silence: the replica is lost. */
  #silentSince(now: Instant): Instant {
    return (now - this.#policy.livenessMs) as Instant;
  }

  /** Records what the target said about an expired claim, fenced by the expired claim's token. */
  recordReconciliation(
    runId: RunId,
    token: FencingToken,
    finding: ReconcileFinding,
    now: Instant,
  ): Promise<RunChange | null> {
    return this.#change(runId, { token }, (run, task) =>
      sweepExpiredClaim(run, finding, { now, task: runTaskContext(task) }),
    );
  }

  /** Running runs of tasks with `targetKind`, after `after` in id order: the runs a watcher polls. */
  runningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return this.#store.runs.findRunningRuns(targetKind, after, limit);
  }

  /**
   * Records what the target said about a running run whose launch was uncertain (docs/semantics.md#launch), only while
   * it is still that attempt with no target run id: found -> the id; absent -> queued again.
   */
  recordUncertainReconciliation(
    runId: RunId,
    attempt: number,
    finding: ReconcileFinding,
    now: Instant,
  ): Promise<RunChange | null> {
    return this.#change(runId, {}, (run, task) =>
      reconcileUncertainLaunch(run, finding, { now, task: runTaskContext(task), attempt }),
    );
  }

  /** A run and its task regardless of owner, for callbacks authenticated by a per-run secret. */
  runWithTask(runId: RunId): Promise<ClaimedRun | null> {
    // Deleted tasks included: a run cancelled without telling its target may still report its verdict
    // after a forced delete (docs/semantics.md#cancellation).
    return this.#store.runs.findRunWithTask(runId);
  }

  /** Runs past their deadline end `timed_out` (or retry); their targets must be told to stop. */
  async sweepDeadlines(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#store.runs.findPastDeadline(now, limit);
    return this.#each(ids, (run, task) => sweepDeadline(run, now, runTaskContext(task)));
  }

  /** Queued runs older than their queue timeout end `skipped` (queue_timeout). */
  async sweepQueueTimeouts(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#store.runs.findQueueTimeouts(now, limit);
    return this.#each(ids, (run, task) => sweepQueueTimeout(run, now, runTaskContext(task)));
  }

  /**
   * Handler runs whose replica has been silent for the liveness timeout end `failed` (replica_lost), or
   * retry under the task's policy.
   */
  async sweepLostReplicas(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#store.runs.findLostHandlerRuns(this.#silentSince(now), limit);
    return this.#each(ids, (run, task) => sweepLostReplica(run, now, runTaskContext(task)));
  }

  /**
   * Running handler runs claimed under `replicaId` that this process is not running (`runsHere` says
   * which it is): left by an earlier process that had the same replica id (a fixed `replicaId`, say a
   * pod's name) and died. Its heartbeat is this process's now, so no silence would ever show them: they
   * end `failed` (replica_lost), or retry, as any lost replica's would.
   */
  async sweepOrphanedHandlerRuns(
    replicaId: string,
    runsHere: (runId: RunId) => boolean,
    now: Instant,
    limit: number,
  ): Promise<ChangedRun[]> {
    const orphans: RunId[] = [];
    let after: RunId | null = null;
    for (;;) {
      const page = await this.#store.runs.findRunningRuns("handler", after, limit);
      for (const { run } of page) {
        if (run.claimedBy === replicaId && !runsHere(run.id)) orphans.push(run.id);
      }
      const last = page.at(-1);
      if (last === undefined || page.length < limit) break;
      after = last.run.id;
    }
    return this.#each(orphans, (run, task) =>
      run.claimedBy === replicaId && !runsHere(run.id)
        ? sweepLostReplica(run, now, runTaskContext(task))
        : null,
    );
  }

  /**
   * A handler run this replica handed back at shutdown: queued again, no retry consumed. With `attempt`,
   * only while the run is still that attempt (a replica lost meanwhile hands back nothing).
   */
  recordHandBack(runId: RunId, now: Instant, attempt?: number): Promise<RunChange | null> {
    return this.#change(runId, {}, (run) =>
      attempt !== undefined && run.attempt !== attempt ? null : handBackRun(run, now),
    );
  }

  /** Deletes terminal runs older than the retention, and deleted tasks with nothing active. */
  purge(now: Instant, retentionMs: DurationMs, limit: number): Promise<number> {
    return this.#store.runs.purge((now - retentionMs) as Instant, limit);
  }

  /** The task a run belongs to (null once deleted). */
  findTaskOf(run: Run): Promise<Task | null> {
    return this.#store.tasks.findTask({ kind: "all" }, run.taskId);
  }

  heartbeat(replicaId: string, now: Instant): Promise<void> {
    return this.#store.replicas.heartbeat(replicaId, now);
  }

  /** The earliest instant something may need doing: a due task, a not_before, a deadline. */
  async nextWakeAt(): Promise<Instant | null> {
    const [task, run] = await Promise.all([
      this.#store.tasks.nextDueAt(),
      this.#store.runs.nextRunWakeAt(),
    ]);
    if (task === null) return run;
    if (run === null) return task;
    return task < run ? task : run;
  }

  async #each(
    ids: readonly RunId[],
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<ChangedRun[]> {
    const changed: ChangedRun[] = [];
    for (const id of ids) {
      const one = await changeRunReported(this.#store.runs, this.#events, id, {}, decide);
      if (one !== null) changed.push(one);
    }
    return changed;
  }

  /** One run changed, its status change reported. */
  async #change(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null> {
    const changed = await changeRunReported(this.#store.runs, this.#events, id, guard, decide);
    return changed?.change ?? null;
  }
}
