/**
 * The coordinator's sweeps (docs/architecture.md#how-a-fire-flows): first the fleet's stored budget is
 * read again (a change `migrate` made applies on every replica); then claims that expired before their
 * launch was recorded, or whose replica went silent, are reconciled with the target (never launched
 * again blindly), then deadlines, queue timeouts, handler runs of silent replicas (reported as
 * `replica:lost`), queued handler runs no live replica serves; last it starts a retention round
 * (retention.ts), which it does not wait for. Each run's fate is a domain decision the recovery use case records;
 * this only asks the targets and hands on the runs whose targets must be told to stop.
 */
import type { BudgetHolder } from "../application/dispatch/budget-holder.js";
import type { RecoverySweeps } from "../application/dispatch/recovery-sweeps.js";
import type { Logger } from "../application/events/logger.js";
import type { EventSink } from "../application/events/internal-events.js";
import { LeaseLostError } from "../domain/errors.js";
import type { RunId } from "../domain/ids.js";
import type { RunLauncher } from "../domain/ports/run-launcher.js";
import type { ReconcileFinding } from "../domain/run-change.js";
import type { Run } from "../domain/run.js";
import type { Task } from "../domain/task.js";
import type { Clock } from "./clock.js";

/** Runs per sweep step at most. */
const SWEEP_LIMIT = 500;

export interface SweepDeps {
  readonly recovery: RecoverySweeps;
  /** The budget in force, refreshed from the fleet's stored value once per pass. */
  readonly budget: BudgetHolder;
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  readonly log: Logger;
  /** Starts a retention round unless one runs (retention.ts): the sweep does not wait for it. */
  readonly startRetention: () => void;
  /** This replica's id: its own claims are never reported as a lost replica's. */
  readonly replicaId: string;
  /** Whether other replicas' silence is judged this pass (replica-heartbeat.ts `judgesSilence`). */
  readonly judgesSilence: boolean;
  /** The handler names this replica serves (docs/semantics.md#handler-runs-nobody-serves). */
  readonly handlerNames: ReadonlySet<string>;
  /** Receives `replica:lost`. */
  readonly events: EventSink;
  /** Whether this replica is still launching the run (its claim is then not reconciled). */
  readonly launching: (runId: RunId) => boolean;
  /** Asks a run's target to stop. */
  readonly cancelTarget: (run: Run, task: Task) => void;
}

/** One pass of every sweep, in order. */
export async function sweep(deps: SweepDeps): Promise<void> {
  const { recovery, clock } = deps;
  const changedBudget = await deps.budget.refreshBudget();
  if (changedBudget !== null) deps.log.info(changedBudget, "the global budget in force changed");
  const lost = new LostReplicas();
  await reconcileExpiredClaims(deps, lost);
  for (const changed of await recovery.sweepDeadlines(clock.now(), SWEEP_LIMIT)) {
    if (changed.change.cancelTarget === true) deps.cancelTarget(changed.change.run, changed.task);
  }
  await recovery.sweepQueueTimeouts(clock.now(), SWEEP_LIMIT);
  if (deps.judgesSilence) {
    for (const { change } of await recovery.sweepLostReplicas(clock.now(), SWEEP_LIMIT)) {
      lost.count(change.run.claimedBy, "runs");
    }
    // Each run failed is said in its own warn line (docs/operations.md#logs).
    await recovery.sweepUnservedHandlerRuns(clock.now(), [...deps.handlerNames], SWEEP_LIMIT);
  }
  for (const [replicaId, counts] of lost.entries()) {
    if (replicaId === deps.replicaId) continue;
    deps.log.warn({ replicaId, ...counts }, "a replica went silent: its work was taken over");
    deps.events.emit("replica:lost", { replicaId, ...counts });
  }
  deps.startRetention();
}

/**
 * Once, before a process first claims: handler runs still `running` under its replica id that it is not
 * executing were an earlier process's with the same id (a fixed `replicaId`), lost with it
 * (docs/operations.md#replica-liveness-what-silent-means). Nothing without in-process runs to ask.
 */
export async function sweepOrphans(
  deps: Pick<SweepDeps, "recovery" | "clock" | "log" | "replicaId">,
  inProcess: { runsHere(runId: RunId): boolean } | undefined,
): Promise<void> {
  if (inProcess === undefined) return;
  const { recovery, clock, replicaId } = deps;
  const runsHere = (runId: RunId): boolean => inProcess.runsHere(runId);
  const lost = await recovery.sweepOrphanedHandlerRuns(
    replicaId,
    runsHere,
    clock.now(),
    SWEEP_LIMIT,
  );
  if (lost.length > 0) {
    deps.log.warn(
      { runs: lost.length },
      "handler runs an earlier process with this replica id left running were lost",
    );
  }
}

/** What one sweep settled per silent replica. */
class LostReplicas {
  readonly #byReplica = new Map<string, { claims: number; runs: number }>();

  count(replicaId: string | null, what: "claims" | "runs"): void {
    if (replicaId === null) return;
    let counts = this.#byReplica.get(replicaId);
    if (counts === undefined) this.#byReplica.set(replicaId, (counts = { claims: 0, runs: 0 }));
    counts[what]++;
  }

  entries(): IterableIterator<[string, { claims: number; runs: number }]> {
    return this.#byReplica.entries();
  }
}

/**
 * docs/semantics.md#run-statuses: an expired claim, or one whose replica went silent
 * (docs/operations.md#replica-liveness-what-silent-means), is reconciled with the target, never launched again blindly.
 */
async function reconcileExpiredClaims(deps: SweepDeps, lost: LostReplicas): Promise<void> {
  const { recovery, launcher, clock } = deps;
  const now = clock.now();
  for (const { run, task } of await recovery.expiredClaims(now, SWEEP_LIMIT, deps.judgesSilence)) {
    if (deps.launching(run.id) || run.claimToken === null) continue;
    // A claim still within its lease was listed because its replica is silent.
    if (run.claimExpiresAt !== null && run.claimExpiresAt >= now)
      lost.count(run.claimedBy, "claims");
    const controller = new AbortController();
    let finding: ReconcileFinding;
    try {
      finding = await launcher.reconcile(run, task, controller.signal);
    } catch (error) {
      deps.log.warn(
        { err: error, runId: run.id },
        "could not ask the target about an expired claim",
      );
      finding = { kind: "unknown" };
    }
    try {
      await recovery.recordReconciliation(run.id, run.claimToken, finding, clock.now());
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      // Another replica reconciled the claim first: its record stands. Every live replica lists the same
      // expired claims in the same order, so that one is working through this list too: the rest is
      // left to it (or to the next sweep), not raced claim by claim, and the sweep goes on with its
      // other steps (the silent replicas' handler runs) instead of failing and backing off.
      return;
    }
  }
}
