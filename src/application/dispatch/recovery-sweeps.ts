/**
 * Recovery (docs/semantics.md#launch, docs/operations.md#replica-liveness-what-silent-means): expired
 * claims and uncertain launches reconciled with their targets, the deadline, queue-timeout, lost-replica
 * and orphan sweeps, and the purge of old runs. Each run's fate is a domain decision made inside the
 * store's transaction, each status change reported.
 */
import type { FencingToken, RunId } from "../../domain/ids.js";
import type { ClaimedRun, RunRepository } from "../../domain/ports/run-repository.js";
import type { ReconcileFinding, RunChange } from "../../domain/run-change.js";
import {
  reconcileUncertainLaunch,
  sweepDeadline,
  sweepExpiredClaim,
  sweepLostReplica,
  sweepQueueTimeout,
  sweepUnservedHandler,
} from "../../domain/run-recovery.js";
import type { ReplicaRegistry } from "../../domain/ports/replica-registry.js";
import type { TargetKind } from "../../domain/target.js";
import type { DurationMs, Instant } from "../../domain/time.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { EventSink } from "../events/internal-events.js";
import { changeEachRun, changeOneRun } from "../runs/reported-change.js";
import type { ChangedRun } from "../runs/reported-change.js";
import type { PolicyInForce } from "./budget-holder.js";

/** Live replicas read per no-handler sweep at most (a fleet larger than this is not expected). */
const LIVE_REPLICAS_READ = 1_000;

export class RecoverySweeps {
  readonly #runs: RunRepository;
  readonly #replicas: ReplicaRegistry | undefined;
  readonly #budget: PolicyInForce;
  readonly #events: EventSink;

  constructor(deps: {
    readonly runs: RunRepository;
    /** The replicas' heartbeat rows, for the no-handler sweep. @default that sweep does nothing */
    readonly replicas?: ReplicaRegistry;
    readonly budget: PolicyInForce;
    /** Receives run status changes. @default none */
    readonly events?: EventSink;
  }) {
    this.#runs = deps.runs;
    this.#replicas = deps.replicas;
    this.#budget = deps.budget;
    this.#events = deps.events ?? NO_EVENTS;
  }

  /**
   * Launching runs to reconcile with their targets: their claim expired, or their replica has been
   * silent for the liveness timeout (docs/operations.md#replica-liveness-what-silent-means), unless `judgesSilence`
   * is false (the runtime's word: this replica cannot tell silence now).
   */
  expiredClaims(now: Instant, limit: number, judgesSilence = true): Promise<readonly ClaimedRun[]> {
    return judgesSilence
      ? this.#runs.findExpiredClaims(now, limit, this.#silentSince(now))
      : this.#runs.findExpiredClaims(now, limit);
  }

  /** Heartbeats before this instant are silence: the replica is lost. */
  #silentSince(now: Instant): Instant {
    return (now - this.#budget.policy.livenessMs) as Instant;
  }

  /** Records what the target said about an expired claim, fenced by the expired claim's token. */
  recordReconciliation(
    runId: RunId,
    token: FencingToken,
    finding: ReconcileFinding,
    now: Instant,
  ): Promise<RunChange | null> {
    return changeOneRun(this.#runs, this.#events, runId, { token }, (run, task) =>
      sweepExpiredClaim(run, finding, { now, task: task }),
    );
  }

  /** Running runs of tasks with `targetKind`, after `after` in id order: the runs a watcher polls. */
  runningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return this.#runs.findRunningRuns(targetKind, after, limit);
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
    return changeOneRun(this.#runs, this.#events, runId, {}, (run, task) =>
      reconcileUncertainLaunch(run, finding, { now, task: task, attempt }),
    );
  }

  /** Runs past their deadline end `timed_out` (or retry); their targets must be told to stop. */
  async sweepDeadlines(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#runs.findPastDeadline(now, limit);
    return changeEachRun(this.#runs, this.#events, ids, (run, task) =>
      sweepDeadline(run, now, task),
    );
  }

  /** Queued runs older than their queue timeout end `skipped` (queue_timeout). */
  async sweepQueueTimeouts(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#runs.findQueueTimeouts(now, limit);
    return changeEachRun(this.#runs, this.#events, ids, (run, task) =>
      sweepQueueTimeout(run, now, task),
    );
  }

  /**
   * Queued handler runs that no live replica serves end `failed` (no_handler), once due for a liveness
   * timeout (docs/semantics.md#handler-runs-nobody-serves): the handlers served are those the replicas
   * heartbeating within the liveness timeout registered, plus `ownNames` (this replica's). Nothing is
   * failed while a live replica registered no names (a version before registration may serve any).
   */
  async sweepUnservedHandlerRuns(
    now: Instant,
    ownNames: readonly string[],
    limit: number,
  ): Promise<ChangedRun[]> {
    if (this.#replicas === undefined) return [];
    const since = this.#silentSince(now);
    const live = await this.#replicas.listReplicas(since, LIVE_REPLICAS_READ);
    if (live.length >= LIVE_REPLICAS_READ) return [];
    const served = new Set(ownNames);
    for (const replica of live) {
      if (replica.handlerNames === null) return [];
      for (const name of replica.handlerNames) served.add(name);
    }
    const found = await this.#runs.findUnservedHandlerRuns(since, [...served], limit);
    const names = new Map(found.map((run) => [run.id, run.handlerName]));
    return changeEachRun(this.#runs, this.#events, [...names.keys()], (run, task) =>
      sweepUnservedHandler(run, {
        now,
        dueBefore: since,
        task: task,
        handlerName: names.get(run.id) ?? "",
      }),
    );
  }

  /**
   * Handler runs whose replica has been silent for the liveness timeout end `failed` (replica_lost), or
   * retry under the task's policy.
   */
  async sweepLostReplicas(now: Instant, limit: number): Promise<ChangedRun[]> {
    const ids = await this.#runs.findLostHandlerRuns(this.#silentSince(now), limit);
    return changeEachRun(this.#runs, this.#events, ids, (run, task) =>
      sweepLostReplica(run, now, task),
    );
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
      const page = await this.#runs.findRunningRuns("handler", after, limit);
      for (const { run } of page) {
        if (run.claimedBy === replicaId && !runsHere(run.id)) orphans.push(run.id);
      }
      const last = page.at(-1);
      if (last === undefined || page.length < limit) break;
      after = last.run.id;
    }
    return changeEachRun(this.#runs, this.#events, orphans, (run, task) =>
      run.claimedBy === replicaId && !runsHere(run.id) ? sweepLostReplica(run, now, task) : null,
    );
  }

  /** Deletes terminal runs older than the retention, and deleted tasks with nothing active. */
  purge(now: Instant, retentionMs: DurationMs, limit: number): Promise<number> {
    return this.#runs.purge((now - retentionMs) as Instant, limit);
  }
}
