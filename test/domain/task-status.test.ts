/**
 * The task status table of docs/semantics.md#task-statuses, row by row: which event moves a task to which status, and which
 * writer (admission, completion, the service's commands) does it. Each row drives the real domain
 * functions and applies their task patches as the stores do.
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import { newRunFromDecision } from "../../src/domain/new-run.js";
import type { Run } from "../../src/domain/run.js";
import { applyLaunchOutcome, completeRun } from "../../src/domain/run-transitions.js";
import { expireQueuedRun, loseRunWithReplica, timeOutRun } from "../../src/domain/run-recovery.js";
import type { RunChange } from "../../src/domain/run-change.js";
import {
  backfillTask,
  cancelTask,
  triggerTakingOccurrence,
  triggerTask,
} from "../../src/domain/task-commands.js";
import { editTask } from "../../src/domain/task-fields.js";
import type { Task, TaskStatus } from "../../src/domain/task.js";
import { TASK_STATUSES } from "../../src/domain/task.js";
import {
  activeView,
  at,
  buildRun,
  buildTask,
  claimed,
  HOUR,
  inserted,
  MINUTE,
  options,
  plus,
  policy,
  running,
  schedule,
  T0,
  taskContext,
  withChange,
} from "./builders.js";

const RUN_AT = at("2026-03-02T10:00:00Z");
const onceTask = (overrides: Partial<Task> = {}): Task =>
  buildTask({ schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }), ...overrides });

/** A once task admitted at its run_at, with its scheduled run launched. */
function launchedOnce(maxAttempts = 1): { task: Task; run: Run } {
  let task = onceTask({ options: options({ retry: { maxAttempts } }) });
  const admission = admit({ task, now: RUN_AT, activeRuns: [] });
  task = { ...task, ...admission.task };
  const [decision] = admission.decisions;
  expect(decision?.kind).toBe("queue");
  const scope = { id: task.id, owner: task.owner, threadScope: "handler" };
  const run = inserted(newRunFromDecision(scope, decision!, RUN_AT), "run-1");
  const change = applyLaunchOutcome(
    claimed(run, RUN_AT, task.options),
    { kind: "launched", targetRunId: "t-1" },
    { now: RUN_AT, task: taskContext(task), policy: policy() },
  );
  return { task: withChange(task, change), run: change.run };
}

describe("task status (docs/semantics.md#task-statuses)", () => {
  it("has no running status", () => {
    expect(TASK_STATUSES).toEqual(["enabled", "paused", "completed", "failed", "cancelled"]);
  });

  describe("row: a cron/interval task has no further occurrence -> admission -> completed", () => {
    it("completes a cron task at its end_at and leaves its running run alone", () => {
      const task = buildTask({
        schedule: schedule({ type: "cron", cron: "0 * * * *", end_at: "2026-03-02T11:00:00Z" }),
        decidedThrough: at("2026-03-02T10:00:00Z"),
      });
      const admission = admit({
        task,
        now: at("2026-03-02T11:00:05Z"),
        activeRuns: [activeView("running")],
      });
      expect(admission.task).toMatchObject({ status: "completed", nextRunAt: null });
      expect(admission.cancellations).toEqual([]);
      // The run still active finishes normally and does not change the completed status.
      const done = completeRun(
        running(),
        { status: "failed", error: "late failure" },
        {
          now: at("2026-03-02T11:30:00Z"),
          task: taskContext(task),
        },
      );
      expect(withChange({ ...task, ...admission.task }, done).status).toBe("completed");
    });

    it("completes an interval task once max_runs scheduled occurrences were admitted", () => {
      const task = buildTask({
        schedule: schedule({ type: "interval", every: "PT5M", max_runs: 1 }),
      });
      const admission = admit({ task, now: plus(T0, 5 * MINUTE), activeRuns: [] });
      expect(admission.task).toMatchObject({ status: "completed", admittedCount: 1 });
    });
  });

  describe("row: a once task's run succeeded -> completion -> completed", () => {
    it("completes the task", () => {
      const { task, run } = launchedOnce();
      expect(task.status).toBe("enabled");
      const change = completeRun(
        run,
        { status: "succeeded" },
        {
          now: plus(RUN_AT, MINUTE),
          task: taskContext(task),
        },
      );
      expect(withChange(task, change)).toMatchObject({ status: "completed", lastError: null });
    });
  });

  describe("row: a once task's run failed or timed_out with no retry left -> completion -> failed", () => {
    const endings: [string, (run: Run, task: Task) => RunChange][] = [
      [
        "failed",
        (run, task) =>
          completeRun(
            run,
            { status: "failed", error: "boom" },
            { now: plus(RUN_AT, MINUTE), task: taskContext(task) },
          ),
      ],
      ["timed out", (run, task) => timeOutRun(run, plus(RUN_AT, 2 * HOUR), taskContext(task))],
      [
        "lost with its replica",
        (run, task) => loseRunWithReplica(run, plus(RUN_AT, MINUTE), taskContext(task)),
      ],
    ];

    it.each(endings)("fails the task when its run %s with no retry left", (_name, end) => {
      const { task, run } = launchedOnce();
      const after = withChange(task, end(run, task));
      expect(after.status).toBe("failed");
      expect(after.lastError).not.toBeNull();
    });

    it.each(endings)("keeps the task enabled when its run %s with a retry left", (_name, end) => {
      const { task, run } = launchedOnce(2);
      const change = end(run, task);
      expect(change.run.status).toBe("queued");
      expect(withChange(task, change).status).toBe("enabled");
    });

    it("fails the task when its launch certainly failed with no retry left", () => {
      const { task } = launchedOnce();
      const change = applyLaunchOutcome(
        claimed(buildRun({ scheduledFor: RUN_AT })),
        { kind: "failed", message: "HTTP 404" },
        { now: RUN_AT, task: taskContext(task), policy: policy() },
      );
      expect(withChange(task, change)).toMatchObject({ status: "failed", lastError: "HTTP 404" });
    });

    it("fails the task when its run waited in the queue past queue_timeout", () => {
      const task = onceTask();
      const change = expireQueuedRun(
        buildRun({ scheduledFor: RUN_AT }),
        plus(RUN_AT, 25 * HOUR),
        taskContext(task),
      );
      expect(withChange(task, change).status).toBe("failed");
    });
  });

  describe("row: a once task's run cancelled -> completion -> cancelled", () => {
    it("cancels the task", () => {
      const { task, run } = launchedOnce();
      const change = completeRun(
        run,
        { status: "cancelled" },
        {
          now: plus(RUN_AT, MINUTE),
          task: taskContext(task),
        },
      );
      expect(withChange(task, change).status).toBe("cancelled");
    });
  });

  describe("row: a once task's occurrence skipped or missed -> admission -> failed, reason in last_error", () => {
    it("fails the task when its occurrence is skipped for overlap", () => {
      const admission = admit({
        task: onceTask(),
        now: RUN_AT,
        activeRuns: [activeView("running", "manual-run")],
      });
      expect(admission.task.status).toBe("failed");
      expect(admission.task.lastError).toMatch(/overlap/);
    });

    it("fails the task when its occurrence is missed outside the window", () => {
      const admission = admit({ task: onceTask(), now: plus(RUN_AT, 2 * HOUR), activeRuns: [] });
      expect(admission.task.status).toBe("failed");
      expect(admission.task.lastError).toMatch(/window/);
    });

    it("fails the task when catch-up none misses its overdue occurrence", () => {
      const admission = admit({
        task: onceTask({ options: options({ catchUp: { policy: "none" } }) }),
        now: plus(RUN_AT, 10 * MINUTE),
        activeRuns: [],
      });
      expect(admission.task.status).toBe("failed");
      expect(admission.task.lastError).toMatch(/down/);
    });
  });

  describe("row: the owner cancels the task -> service -> cancelled (queued runs cancelled)", () => {
    it("cancels the task and its queued runs", () => {
      const queued = buildRun();
      const outcome = cancelTask(
        buildTask(),
        [queued, running(buildRun({ id: "run-2" as Run["id"] }))],
        T0,
      );
      expect(outcome.task).toMatchObject({ status: "cancelled", nextRunAt: null });
      expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
        ["run-1", "cancelled", "task_cancelled"],
      ]);
    });
  });

  describe("row: manual or backfill runs, any outcome -> unchanged (only last_* fields move)", () => {
    const task = onceTask();
    const manual = inserted(triggerTask(task, [], { now: T0, clientKey: "k" }), "m-1");
    const backfill = inserted(
      backfillTask(buildTask({ schedule: schedule({ type: "cron", cron: "0 8 * * *" }) }), {
        now: T0,
        from: at("2026-03-01T00:00:00Z"),
        to: T0,
      })[0]!,
      "b-1",
    );
    const ctx = { now: plus(T0, MINUTE), task: taskContext(task) };
    const outcomes: [string, (run: Run) => RunChange][] = [
      ["succeeded", (run) => completeRun(running(run), { status: "succeeded" }, ctx)],
      ["failed", (run) => completeRun(running(run), { status: "failed", error: "x" }, ctx)],
      ["cancelled", (run) => completeRun(running(run), { status: "cancelled" }, ctx)],
      ["timed out", (run) => timeOutRun(running(run), plus(T0, 3 * HOUR), taskContext(task))],
      [
        "expired in the queue",
        (run) => expireQueuedRun(run, plus(T0, 25 * HOUR), taskContext(task)),
      ],
      [
        "failed to launch",
        (run) =>
          applyLaunchOutcome(
            claimed(run),
            { kind: "failed", message: "x" },
            { ...ctx, policy: policy() },
          ),
      ],
    ];
    const rows = [manual, backfill].flatMap((run) =>
      outcomes.map(([name, end]) => ({ name: `${run.trigger} run ${name}`, run, end })),
    );

    it.each(rows)("leaves a once task's status alone when a $name", ({ run, end }) => {
      for (const status of ["enabled", "paused", "completed"] as TaskStatus[]) {
        expect(withChange({ ...task, status }, end(run)).status).toBe(status);
      }
    });

    it("moves only last_run_at, last_run_id and run_count when a manual run launches", () => {
      const paused = { ...task, status: "paused" as const };
      const change = applyLaunchOutcome(
        claimed(manual, T0),
        { kind: "launched", targetRunId: "t" },
        {
          now: T0,
          task: taskContext(task),
          policy: policy(),
        },
      );
      expect(withChange(paused, change)).toEqual({
        ...paused,
        lastRunAt: T0,
        lastRunId: "m-1",
        runCount: 1,
      });
    });
  });

  describe("row: a manual run that took a once task's occurrence (DeerFlow's trigger) -> completion -> its end", () => {
    /** A once task triggered at T0 (before its run_at) by a trigger that takes the occurrence. */
    function takenOnce(status: TaskStatus = "enabled"): { task: Task; run: Run } {
      const taken = triggerTakingOccurrence(onceTask({ status }), [], { now: T0, clientKey: "k" });
      const ctx = { now: T0, task: taskContext(taken.task), policy: policy() };
      const change = applyLaunchOutcome(
        claimed(inserted(taken.newRun, "m-1"), T0),
        { kind: "launched", targetRunId: "t-1" },
        ctx,
      );
      return { task: withChange(taken.task, change), run: change.run };
    }

    it("takes the occurrence at the trigger: the task no longer fires at run_at", () => {
      const { task } = takenOnce();
      expect(task).toMatchObject({ status: "enabled", nextRunAt: null, decidedThrough: RUN_AT });
      expect(admit({ task, now: plus(RUN_AT, MINUTE), activeRuns: [] }).decisions).toEqual([]);
    });

    const ends: [string, TaskStatus, (run: Run, task: Task) => RunChange][] = [
      [
        "succeeded",
        "completed",
        (run, task) =>
          completeRun(
            run,
            { status: "succeeded" },
            { now: plus(T0, MINUTE), task: taskContext(task) },
          ),
      ],
      [
        "failed",
        "failed",
        (run, task) =>
          completeRun(
            run,
            { status: "failed", error: "boom" },
            { now: plus(T0, MINUTE), task: taskContext(task) },
          ),
      ],
      [
        "timed out",
        "failed",
        (run, task) => timeOutRun(run, plus(T0, 3 * HOUR), taskContext(task)),
      ],
      [
        "cancelled",
        "cancelled",
        (run, task) =>
          completeRun(
            run,
            { status: "cancelled" },
            { now: plus(T0, MINUTE), task: taskContext(task) },
          ),
      ],
    ];

    it.each(ends)(
      "ends the task (enabled, paused or completed before) when the run %s",
      (_name, status, end) => {
        for (const before of ["enabled", "paused", "completed"] as TaskStatus[]) {
          const { task, run } = takenOnce(before);
          expect(withChange(task, end(run, task)).status).toBe(status);
        }
      },
    );

    it("fails the task when the run waited in the queue past queue_timeout", () => {
      const taken = triggerTakingOccurrence(onceTask(), [], { now: T0, clientKey: "k" });
      const run = inserted(taken.newRun, "m-1");
      const change = expireQueuedRun(run, plus(T0, 25 * HOUR), taskContext(taken.task));
      expect(withChange(taken.task, change).status).toBe("failed");
    });

    it("decides nothing once an edit moved the occurrence: the new run_at is the task's", () => {
      const { task, run } = takenOnce();
      const edited = editTask(
        task,
        { schedule: schedule({ type: "once", run_at: "2026-03-03T10:00:00Z" }, T0) },
        { now: T0, policy: policy() },
      );
      const change = completeRun(
        run,
        { status: "succeeded" },
        { now: plus(T0, MINUTE), task: taskContext(edited) },
      );
      expect(withChange(edited, change)).toMatchObject({
        status: "enabled",
        nextRunAt: at("2026-03-03T10:00:00Z"),
      });
    });

    it("takes nothing of a recurring task: its trigger is a plain manual run", () => {
      const cron = buildTask({ schedule: schedule({ type: "cron", cron: "0 10 * * *" }) });
      const taken = triggerTakingOccurrence(cron, [], { now: T0, clientKey: "k" });
      expect(taken.task).toBe(cron);
      expect(taken.newRun).toEqual(triggerTask(cron, [], { now: T0, clientKey: "k" }));
    });
  });

  describe("row: an edit with a new future occurrence on a terminal task -> service -> enabled", () => {
    it.each(["completed", "failed", "cancelled"] as const)("re-arms a %s task", (status) => {
      const task = onceTask({ status, nextRunAt: null, decidedThrough: RUN_AT, lastError: "old" });
      const now = plus(RUN_AT, HOUR);
      const edited = editTask(
        task,
        { schedule: schedule({ type: "once", run_at: "2026-03-03T10:00:00Z" }, now) },
        { now, policy: policy() },
      );
      expect(edited).toMatchObject({
        status: "enabled",
        nextRunAt: at("2026-03-03T10:00:00Z"),
        decidedThrough: now,
        lastError: null,
      });
    });
  });
});
