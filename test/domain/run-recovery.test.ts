/**
 * The recovery decisions about a run a sweep or the watcher read earlier (docs/architecture.md): each
 * applies its transition while the run is still as it was found, and is "no change" (null) once the run
 * has moved on, so a stale sweep or a verdict about an earlier attempt never rewrites a later state.
 */
import { describe, expect, it } from "vitest";
import {
  reconcileExpiredClaim,
  reconcileUncertainLaunch,
  sweepDeadline,
  sweepExpiredClaim,
  sweepLostReplica,
  sweepQueueTimeout,
  timeOutRun,
  expireQueuedRun,
  loseRunWithReplica,
} from "../../src/domain/run-recovery.js";
import { completeFromTarget, completeRun } from "../../src/domain/run-transitions.js";
import type { Run } from "../../src/domain/run.js";
import {
  buildRun,
  claimed,
  ctxOf,
  DAY,
  HOUR,
  MINUTE,
  plus,
  running,
  SECOND,
  T0,
} from "./builders.js";

const TASK = ctxOf("interval");
const ended = (run: Run): Run =>
  completeRun(run, { status: "succeeded" }, { now: T0, task: TASK }).run;

describe("sweepDeadline", () => {
  const late = plus(T0, 2 * HOUR);

  it("times out a run still running past its deadline, as timeOutRun does", () => {
    const run = running();
    expect(sweepDeadline(run, late, TASK)).toEqual(timeOutRun(run, late, TASK));
  });

  it("is no change before the deadline, and once the run has ended or gone back to the queue", () => {
    expect(sweepDeadline(running(), plus(T0, MINUTE), TASK)).toBeNull();
    expect(sweepDeadline(ended(running()), late, TASK)).toBeNull();
    expect(sweepDeadline({ ...buildRun(), deadlineAt: T0 }, late, TASK)).toBeNull();
  });
});

describe("sweepQueueTimeout", () => {
  const later = plus(T0, DAY + SECOND);

  it("expires a run still queued past its queue timeout, as expireQueuedRun does", () => {
    const run = buildRun();
    expect(sweepQueueTimeout(run, later, TASK)).toEqual(expireQueuedRun(run, later, TASK));
  });

  it("is no change for a run claimed since, or one not yet past its timeout", () => {
    expect(sweepQueueTimeout(claimed(), later, TASK)).toBeNull();
    expect(sweepQueueTimeout(buildRun(), plus(T0, HOUR), TASK)).toBeNull();
  });
});

describe("sweepLostReplica", () => {
  it("loses a run still running, as loseRunWithReplica does", () => {
    const run = running();
    const now = plus(T0, MINUTE);
    expect(sweepLostReplica(run, now, TASK)).toEqual(loseRunWithReplica(run, now, TASK));
  });

  it("is no change once the run has ended or was handed back to the queue", () => {
    expect(sweepLostReplica(ended(running()), T0, TASK)).toBeNull();
    expect(sweepLostReplica(buildRun(), T0, TASK)).toBeNull();
  });
});

describe("sweepExpiredClaim", () => {
  const ctx = { now: plus(T0, 2 * MINUTE), task: TASK };

  it("reconciles a run still launching, as reconcileExpiredClaim does", () => {
    const run = claimed();
    const finding = { kind: "found", targetRunId: "t-1" } as const;
    expect(sweepExpiredClaim(run, finding, ctx)).toEqual(reconcileExpiredClaim(run, finding, ctx));
  });

  it("is no change once the launch answer or a verdict landed", () => {
    expect(sweepExpiredClaim(running(), { kind: "absent" }, ctx)).toBeNull();
    expect(sweepExpiredClaim(ended(claimed()), { kind: "unknown" }, ctx)).toBeNull();
  });
});

describe("reconcileUncertainLaunch with the attempt asked about", () => {
  const uncertain = (run = buildRun()): Run => ({ ...running(run), targetRunId: null });
  const ctx = { now: plus(T0, 2 * MINUTE), task: TASK };

  it("records what the target said about that attempt", () => {
    const run = uncertain();
    const change = reconcileUncertainLaunch(
      run,
      { kind: "found", targetRunId: "t-2" },
      { ...ctx, attempt: run.attempt },
    );
    expect(change?.run.targetRunId).toBe("t-2");
  });

  it("is no change for a later attempt of the run", () => {
    const run = uncertain();
    expect(
      reconcileUncertainLaunch(run, { kind: "absent" }, { ...ctx, attempt: run.attempt - 1 }),
    ).toBeNull();
  });
});

describe("completeFromTarget", () => {
  const ctx = { now: plus(T0, 5 * MINUTE), task: TASK };
  const verdict = { status: "succeeded" } as const;

  it("records a verdict about the target run the run points at", () => {
    const run = running();
    expect(completeFromTarget(run, "target-1", verdict, ctx)).toEqual(
      completeRun(run, verdict, ctx),
    );
  });

  it("is no change for a verdict about another target run (an earlier attempt)", () => {
    expect(completeFromTarget(running(), "target-0", verdict, ctx)).toBeNull();
  });

  it("lets an uncertain launch learn its target run id from the verdict", () => {
    const change = completeFromTarget({ ...running(), targetRunId: null }, "t-9", verdict, ctx);
    expect(change?.run).toMatchObject({ status: "succeeded", targetRunId: "t-9" });
  });

  it("is no change for a run without a target run id that is not running (a relaunch)", () => {
    expect(completeFromTarget(buildRun(), "t-9", verdict, ctx)).toBeNull();
    expect(completeFromTarget(claimed(), "t-9", verdict, ctx)).toBeNull();
  });
});
