/**
 * Contract: `changeRuns` applies a batch of run changes in one transaction, in order, each as `changeRun`
 * would: fenced per request (a superseded token refuses only that request), a launch and its completion
 * land together, and the task's launch bookkeeping and verdict fields add up as one write after another.
 */
import { describe, expect, it, vi } from "vitest";
import { fencingToken, runId } from "../../../src/domain/ids.js";
import type { ClaimedRun, RunChangeRequest } from "../../../src/domain/ports/run-repository.js";
import {
  applyLaunchAnswer,
  applyLaunchOutcome,
  completeRun,
} from "../../../src/domain/run-transitions.js";
import type { CompletionVerdict, LaunchOutcome } from "../../../src/domain/run-change.js";
import { runTaskContext } from "../../../src/domain/run-change.js";
import type { Instant } from "../../../src/domain/time.js";
import { ALL, minute, onceAt } from "../fixtures.js";
import {
  POLICY,
  admitDue,
  cancelOneRun,
  claimDue,
  edit,
  insertTask,
  insertTasks,
  recordLaunch,
  reload,
  reloadRun,
  triggerRun,
  triggerTakingRun,
} from "../store-steps.js";
import { isRefusal } from "../../../src/domain/ports/store.js";
import type { JsonValue } from "../../../src/domain/target.js";
import type { ContractContext } from "./contract-context.js";

/** Results some store refuses: SQLite's json_valid refuses 1,001 nested arrays, PostgreSQL's jsonb a NUL. */
function refusedSomewhere(): JsonValue[] {
  let deep: JsonValue = 1;
  for (let i = 0; i < 1_001; i++) deep = [deep];
  return [deep, { text: "nul \u0000 here" }];
}

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };
const LAUNCHED: LaunchOutcome = { kind: "launched", targetRunId: "target-run" };

function launch(
  claimed: ClaimedRun,
  now: Instant,
  outcome: LaunchOutcome = LAUNCHED,
): RunChangeRequest {
  const token = claimed.run.claimToken;
  return {
    id: claimed.run.id,
    ...(token === null ? {} : { token }),
    decide: (run, task) => applyLaunchOutcome(run, outcome, { now, task, policy: POLICY }),
  };
}

/** `request` carrying what its writer knows of the run: as claimed (`RunChangeRequest.expect`). */
function expecting(claimed: ClaimedRun, request: RunChangeRequest): RunChangeRequest {
  return {
    ...request,
    expect: {
      run: claimed.run,
      task: runTaskContext(claimed.task),
      taskVersion: claimed.task.version,
    },
  };
}

function complete(claimed: ClaimedRun, verdict: CompletionVerdict, now: Instant): RunChangeRequest {
  return {
    id: claimed.run.id,
    decide: (run, task) => completeRun(run, verdict, { now, task }),
  };
}

export function describeRunBatches(ctx: ContractContext): void {
  describe("changeRuns", () => {
    it("refuses only the request whose fencing token no longer matches", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
      const [a, b, c] = await claimDue(store, minute(1));
      // b's claim is superseded: it went back to the queue and was claimed again.
      await recordLaunch(store, b!, minute(1), { kind: "busy", message: "thread busy" });
      const [again] = await claimDue(store, minute(1, 5000));
      expect(again!.run.id).toBe(b!.run.id);
      const results = await store.runs.changeRuns([
        launch(a!, minute(1, 6000)),
        launch(b!, minute(1, 6000)),
        launch(c!, minute(1, 6000)),
      ]);
      expect(results.map((r) => r.kind)).toEqual(["changed", "refused", "changed"]);
      expect(results[1]).toMatchObject({ kind: "refused", error: { code: "lease_lost" } });
      expect(await reloadRun(store, b!.run.id)).toEqual(again!.run);
      for (const done of [a!, c!]) {
        expect(await reloadRun(store, done.run.id)).toMatchObject({
          status: "running",
          claimToken: null,
          launchedAt: minute(1, 6000),
        });
      }
      const after = await reload(store, task.id);
      expect(after.runCount).toBe(2);
      expect(after.lastRunId).toBe(c!.run.id);
      expect(after.version).toBe(task.version);
    });

    it("says a write it refuses is a refusal, rolls the batch back, and takes the value-free failure", async () => {
      const store = ctx.store();
      let refusals = 0;
      for (const result of refusedSomewhere()) {
        const task = await insertTask(store, IDLE);
        await triggerRun(store, ALL, task.id, "good", minute(0, 1));
        await triggerRun(store, ALL, task.id, "bad", minute(0, 1));
        const [good, bad] = await claimDue(store, minute(1));
        for (const claimed of [good!, bad!]) {
          await store.runs.changeRuns([launch(claimed, minute(1, 1))]);
        }
        let thrown: unknown = null;
        try {
          await store.runs.changeRuns([
            complete(good!, { status: "succeeded", result: "fine" }, minute(1, 2)),
            complete(bad!, { status: "succeeded", result }, minute(1, 2)),
          ]);
        } catch (error) {
          thrown = error;
        }
        if (thrown === null) {
          // This store takes the value (memory takes any): both verdicts landed.
          expect((await reloadRun(store, bad!.run.id)).status).toBe("succeeded");
          continue;
        }
        expect(isRefusal(store, thrown)).toBe(true);
        refusals++;
        // One transaction: the refused batch wrote nothing.
        expect((await reloadRun(store, good!.run.id)).status).toBe("running");
        const [alone, failure] = await store.runs.changeRuns([
          complete(good!, { status: "succeeded", result: "fine" }, minute(1, 3)),
          complete(
            bad!,
            { status: "failed", error: "the store refused it", result: null },
            minute(1, 3),
          ),
        ]);
        expect([alone?.kind, failure?.kind]).toEqual(["changed", "changed"]);
        expect(await reloadRun(store, bad!.run.id)).toMatchObject({
          status: "failed",
          result: null,
        });
      }
      // The databases each refuse one of them; memory keeps JavaScript values and takes both.
      expect(refusals).toBe(store.kind === "memory" ? 0 : 1);
    });

    it("takes a launch and then its completion of the same run in one batch", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { schedule: onceAt(minute(1)) });
      await admitDue(store, minute(1));
      const [claimed] = await claimDue(store, minute(1, 1));
      const results = await store.runs.changeRuns([
        launch(claimed!, minute(1, 2)),
        complete(claimed!, { status: "succeeded", result: { ok: true } }, minute(1, 2)),
      ]);
      expect(results.map((r) => r.kind)).toEqual(["changed", "changed"]);
      expect(results[0]).toMatchObject({ change: { run: { status: "running" } } });
      const run = await reloadRun(store, claimed!.run.id);
      expect(run).toMatchObject({
        status: "succeeded",
        launchedAt: minute(1, 2),
        finishedAt: minute(1, 2),
        claimToken: null,
        result: { ok: true },
        targetRunId: "target-run",
      });
      expect(results[1]).toMatchObject({ kind: "changed", change: { run } });
      expect(await reload(store, task.id)).toMatchObject({
        status: "completed",
        runCount: 1,
        lastRunId: claimed!.run.id,
        lastRunAt: minute(1, 2),
        lastError: null,
        version: task.version,
      });
    });

    it("answers as from the row whatever a request expected the run and its task to be", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      for (const key of ["a", "b", "c"]) await triggerRun(store, ALL, task.id, key, minute(0, 1));
      const [a, b, c] = await claimDue(store, minute(1));
      // b was handed back and claimed again (its first claim is stale); then the task is edited to
      // three attempts, so c's failure is retried although c was claimed under one attempt.
      await recordLaunch(store, b!, minute(1), { kind: "busy", message: "thread busy" });
      await claimDue(store, minute(1, 5000));
      const retry = { ...task.options.retry, maxAttempts: 3 };
      await edit(store, ALL, task.id, { options: { ...task.options, retry } }, minute(1, 5500));
      const results = await store.runs.changeRuns([
        expecting(a!, launch(a!, minute(1, 6000))),
        complete(a!, { status: "succeeded", result: { ok: true } }, minute(1, 6000)),
        expecting(b!, launch(b!, minute(1, 6000))),
        expecting(c!, launch(c!, minute(1, 6000))),
        complete(c!, { status: "failed", error: "boom" }, minute(1, 6000)),
      ]);
      expect(results.map((r) => (r.kind === "refused" ? r.error.code : r.kind))).toEqual([
        "changed",
        "changed",
        "lease_lost",
        "changed",
        "changed",
      ]);
      expect(await reloadRun(store, a!.run.id)).toMatchObject({
        status: "succeeded",
        result: { ok: true },
        claimToken: null,
      });
      expect(await reloadRun(store, b!.run.id)).toMatchObject({ status: "launching", attempt: 2 });
      expect(await reloadRun(store, c!.run.id)).toMatchObject({ status: "queued", failures: 1 });
      expect(await reload(store, task.id)).toMatchObject({ runCount: 2, lastError: null });
    });

    it("decides on a cancel asked since the claim, which the request's expectation does not hold", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerRun(store, ALL, task.id, "a", minute(0, 1));
      const [a] = await claimDue(store, minute(1));
      await cancelOneRun(store, a!.run.id, minute(1, 100));
      // The thread was busy: nothing started, and a run asked to stop ends instead of queueing again.
      const busy: LaunchOutcome = { kind: "busy", message: "thread busy" };
      const [result] = await store.runs.changeRuns([
        expecting(a!, launch(a!, minute(1, 200), busy)),
      ]);
      expect(result?.kind).toBe("changed");
      expect(await reloadRun(store, a!.run.id)).toMatchObject({
        status: "cancelled",
        reason: "cancel_requested",
      });
    });

    it("hands decide a once task's run_at, so a manual run that took the occurrence ends the task", async () => {
      const store = ctx.store();
      const task = await insertTask(store, { schedule: onceAt(minute(10)) });
      const plain = await insertTask(store, { schedule: onceAt(minute(10)) });
      const taken = await triggerTakingRun(store, ALL, task.id, "k", minute(0, 1));
      await triggerRun(store, ALL, plain.id, "k", minute(0, 1));
      expect(taken).toMatchObject({ trigger: "manual", scheduledFor: minute(10) });
      expect(await reload(store, task.id)).toMatchObject({
        status: "enabled",
        nextRunAt: null,
        decidedThrough: minute(10),
      });
      const contexts: unknown[] = [];
      const claimed = await claimDue(store, minute(0, 2));
      expect(claimed).toHaveLength(2);
      const results = await store.runs.changeRuns(
        claimed.flatMap((c) => [
          launch(c, minute(0, 3)),
          {
            id: c.run.id,
            decide: (run, context) => {
              contexts.push(context.onceAt);
              return completeRun(
                run,
                { status: "failed", error: "boom" },
                {
                  now: minute(0, 4),
                  task: context,
                },
              );
            },
          } satisfies RunChangeRequest,
        ]),
      );
      expect(results.map((r) => r.kind)).toEqual(["changed", "changed", "changed", "changed"]);
      expect(contexts).toEqual([minute(10), minute(10)]);
      expect(await reload(store, task.id)).toMatchObject({ status: "failed", lastError: "boom" });
      // A plain trigger stands for no occurrence: its once task is still due at run_at.
      expect(await reload(store, plain.id)).toMatchObject({
        status: "enabled",
        lastError: "boom",
        nextRunAt: minute(10),
      });
      expect((await admitDue(store, minute(10))).queuedRuns.map((r) => r.taskId)).toEqual([
        plain.id,
      ]);
    });

    it("books a launch answer that carries its verdict as launched and succeeded", async () => {
      const store = ctx.store();
      await insertTask(store, { schedule: onceAt(minute(1)) });
      await admitDue(store, minute(1));
      const [claimed] = await claimDue(store, minute(1, 1));
      const [result] = await store.runs.changeRuns([
        {
          id: claimed!.run.id,
          token: claimed!.run.claimToken!,
          decide: (run, task) =>
            applyLaunchAnswer(
              run,
              { outcome: LAUNCHED, completion: { status: "failed", error: "boom" } },
              { now: minute(1, 3), task, policy: POLICY },
            ),
        },
      ]);
      expect(result).toMatchObject({
        kind: "changed",
        change: {
          run: { status: "failed", launchedAt: minute(1, 3), error: "boom" },
          taskLaunch: { lastRunId: claimed!.run.id, runCountIncrement: 1 },
          taskVerdict: { lastError: "boom", status: "failed" },
        },
      });
      expect(await reload(store, claimed!.task.id)).toMatchObject({
        status: "failed",
        lastError: "boom",
        runCount: 1,
      });
    });

    it("adds up the launches and keeps the last verdict of runs of several tasks", async () => {
      const store = ctx.store();
      const [first, second] = await insertTasks(store, IDLE, IDLE);
      for (const key of ["a", "b"]) await triggerRun(store, ALL, first!.id, key, minute(0, 1));
      await triggerRun(store, ALL, second!.id, "c", minute(0, 2));
      const claimed = await claimDue(store, minute(1));
      expect(claimed).toHaveLength(3);
      const ofFirst = claimed.filter((c) => c.task.id === first!.id);
      const ofSecond = claimed.filter((c) => c.task.id === second!.id);
      await store.runs.changeRuns([
        ...claimed.map((c) => launch(c, minute(1, 10))),
        complete(ofFirst[0]!, { status: "failed", error: "one" }, minute(1, 20)),
        complete(ofFirst[1]!, { status: "succeeded" }, minute(1, 30)),
        complete(ofSecond[0]!, { status: "failed", error: "two" }, minute(1, 40)),
      ]);
      expect(await reload(store, first!.id)).toMatchObject({
        runCount: 2,
        lastRunId: ofFirst[1]!.run.id,
        lastError: null,
        status: "enabled",
      });
      expect(await reload(store, second!.id)).toMatchObject({
        runCount: 1,
        lastRunId: ofSecond[0]!.run.id,
        lastError: "two",
      });
    });

    it("refuses a missing run and a refused transition alone, and writes nothing for null", async () => {
      const store = ctx.store();
      const task = await insertTask(store, IDLE);
      await triggerRun(store, ALL, task.id, "c", minute(0, 1));
      const queued = await triggerRun(store, ALL, task.id, "q", minute(0, 2));
      const [claimed] = await claimDue(store, minute(1), { limit: 1 });
      expect(claimed!.run.id).not.toBe(queued!.id);
      const unchanged = vi.fn(() => null);
      const results = await store.runs.changeRuns([
        { id: runId("no-such-run"), decide: unchanged },
        // A launch outcome for a run that was never claimed: the domain refuses the transition.
        {
          id: queued!.id,
          decide: (run, current) =>
            applyLaunchOutcome(run, LAUNCHED, {
              now: minute(1, 1),
              task: current,
              policy: POLICY,
            }),
        },
        { id: queued!.id, token: fencingToken("never-issued"), decide: unchanged },
        { id: claimed!.run.id, decide: unchanged },
        launch(claimed!, minute(1, 2)),
      ]);
      expect(results.map((r) => (r.kind === "refused" ? r.error.code : r.kind))).toEqual([
        "not_found",
        "illegal_transition",
        "lease_lost",
        "unchanged",
        "changed",
      ]);
      expect(unchanged).toHaveBeenCalledTimes(1);
      expect(await reloadRun(store, queued!.id)).toEqual(queued);
      expect(await reloadRun(store, claimed!.run.id)).toMatchObject({ status: "running" });
      expect((await reload(store, task.id)).runCount).toBe(1);
    });

    it("answers an empty batch with no results", async () => {
      expect(await ctx.store().runs.changeRuns([])).toEqual([]);
    });
  });
}
