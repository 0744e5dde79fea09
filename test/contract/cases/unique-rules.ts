/**
 * Contract: the partial unique keys hold whatever the caller decides: one launching/running run per
 * exclusive task and per thread, terminal records never hold a slot, and each trigger has its own keys.
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/domain/ports/store.js";
import type { ClaimedRun } from "../../../src/domain/ports/run-repository.js";
import { fencingToken } from "../../../src/domain/ids.js";
import { moveRun } from "../../../src/domain/run.js";
import { claimRun } from "../../../src/domain/run-transitions.js";
import { durationMs } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";
import { ALL, MINUTE, T0, minute, onceAt, reuseThread } from "../fixtures.js";
import {
  REPLICA,
  admitDue,
  backfillRuns,
  changeOne,
  claimAndLaunch,
  insertTask,
  ledger,
  recordCompletion,
  reloadRun,
  triggerRun,
} from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };

/** A claim whose `select` ignores the overlap rules and takes every candidate. */
function claimEverything(store: Store, now: Instant): Promise<readonly ClaimedRun[]> {
  const leaseMs = durationMs(MINUTE);
  return store.runs.claimRuns(
    {
      now,
      replicaId: REPLICA,
      leaseMs,
      maxConcurrentRuns: 100,
      limit: 100,
      handlerNames: new Set(),
    },
    (input) => input.candidates,
    (run, task, token) => claimRun(run, { now, token, leaseMs, replicaId: REPLICA }, task.options),
  );
}

export function describeUniqueRules(ctx: ContractContext): void {
  describe("unique rules", () => {
    it("skips a claim that would launch a second run of an exclusive task", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const [first, second] = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: minute(-2), to: T0 },
        minute(0, 1),
      );
      const claimed = await claimEverything(store, minute(0, 2));
      expect(claimed.map((c) => c.run.id)).toEqual([first!.id]);
      expect((await reloadRun(store, first!.id)).status).toBe("launching");
      expect(await reloadRun(store, second!.id)).toEqual(second);
    });

    it("skips a claim that would launch a second run on one thread", async () => {
      const store = ctx.store();
      const onThread = { ...IDLE, context: reuseThread("shared") };
      const a = await insertTask(store, onThread);
      const b = await insertTask(store, onThread);
      const runA = await triggerRun(store, ALL, a.id, "k", minute(0, 1));
      const runB = await triggerRun(store, ALL, b.id, "k", minute(0, 2));
      const claimed = await claimEverything(store, minute(0, 3));
      expect(claimed.map((c) => c.run.id)).toEqual([runA!.id]);
      expect((await reloadRun(store, runA!.id)).status).toBe("launching");
      expect(await reloadRun(store, runB!.id)).toEqual(runB);
    });

    it("refuses a change that would launch a second run on a busy thread", async () => {
      const store = ctx.store();
      const onThread = { ...IDLE, context: reuseThread("shared") };
      const a = await insertTask(store, onThread);
      const b = await insertTask(store, onThread);
      await triggerRun(store, ALL, a.id, "k", minute(0, 1));
      const [running] = await claimAndLaunch(store, minute(0, 2));
      const waiting = await triggerRun(store, ALL, b.id, "k", minute(0, 3));
      await expect(
        changeOne(store, {
          id: waiting!.id,
          decide: (run) => ({
            run: moveRun(run, "launching", {
              attempt: 1,
              claimToken: fencingToken("forged"),
              claimExpiresAt: minute(5),
              claimedBy: REPLICA,
            }),
          }),
        }),
      ).rejects.toThrow();
      expect(await reloadRun(store, waiting!.id)).toEqual(waiting);
      expect((await reloadRun(store, running!.id)).status).toBe("running");
    });

    it("lets an allow_all task launch several runs at once on fresh threads", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
      expect(await claimEverything(store, minute(0, 2))).toHaveLength(3);
    });

    it("frees a task's slot when its run ends", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      const backfilled = await backfillRuns(
        store,
        ALL,
        task.id,
        { from: minute(-2), to: T0 },
        minute(0, 1),
      );
      const [first] = await claimAndLaunch(store, minute(0, 2));
      await recordCompletion(store, first!.id, { status: "failed", error: "x" }, minute(0, 3));
      const [second] = await claimEverything(store, minute(0, 4));
      expect(second!.run.id).toBe(backfilled[1]!.id);
    });

    it("never lets a skipped or missed record hold a slot", async () => {
      const store = ctx.store();
      const task = await insertTask(store);
      await admitDue(store, minute(1));
      const [running] = await claimAndLaunch(store, minute(1, 1));
      expect(await admitDue(store, minute(2))).toMatchObject({ decisions: 1, skipped: 1 });
      expect(await admitDue(store, minute(10, 30_000))).toMatchObject({
        decisions: 2,
        missed: 1,
        skipped: 1,
      });
      const statuses = (await ledger(store, task.id)).map((run) => run.status).sort();
      expect(statuses).toEqual(["missed", "running", "skipped", "skipped"]);
      expect((await reloadRun(store, running!.id)).status).toBe("running");
    });

    it("keeps scheduled, backfill and manual runs of one instant apart", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      await admitDue(store, minute(1));
      await backfillRuns(store, ALL, task.id, { from: minute(1), to: minute(2) }, minute(2));
      await triggerRun(store, ALL, task.id, "k", minute(1));
      const atMinuteOne = (await ledger(store, task.id)).filter(
        (run) => run.scheduledFor === minute(1),
      );
      expect(atMinuteOne.map((run) => run.trigger).sort()).toEqual([
        "backfill",
        "manual",
        "scheduled",
      ]);
    });
  });
}
