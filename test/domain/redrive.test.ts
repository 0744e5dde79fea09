/**
 * Redrive (docs/semantics.md#redrive): `redriveRun` puts a failed, timed-out or cancelled run back in the
 * queue as the same row and key, its next claim attempt + 1, `failures` kept (one more try past
 * `max_attempts`), queued as of the redrive; `redriveTaskRun` lets the overlap policy act on it as on a
 * manual trigger; a once task's status follows the redriven run's next verdict.
 */
import { describe, expect, it } from "vitest";
import type { RunId } from "../../src/domain/ids.js";
import { RUN_STATUSES } from "../../src/domain/run.js";
import type { Run } from "../../src/domain/run.js";
import { runTaskContext } from "../../src/domain/run-change.js";
import { completeRun, redriveRun } from "../../src/domain/run-transitions.js";
import { timeOutRun } from "../../src/domain/run-recovery.js";
import { redriveTaskRun } from "../../src/domain/task-commands.js";
import {
  buildRun,
  buildTask,
  claimed,
  ctxOf,
  HOUR,
  MINUTE,
  options,
  plus,
  running,
  schedule,
  T0,
} from "./builders.js";

/** A run that ran at T0 and failed its only attempt at T0 + 1 min. */
function failedRun(ctx = ctxOf()): Run {
  const change = completeRun(
    running(buildRun(), T0, ctx),
    { status: "failed", error: "boom", result: { partial: true } },
    { now: plus(T0, MINUTE), task: ctx },
  );
  expect(change.run).toMatchObject({ status: "failed", failures: 1, attempt: 1 });
  return change.run;
}

describe("redriveRun", () => {
  it("queues the same run and key as of the redrive, clearing what the ended attempt left", () => {
    const failed = failedRun();
    const now = plus(T0, 2 * HOUR);
    const redriven = redriveRun(failed, now);
    expect(redriven).toEqual({
      ...failed,
      status: "queued",
      reason: null,
      notBefore: now,
      queuedAt: now,
      claimToken: null,
      claimExpiresAt: null,
      targetRunId: null,
      launchedAt: null,
      deadlineAt: null,
      finishedAt: null,
      latenessMs: null,
      late: false,
      cancelRequestedAt: null,
      result: null,
    });
    expect(redriven).toMatchObject({ attempt: 1, failures: 1, error: "boom" });
  });

  it("makes the next claim attempt + 1, and gives one more try past max_attempts", () => {
    const ctx = ctxOf("interval", { retry: { maxAttempts: 1 } });
    const redriven = redriveRun(failedRun(ctx), plus(T0, HOUR));
    const again = running(redriven, plus(T0, HOUR), ctx);
    expect(again).toMatchObject({ attempt: 2, status: "running" });
    const ended = completeRun(again, { status: "failed" }, { now: plus(T0, 2 * HOUR), task: ctx });
    expect(ended.run).toMatchObject({ status: "failed", failures: 2, reason: "target_failed" });
  });

  it("redrives timed-out and cancelled runs too", () => {
    const ctx = ctxOf();
    const timedOut = timeOutRun(running(buildRun(), T0, ctx), plus(T0, HOUR), ctx).run;
    expect(timedOut.status).toBe("timed_out");
    expect(redriveRun(timedOut, plus(T0, 2 * HOUR)).status).toBe("queued");
    const cancelled = { ...buildRun(), status: "cancelled" as const, finishedAt: T0 };
    expect(redriveRun(cancelled, plus(T0, HOUR))).toMatchObject({
      status: "queued",
      finishedAt: null,
    });
  });

  it.each(RUN_STATUSES.filter((s) => !["failed", "timed_out", "cancelled"].includes(s)))(
    "refuses a %s run with illegal_transition, saying why",
    (status) => {
      const run = buildRun({ status });
      let thrown: unknown;
      try {
        redriveRun(run, T0);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: "illegal_transition", status });
      const why = (thrown as Error).message;
      if (["queued", "launching", "running"].includes(status))
        expect(why).toContain("still active");
      else if (status === "succeeded") expect(why).toContain("trigger the task");
      else expect(why).toContain("never launched");
    },
  );
});

describe("redriveTaskRun", () => {
  const active = (id: string): Run => claimed(buildRun({ id: id as RunId }), T0);

  it("is refused under overlap skip while the task has an active run (run_active)", () => {
    const task = buildTask({ options: options({ overlap: "skip" }) });
    expect(() => redriveTaskRun(task, [active("r-2")], failedRun(), T0)).toThrow(
      expect.objectContaining({ code: "run_active" }) as Error,
    );
    expect(redriveTaskRun(task, [], failedRun(), T0).runUpdates.map((r) => r.status)).toEqual([
      "queued",
    ]);
  });

  it("asks the active run to stop under cancel_other, as a manual trigger does", () => {
    const task = buildTask({ options: options({ overlap: "cancel_other" }) });
    const outcome = redriveTaskRun(task, [active("r-2")], failedRun(), plus(T0, HOUR));
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["r-2", "launching", "superseded"],
      ["run-1", "queued", null],
    ]);
    expect(outcome.run.status).toBe("queued");
  });

  it("changes nothing else under buffer_one, buffer_all and allow_all", () => {
    for (const overlap of ["buffer_one", "buffer_all", "allow_all"] as const) {
      const task = buildTask({ options: options({ overlap }) });
      const outcome = redriveTaskRun(task, [active("r-2")], failedRun(), T0);
      expect(outcome.runUpdates.map((r) => r.id)).toEqual(["run-1"]);
      expect(outcome.task).toBe(task);
    }
  });
});

describe("a once task's status after a redrive", () => {
  it("follows the redriven run's next verdict", () => {
    const task = buildTask({
      schedule: schedule({ type: "once", run_at: "2026-03-02T09:00:00Z" }),
      status: "failed",
    });
    const ctx = runTaskContext(task);
    const redriven = redriveRun(failedRun(ctx), plus(T0, HOUR));
    const done = completeRun(
      running(redriven, plus(T0, HOUR), ctx),
      { status: "succeeded" },
      {
        now: plus(T0, 2 * HOUR),
        task: ctx,
      },
    );
    expect(done.taskVerdict).toEqual({ lastError: null, status: "completed" });
  });
});
