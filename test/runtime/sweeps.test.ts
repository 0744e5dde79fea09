/**
 * The sweep when replicas race on one expired claim (docs/operations.md#replica-liveness-what-silent-means):
 * every live replica lists the same expired claims, so another may record a reconciliation first; the
 * fenced write of the one that lost the race is refused (`LeaseLostError`). The rest of that list is
 * left to the replica that won (it works through the same list), and the sweep goes on with its other
 * steps: the handler runs of silent replicas, the retention round.
 * The loaded chaos test (test/race/crash-postgres.test.ts) saw the whole sweep fail on such a refusal,
 * pass after pass, so that a killed replica's handler runs stayed `running` past the settle.
 */
import { describe, expect, it } from "vitest";
import type { RecoverySweeps } from "../../src/application/dispatch/recovery-sweeps.js";
import type { BudgetHolder } from "../../src/application/dispatch/budget-holder.js";
import { LeaseLostError } from "../../src/domain/errors.js";
import type { RunId } from "../../src/domain/ids.js";
import type { RunLauncher } from "../../src/domain/ports/run-launcher.js";
import type { Run } from "../../src/domain/run.js";
import type { Task } from "../../src/domain/task.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { sweep } from "../../src/runtime/sweeps.js";
import type { SweepDeps } from "../../src/runtime/sweeps.js";

const NOW = Date.parse("2026-01-05T00:00:00Z");

/** An expired claim of a silent replica: only what the sweep reads of it. */
function expiredClaim(id: string): { run: Run; task: Task } {
  const run = {
    id: id as RunId,
    claimToken: 7,
    claimedBy: "replica-gone",
    claimExpiresAt: NOW - 1000,
  } as unknown as Run;
  return { run, task: {} as Task };
}

describe("sweep", () => {
  it("leaves the claims to the replica that reconciled one first and sweeps on", async () => {
    const recorded: string[] = [];
    const steps: string[] = [];
    const recovery = {
      expiredClaims: () => Promise.resolve([expiredClaim("run-taken"), expiredClaim("run-mine")]),
      recordReconciliation: (id: RunId) => {
        if (id === "run-taken") {
          return Promise.reject(new LeaseLostError("the claim was superseded"));
        }
        recorded.push(id);
        return Promise.resolve(null);
      },
      sweepDeadlines: () => Promise.resolve([]),
      sweepQueueTimeouts: () => Promise.resolve([]),
      sweepLostReplicas: () => {
        steps.push("lost replicas");
        return Promise.resolve([]);
      },
      sweepUnservedHandlerRuns: () => Promise.resolve([]),
    } as unknown as RecoverySweeps;
    const deps: SweepDeps = {
      recovery,
      budget: { refreshBudget: () => Promise.resolve(null) } as unknown as BudgetHolder,
      launcher: {
        reconcile: () => Promise.resolve({ kind: "unknown" }),
      } as unknown as RunLauncher,
      clock: new VirtualClock(NOW),
      log: { info: () => undefined, warn: () => undefined } as unknown as SweepDeps["log"],
      startRetention: () => {
        steps.push("retention");
      },
      replicaId: "replica-here",
      judgesSilence: true,
      handlerNames: new Set(["record"]),
      events: { emit: () => undefined },
      launching: () => false,
      cancelTarget: () => undefined,
    };

    await sweep(deps);

    expect(recorded).toEqual([]);
    expect(steps).toEqual(["lost replicas", "retention"]);
  });

  it("still fails on any other error recording a reconciliation", async () => {
    const failure = new Error("the database went away");
    const recovery = {
      expiredClaims: () => Promise.resolve([expiredClaim("run-1")]),
      recordReconciliation: () => Promise.reject(failure),
    } as unknown as RecoverySweeps;
    const deps = {
      recovery,
      budget: { refreshBudget: () => Promise.resolve(null) } as unknown as BudgetHolder,
      launcher: {
        reconcile: () => Promise.resolve({ kind: "unknown" }),
      } as unknown as RunLauncher,
      clock: new VirtualClock(NOW),
      judgesSilence: true,
      launching: () => false,
    } as unknown as SweepDeps;

    await expect(sweep(deps)).rejects.toBe(failure);
  });
});
