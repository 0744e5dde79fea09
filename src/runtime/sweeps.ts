/**
 * The coordinator's sweeps (docs/architecture.md#how-a-fire-flows): claims that expired before their
 * launch was recorded are reconciled with the target (never launched again blindly), then deadlines,
 * queue timeouts, replicas lost and retention. Each run's fate is a domain decision the dispatch service
 * records; this only asks the targets and hands on the runs whose targets must be told to stop.
 */
import type { DispatchService } from "../application/dispatch-service.js";
import type { Logger } from "../application/logger.js";
import type { RunId } from "../domain/ids.js";
import type { RunLauncher } from "../domain/ports.js";
import type { ReconcileFinding } from "../domain/run-change.js";
import type { Run } from "../domain/run.js";
import type { Task } from "../domain/task.js";
import type { DurationMs } from "../domain/time.js";
import type { Clock } from "./clock.js";

/** Runs per sweep step at most. */
const SWEEP_LIMIT = 500;

export interface SweepDeps {
  readonly dispatch: DispatchService;
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  readonly log: Logger;
  readonly retentionMs: DurationMs;
  /** Whether this replica is still launching the run (its claim is then not reconciled). */
  readonly launching: (runId: RunId) => boolean;
  /** Asks a run's target to stop. */
  readonly cancelTarget: (run: Run, task: Task) => void;
}

/** One pass of every sweep, in order. */
export async function sweep(deps: SweepDeps): Promise<void> {
  const { dispatch, clock } = deps;
  await reconcileExpiredClaims(deps);
  for (const changed of await dispatch.sweepDeadlines(clock.now(), SWEEP_LIMIT)) {
    if (changed.change.cancelTarget === true) deps.cancelTarget(changed.change.run, changed.task);
  }
  await dispatch.sweepQueueTimeouts(clock.now(), SWEEP_LIMIT);
  const lost = await dispatch.sweepLostReplicas(clock.now(), SWEEP_LIMIT);
  if (lost.length > 0) deps.log.warn({ runs: lost.length }, "handler runs lost with their replica");
  await dispatch.purge(clock.now(), deps.retentionMs, SWEEP_LIMIT);
}

/** docs/semantics.md#run-statuses: an expired claim is reconciled with the target, never launched again blindly. */
async function reconcileExpiredClaims(deps: SweepDeps): Promise<void> {
  const { dispatch, launcher, clock } = deps;
  for (const { run, task } of await dispatch.expiredClaims(clock.now(), SWEEP_LIMIT)) {
    if (deps.launching(run.id) || run.claimToken === null) continue;
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
    await dispatch.recordReconciliation(run.id, run.claimToken, finding, clock.now());
  }
}
