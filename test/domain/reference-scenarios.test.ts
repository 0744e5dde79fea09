/**
 * The domain scenarios of the reference (deerflow-scheduler.md 6.1, test_schedule_domain.py) and the
 * decision parts of its service scenarios (6.2, test_schedule_service.py), ported to punctual's model:
 * no `running` task status (docs/semantics.md#task-statuses), runs with their own state machine (docs/semantics.md#run-statuses), and field ownership
 * between admission, launch bookkeeping and completion (docs/semantics.md#completion). Schedule parsing and `nextAfter`
 * scenarios of 6.1 live in test/domain/schedule/. Scenarios that do not apply to our model are named in
 * the describe that replaces them.
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import type { ActiveRunView } from "../../src/domain/admission.js";
import { selectClaimable } from "../../src/domain/claim.js";
import type { ClaimCandidate } from "../../src/domain/claim.js";
import { ActiveRunError, PunctualError } from "../../src/domain/errors.js";
import type { OwnerId, RunId, ThreadId } from "../../src/domain/ids.js";
import { newRunFromDecision } from "../../src/domain/new-run.js";
import { DEFAULT_POLICY, DEFAULT_TASK_OPTIONS, isExclusive } from "../../src/domain/options.js";
import {
  holdsSlot,
  isActiveRunStatus,
  isTerminalRunStatus,
  RUN_STATUSES,
} from "../../src/domain/run.js";
import type { Run } from "../../src/domain/run.js";
import { applyLaunchOutcome, completeRun } from "../../src/domain/run-transitions.js";
import { loseRunWithReplica, timeOutRun } from "../../src/domain/run-recovery.js";
import type { LaunchOutcome, RunChange } from "../../src/domain/run-change.js";
import { activeView } from "../../src/domain/admit-task.js";
import { createTask, editTask } from "../../src/domain/task-fields.js";
import { deleteTask, pauseTask, resumeTask, triggerTask } from "../../src/domain/task-commands.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import {
  at,
  buildRun,
  buildTask,
  claimed,
  deepFreeze,
  HOUR,
  inserted,
  MINUTE,
  options,
  OWNER,
  plus,
  policy,
  running,
  schedule,
  SECOND,
  T0,
  TASK_ID,
  taskContext,
  userFields,
  withChange,
} from "./builders.js";

const CREATE = { id: TASK_ID, owner: OWNER, now: T0, policy: policy(), webhookSecret: "s" };
const onceFields = (runAt: Instant) =>
  userFields({ schedule: schedule({ type: "once", run_at: new Date(runAt).toISOString() }) });
const hourlyCron = schedule({ type: "cron", cron: "0 * * * *" });

function refused(action: () => unknown): PunctualError {
  try {
    action();
  } catch (error) {
    if (error instanceof PunctualError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("reference 6.1: the domain", () => {
  describe("ensure launchable (TestEnsureLaunchable)", () => {
    const floor = { ...CREATE, policy: policy({ minOnceDelayMs: 60 * SECOND }) };

    it("rejects a once task in the past", () => {
      expect(refused(() => createTask(onceFields(plus(T0, -HOUR)), CREATE)).code).toBe(
        "validation_failed",
      );
    });

    it("rejects a once task closer than the minimum delay", () => {
      expect(refused(() => createTask(onceFields(plus(T0, 59 * SECOND)), floor)).code).toBe(
        "validation_failed",
      );
    });

    it("accepts a once task exactly the minimum delay away", () => {
      expect(createTask(onceFields(plus(T0, 60 * SECOND)), floor).status).toBe("enabled");
    });

    it("never subjects a cron task to the floor", () => {
      const everySecond = schedule({ type: "cron", cron: "* * * * * *" });
      expect(createTask(userFields({ schedule: everySecond }), floor).nextRunAt).toBe(
        plus(T0, SECOND),
      );
    });
  });

  describe("schedule policy defaults (TestSchedulePolicyDefaults)", () => {
    it("has permissive defaults: no once floor in the domain, a 60 s lease, 16 concurrent runs", () => {
      expect(DEFAULT_POLICY).toMatchObject({
        minOnceDelayMs: 0,
        leaseMs: 60_000,
        maxConcurrentRuns: 16,
      });
      expect(DEFAULT_POLICY.defaultOptions).toBe(DEFAULT_TASK_OPTIONS);
    });

    it("has the documented per-task option defaults (docs/semantics.md#the-life-of-an-occurrence, docs/semantics.md#launch, docs/semantics.md#completion)", () => {
      expect(DEFAULT_TASK_OPTIONS).toEqual({
        overlap: "skip",
        catchUp: { windowMs: HOUR, policy: "latest" },
        lateAfterMs: MINUTE,
        retry: { maxAttempts: 1, initialMs: 10 * SECOND, maxDelayMs: 10 * MINUTE },
        runTimeoutMs: HOUR,
        queueTimeoutMs: 24 * HOUR,
      });
    });

    it("admits an imminent once task under the default floor", () => {
      expect(createTask(onceFields(plus(T0, SECOND)), CREATE).nextRunAt).toBe(plus(T0, SECOND));
    });
  });

  describe("task invariants (TestScheduledTaskInvariants)", () => {
    it("requires a thread for reuse_thread", () => {
      const fields = userFields({ context: { mode: "reuse_thread", threadId: "" as ThreadId } });
      expect(refused(() => createTask(fields, CREATE))).toMatchObject({
        code: "validation_failed",
        errors: [{ field: "context.thread_id" }],
      });
    });

    it("computes next_run_at and the defaults at create", () => {
      const task = createTask(userFields({ schedule: hourlyCron }), CREATE);
      expect(task).toMatchObject({
        status: "enabled",
        nextRunAt: plus(T0, HOUR),
        options: DEFAULT_TASK_OPTIONS,
        runCount: 0,
        admittedCount: 0,
        version: 1,
      });
    });

    it("stamps created_at and updated_at from now", () => {
      const now = plus(T0, 123 * SECOND);
      const task = createTask(userFields({ schedule: hourlyCron }), { ...CREATE, now });
      expect([task.createdAt, task.updatedAt]).toEqual([now, now]);
    });

    it("rejects a once task inside the delay floor at create", () => {
      const floor = { ...CREATE, policy: policy({ minOnceDelayMs: 10 * SECOND }) };
      expect(refused(() => createTask(onceFields(plus(T0, 5 * SECOND)), floor)).code).toBe(
        "validation_failed",
      );
    });

    it("reflects the overlap policy in whether runs are exclusive (skips_on_overlap)", () => {
      expect(isExclusive("skip")).toBe(true);
      expect(isExclusive("buffer_one")).toBe(true);
      expect(isExclusive("cancel_other")).toBe(true);
      expect(isExclusive("allow_all")).toBe(false);
    });
  });

  describe("task status after launch (TestStatusAfterLaunch: no running task status here)", () => {
    const outcomes: LaunchOutcome[] = [
      { kind: "launched", targetRunId: "t" },
      { kind: "indeterminate", message: "5xx" },
    ];

    it.each(["enabled", "paused"] as const)(
      "never changes a %s task's status at launch, of any trigger or schedule type",
      (status) => {
        for (const type of ["once", "cron"] as const) {
          for (const trigger of ["scheduled", "manual"] as const) {
            for (const outcome of outcomes) {
              const task = buildTask({
                status,
                schedule:
                  type === "once"
                    ? schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" })
                    : hourlyCron,
              });
              const change = applyLaunchOutcome(claimed(buildRun({ trigger })), outcome, {
                now: T0,
                task: taskContext(task),
                policy: policy(),
              });
              expect(withChange(task, change).status).toBe(status);
            }
          }
        }
      },
    );

    it("lets a manual trigger of a paused once task run while the task stays paused", () => {
      const task = buildTask({
        status: "paused",
        schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
      });
      const manual = inserted(triggerTask(task, [], { now: T0, clientKey: "k" }), "m");
      const change = applyLaunchOutcome(
        claimed(manual),
        { kind: "launched", targetRunId: "t" },
        {
          now: T0,
          task: taskContext(task),
          policy: policy(),
        },
      );
      expect(change.run.status).toBe("running");
      expect(withChange(task, change)).toMatchObject({
        status: "paused",
        runCount: 1,
        lastRunId: "m",
      });
    });
  });

  describe("task status after failure (TestStatusAfterFailure)", () => {
    const fail = (task: Task, trigger: Run["trigger"]) =>
      withChange(
        task,
        completeRun(
          running(buildRun({ trigger })),
          { status: "failed", error: "boom" },
          {
            now: T0,
            task: taskContext(task),
          },
        ),
      );
    const once = (status: Task["status"]) =>
      buildTask({ status, schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }) });
    const cron = (status: Task["status"]) => buildTask({ status, schedule: hourlyCron });

    it("fails a once task whose scheduled run failed", () => {
      expect(fail(once("enabled"), "scheduled").status).toBe("failed");
    });

    it("keeps a cron task enabled when its scheduled run failed, recording the error", () => {
      expect(fail(cron("enabled"), "scheduled")).toMatchObject({
        status: "enabled",
        lastError: "boom",
      });
    });

    it.each(["enabled", "paused"] as const)(
      "keeps a %s cron task's status when a manual run failed",
      (s) => {
        expect(fail(cron(s), "manual").status).toBe(s);
      },
    );

    it.each(["enabled", "paused"] as const)(
      "keeps a %s once task's status when a manual trigger failed",
      (s) => {
        expect(fail(once(s), "manual").status).toBe(s);
      },
    );
  });

  describe("task status after skip (TestStatusAfterSkip)", () => {
    const busy: ActiveRunView[] = [{ id: "m" as RunId, status: "running", cancelRequested: false }];

    it("fails a once task whose occurrence is skipped, not completes it", () => {
      const task = buildTask({
        schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
      });
      expect(admit({ task, now: at("2026-03-02T10:00:00Z"), activeRuns: busy }).task.status).toBe(
        "failed",
      );
    });

    it("keeps a cron task enabled when an occurrence is skipped", () => {
      const task = buildTask({ schedule: hourlyCron });
      const admission = admit({ task, now: plus(T0, HOUR), activeRuns: busy });
      expect(admission.decisions.map((d) => d.kind)).toEqual(["skip"]);
      expect(admission.task.status).toBe("enabled");
      expect(admission.task.lastError).toBeUndefined();
    });
  });

  describe("task status after completion (TestStatusAfterCompletion)", () => {
    const verdicts = ["succeeded", "failed", "cancelled"] as const;

    it.each(verdicts)("never changes a cron task's status when its run ends %s", (status) => {
      const task = buildTask({ schedule: hourlyCron });
      const change = completeRun(running(), { status }, { now: T0, task: taskContext(task) });
      expect(withChange(task, change).status).toBe("enabled");
    });

    it.each([
      ["succeeded", "completed"],
      ["cancelled", "cancelled"],
      ["failed", "failed"],
    ] as const)("maps a once task's %s run to %s", (status, expected) => {
      const task = buildTask({
        schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
      });
      const change = completeRun(running(), { status }, { now: T0, task: taskContext(task) });
      expect(withChange(task, change).status).toBe(expected);
    });
  });

  describe("mutability (TestMutabilityGate: edits are allowed while a run is active here)", () => {
    it("edits a task whose run is running: version covers user fields only (docs/semantics.md#task-operations)", () => {
      const edited = editTask(
        buildTask(),
        { title: "still editable" },
        { now: T0, policy: policy() },
      );
      expect(edited.version).toBe(2);
    });

    it("gates pause and resume on the task's status", () => {
      expect(
        refused(() =>
          pauseTask(buildTask({ status: "completed" }), [], { now: T0, cancelRunning: false }),
        ).code,
      ).toBe("illegal_transition");
      expect(
        refused(() => resumeTask(buildTask({ status: "failed" }), [], { now: T0, catchUp: "none" }))
          .code,
      ).toBe("illegal_transition");
    });

    it("round-trips pause and resume", () => {
      const paused = pauseTask(buildTask(), [], { now: T0, cancelRunning: false }).task;
      expect(paused.status).toBe("paused");
      expect(resumeTask(paused, [], { now: T0, catchUp: "none" }).task.status).toBe("enabled");
    });

    it("does not mutate the original task", () => {
      const task = deepFreeze(buildTask());
      const paused = pauseTask(task, [], { now: plus(T0, MINUTE), cancelRunning: false }).task;
      expect(task.status).toBe("enabled");
      expect(paused).not.toBe(task);
    });

    it("stamps updated_at from the command's now (the repository does not)", () => {
      const now = plus(T0, 7 * SECOND);
      expect(pauseTask(buildTask(), [], { now, cancelRunning: false }).task.updatedAt).toBe(now);
    });
  });

  describe("rescheduling (TestWithSchedule)", () => {
    const now = plus(T0, HOUR);
    const future = schedule({ type: "cron", cron: "0 12 * * *" }, now);

    it.each(["completed", "failed", "cancelled"] as const)(
      "re-arms a %s task by a future schedule",
      (status) => {
        const task = buildTask({ status, nextRunAt: null });
        expect(editTask(task, { schedule: future }, { now, policy: policy() }).status).toBe(
          "enabled",
        );
      },
    );

    it.each(["enabled", "paused"] as const)("preserves a %s task's status", (status) => {
      expect(
        editTask(buildTask({ status }), { schedule: future }, { now, policy: policy() }).status,
      ).toBe(status);
    });

    it("propagates an invalid once schedule as a validation error", () => {
      const past = schedule({ type: "once", run_at: "2026-03-02T09:30:00Z" }, T0);
      expect(
        refused(() => editTask(buildTask(), { schedule: past }, { now, policy: policy() })).code,
      ).toBe("validation_failed");
    });
  });

  describe("context (TestWithContext)", () => {
    const ctx = { now: T0, policy: policy() };
    const bound = buildTask({ context: { mode: "reuse_thread", threadId: "t-1" as ThreadId } });

    it("switches to fresh threads, dropping the bound thread", () => {
      expect(editTask(bound, { context: { mode: "fresh_thread_per_run" } }, ctx).context).toEqual({
        mode: "fresh_thread_per_run",
      });
    });

    it("rejects reuse_thread without a thread", () => {
      const edit = () =>
        editTask(buildTask(), { context: { mode: "reuse_thread", threadId: "" as ThreadId } }, ctx);
      expect(refused(edit).code).toBe("validation_failed");
    });

    it("keeps the bound thread when staying on reuse_thread", () => {
      expect(editTask(bound, { title: "x" }, ctx).context).toEqual(bound.context);
    });
  });

  describe("execution thread (TestResolveExecutionThread)", () => {
    it("leaves a fresh thread to the writer for every run (a new id per run)", () => {
      const task = buildTask({ options: options({ overlap: "allow_all", lateAfterMs: HOUR }) });
      const decisions = admit({ task, now: plus(T0, 10 * MINUTE), activeRuns: [] }).decisions;
      const rows = decisions.map((d, i) =>
        inserted(
          newRunFromDecision({ id: TASK_ID, owner: OWNER, threadScope: "handler" }, d, T0),
          `r${i}`,
        ),
      );
      expect(rows.map((r) => r.threadId)).toEqual(["r0", "r1"]);
    });

    it("returns the bound thread for reuse_thread", () => {
      const task = buildTask({ context: { mode: "reuse_thread", threadId: "t-1" as ThreadId } });
      const [decision] = admit({ task, now: plus(T0, 5 * MINUTE), activeRuns: [] }).decisions;
      expect(decision).toMatchObject({ threadId: "t-1" });
    });
  });

  describe("the scheduled run (TestScheduledRun)", () => {
    it("occupies the task's slot once launched, and counts as active while queued", () => {
      expect(isActiveRunStatus("queued")).toBe(true);
      expect(holdsSlot("queued")).toBe(false);
      expect(holdsSlot("launching")).toBe(true);
      expect(holdsSlot("running")).toBe(true);
    });

    it("writes a skipped tombstone as terminal, never queued", () => {
      const row = newRunFromDecision(
        { id: TASK_ID, owner: OWNER, threadScope: "handler" },
        { kind: "skip", scheduledFor: T0, fireAt: T0, reason: "overlap" },
        T0,
      );
      expect(isTerminalRunStatus(row.status)).toBe(true);
    });

    it.each(RUN_STATUSES)("treats only queued, launching and running as active (%s)", (status) => {
      expect(isActiveRunStatus(status)).toBe(["queued", "launching", "running"].includes(status));
    });
  });
});

describe("reference 6.2: the service's decisions", () => {
  describe("the full lifecycle (TestFullLifecycle)", () => {
    it("creates, admits, claims, launches, skips for overlap, completes, pauses, resumes and keeps the history", () => {
      const history: Run[] = [];
      let task = createTask(userFields({ schedule: hourlyCron }), CREATE);
      const ctx = () => taskContext(task);
      const write = (admission: ReturnType<typeof admit>, now: Instant) => {
        task = { ...task, ...admission.task };
        const rows = admission.decisions.map((d, i) =>
          inserted(
            newRunFromDecision({ id: task.id, owner: task.owner, threadScope: "handler" }, d, now),
            `run-${history.length + i}`,
          ),
        );
        history.push(...rows);
        return rows;
      };
      const active = () => history.filter((r) => isActiveRunStatus(r.status));
      const replace = (run: Run) =>
        history.splice(
          history.findIndex((r) => r.id === run.id),
          1,
          run,
        );

      // 10:00 comes due: one run is queued and claimed within the budget.
      const ten = plus(T0, HOUR);
      const [first] = write(admit({ task, now: ten, activeRuns: [] }), ten);
      const candidates: ClaimCandidate[] = active().map((r) => ({ ...r, handlerName: "log" }));
      expect(
        selectClaimable({
          candidates,
          busyThreads: new Set(),
          busyTasks: new Set(),
          budget: 1,
          now: ten,
          handlerNames: new Set(["log"]),
        }).map((c) => c.id),
      ).toEqual([first!.id]);
      const launch = applyLaunchOutcome(
        claimed(first, ten),
        { kind: "launched", targetRunId: "t" },
        {
          now: ten,
          task: ctx(),
          policy: policy(),
        },
      );
      task = withChange(task, launch);
      replace(launch.run);

      // 11:00 comes due while 10:00 still runs: skipped for overlap; the launch bookkeeping stays.
      const eleven = plus(T0, 2 * HOUR);
      const [skipped] = write(
        admit({ task, now: eleven, activeRuns: active().map(activeView) }),
        eleven,
      );
      expect(skipped).toMatchObject({ status: "skipped", reason: "overlap" });
      expect(task).toMatchObject({ runCount: 1, lastError: null, lastRunId: first!.id });

      // The run completes: its slot is free again.
      const done = completeRun(
        launch.run,
        { status: "succeeded" },
        { now: plus(eleven, MINUTE), task: ctx() },
      );
      task = withChange(task, done);
      replace(done.run);
      expect(active().some((r) => holdsSlot(r.status))).toBe(false);

      // Paused: 12:00 is not admitted. Resumed at 12:30 with catch_up none: missed (paused).
      task = pauseTask(task, active(), {
        now: plus(eleven, 2 * MINUTE),
        cancelRunning: false,
      }).task;
      const resumed = resumeTask(task, active(), { now: plus(T0, 3.5 * HOUR), catchUp: "none" });
      task = resumed.task;
      history.push(...resumed.newRuns.map((r, i) => inserted(r, `resume-${i}`)));

      expect(history.map((r) => [r.status, r.reason])).toEqual([
        ["succeeded", null],
        ["skipped", "overlap"],
        ["missed", "paused"],
      ]);
      expect(task).toMatchObject({ status: "enabled", runCount: 1, nextRunAt: plus(T0, 4 * HOUR) });

      // Delete: nothing is launching or running, so no force is needed.
      expect(
        deleteTask(task, active(), { now: plus(T0, 4 * HOUR), force: false }).task.deletedAt,
      ).not.toBeNull();
    });
  });

  describe("launch outcomes (TestDispatchOutcomes)", () => {
    const ctx = { now: T0, task: taskContext(buildTask()), policy: policy() };

    it("records the launch on the run and the bookkeeping on the task", () => {
      const change = applyLaunchOutcome(claimed(), { kind: "launched", targetRunId: "t" }, ctx);
      expect(change.run).toMatchObject({ status: "running", targetRunId: "t", launchedAt: T0 });
      expect(withChange(buildTask(), change)).toMatchObject({
        runCount: 1,
        lastRunAt: T0,
        lastRunId: "run-1",
      });
    });

    it("refuses a manual trigger against an active run (conflict, no record)", () => {
      expect(() => triggerTask(buildTask(), [running()], { now: T0, clientKey: "k" })).toThrow(
        ActiveRunError,
      );
    });

    it("records a scheduled occurrence that overlaps as a terminal tombstone", () => {
      const admission = admit({
        task: buildTask(),
        now: plus(T0, 5 * MINUTE),
        activeRuns: [activeView(running())],
      });
      const row = newRunFromDecision(
        { id: TASK_ID, owner: OWNER, threadScope: "handler" },
        admission.decisions[0]!,
        T0,
      );
      expect(row).toMatchObject({ status: "skipped", reason: "overlap" });
    });

    it("records a launch failure as failed", () => {
      const change = applyLaunchOutcome(claimed(), { kind: "failed", message: "400" }, ctx);
      expect(change.run).toMatchObject({ status: "failed", reason: "launch_failed" });
    });

    it("does not let a failed launch overwrite the previous launch bookkeeping", () => {
      const launched = withChange(
        buildTask(),
        applyLaunchOutcome(claimed(), { kind: "launched", targetRunId: "t" }, ctx),
      );
      const failed = applyLaunchOutcome(
        claimed(buildRun({ id: "run-2" as RunId })),
        { kind: "failed", message: "400" },
        { ...ctx, now: plus(T0, HOUR) },
      );
      expect(withChange(launched, failed)).toMatchObject({
        lastRunId: "run-1",
        lastRunAt: T0,
        runCount: 1,
        lastError: "400",
      });
    });

    it("sends a run that meets a busy thread back to the queue (not a skip, not a failure)", () => {
      const change = applyLaunchOutcome(claimed(), { kind: "busy", message: "409" }, ctx);
      expect(change.run).toMatchObject({ status: "queued", failures: 0, reason: null });
    });
  });

  describe("slot retention after launch (TestPostLaunchRetention)", () => {
    const ctx = { now: T0, task: taskContext(buildTask()), policy: policy() };

    it("retains the slot after an indeterminate launch", () => {
      const change = applyLaunchOutcome(
        claimed(),
        { kind: "indeterminate", message: "timeout" },
        ctx,
      );
      expect(holdsSlot(change.run.status)).toBe(true);
    });

    it("releases the slot after a failure before launch", () => {
      const change = applyLaunchOutcome(claimed(), { kind: "failed", message: "400" }, ctx);
      expect(holdsSlot(change.run.status)).toBe(false);
    });

    it("keeps the slot while the launch outcome is unrecorded (the claim stays launching)", () => {
      expect(holdsSlot(claimed().status)).toBe(true);
    });
  });

  describe("thread echo (TestLauncherThreadEcho)", () => {
    it("flags a launcher that answers for another thread without diverging the bookkeeping", () => {
      const run = claimed(buildRun({ threadId: "requested" as ThreadId }));
      const change = applyLaunchOutcome(
        run,
        { kind: "launched", targetRunId: "t", threadMismatch: "answered for thread other" },
        { now: T0, task: taskContext(buildTask()), policy: policy() },
      );
      expect(change.run.threadId).toBe("requested");
      expect(change.run.error).toMatch(/other/);
    });
  });

  describe("once tasks (TestOnceTaskDispatch)", () => {
    const task = buildTask({
      schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
    });

    it("waits for completion with the run running and the task still enabled", () => {
      const admission = admit({ task, now: at("2026-03-02T10:00:00Z"), activeRuns: [] });
      expect(admission.task).toMatchObject({ status: "enabled", nextRunAt: null });
      const change = applyLaunchOutcome(
        claimed(),
        { kind: "launched", targetRunId: "t" },
        {
          now: T0,
          task: taskContext(task),
          policy: policy(),
        },
      );
      expect(withChange(task, change).status).toBe("enabled");
    });

    it("fails a once task whose occurrence was skipped", () => {
      const admission = admit({
        task,
        now: at("2026-03-02T10:00:00Z"),
        activeRuns: [activeView(running())],
      });
      expect(admission.task.status).toBe("failed");
    });
  });

  describe("the global budget (TestRunOnceBudget)", () => {
    const candidates = ["a", "b", "c"].map((id, i): ClaimCandidate => ({
      id: id as RunId,
      taskId: `task-${id}` as Task["id"],
      owner: "alice" as OwnerId,
      threadScope: "handler",
      threadId: id as ThreadId,
      exclusive: true,
      notBefore: T0,
      queuedAt: plus(T0, i),
      handlerName: "log",
    }));
    const claim = (budget: number) =>
      selectClaimable({
        candidates,
        busyThreads: new Set(),
        busyTasks: new Set(),
        budget,
        now: T0,
        handlerNames: new Set(["log"]),
      }).map((c) => c.id);

    it("claims nothing when the global budget is exhausted", () => {
      expect(claim(0)).toEqual([]);
    });

    it("claims only into the remaining budget", () => {
      expect(claim(2)).toEqual(["a", "b"]);
    });
  });

  describe("run completion (TestRunCompletion)", () => {
    it("maps a once task's verdicts to its terminal statuses", () => {
      const once = buildTask({
        schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
      });
      const end = (status: "succeeded" | "failed" | "cancelled") =>
        withChange(once, completeRun(running(), { status }, { now: T0, task: taskContext(once) }))
          .status;
      expect([end("succeeded"), end("failed"), end("cancelled")]).toEqual([
        "completed",
        "failed",
        "cancelled",
      ]);
    });

    it("keeps a cron task's status but records the error", () => {
      const cron = buildTask({ schedule: hourlyCron });
      const after = withChange(
        cron,
        completeRun(
          running(),
          { status: "failed", error: "boom" },
          { now: T0, task: taskContext(cron) },
        ),
      );
      expect(after).toMatchObject({ status: "enabled", lastError: "boom" });
    });

    it("lets a cron task survive a launch write landing mid-completion (disjoint fields)", () => {
      const cron = buildTask({ schedule: hourlyCron, nextRunAt: plus(T0, HOUR) });
      const ctx = taskContext(cron);
      const verdict: RunChange = completeRun(
        running(),
        { status: "failed", error: "boom" },
        { now: plus(T0, MINUTE), task: ctx },
      );
      const launch: RunChange = applyLaunchOutcome(
        claimed(buildRun({ id: "run-2" as RunId })),
        { kind: "launched", targetRunId: "t" },
        { now: plus(T0, MINUTE), task: ctx, policy: policy() },
      );
      const oneOrder = withChange(withChange(cron, verdict), launch);
      const otherOrder = withChange(withChange(cron, launch), verdict);
      expect(oneOrder).toEqual(otherOrder);
      expect(oneOrder).toMatchObject({
        status: "enabled",
        nextRunAt: plus(T0, HOUR),
        lastError: "boom",
        lastRunId: "run-2",
      });
    });

    it("times out and loses runs with the same once-task mapping", () => {
      const once = buildTask({
        schedule: schedule({ type: "once", run_at: "2026-03-02T10:00:00Z" }),
      });
      expect(
        withChange(once, timeOutRun(running(), plus(T0, 2 * HOUR), taskContext(once))).status,
      ).toBe("failed");
      expect(withChange(once, loseRunWithReplica(running(), T0, taskContext(once))).status).toBe(
        "failed",
      );
    });
  });

  describe("task management (TestTaskManagement)", () => {
    const ctx = { now: T0, policy: policy() };

    it("leaves omitted fields when updating", () => {
      const task = buildTask({ description: "keep me" });
      expect(editTask(task, { title: "new" }, ctx)).toMatchObject({
        description: "keep me",
        schedule: task.schedule,
      });
    });

    it("changes no user field with an all-omitted update", () => {
      const task = buildTask();
      const later = { now: plus(T0, MINUTE), policy: policy() };
      // Only the stamps move (an empty PATCH still counts as an edit of version).
      expect(editTask(task, {}, later)).toEqual({ ...task, version: 2, updatedAt: later.now });
    });

    it("can change the target's input (the reference's prompt)", () => {
      const target = { kind: "handler", name: "log", input: { prompt: "new" } } as const;
      expect(editTask(buildTask(), { target }, ctx).target).toEqual(target);
    });

    it("re-arms a terminal task when rescheduled", () => {
      const task = buildTask({ status: "failed", nextRunAt: null });
      expect(editTask(task, { schedule: hourlyCron }, ctx).status).toBe("enabled");
    });

    it("can still delete a task whose run is running (with force)", () => {
      const outcome = deleteTask(buildTask(), [running()], { now: T0, force: true });
      expect(outcome.task.deletedAt).toBe(T0);
      expect(outcome.cancelTargets).toHaveLength(1);
    });
  });

  describe("optimistic locking (TestOptimisticLocking)", () => {
    it("bumps version on a clean edit", () => {
      expect(
        editTask(buildTask({ version: 7 }), { title: "x" }, { now: T0, policy: policy() }).version,
      ).toBe(8);
    });

    it("never bumps version from launch bookkeeping or completion", () => {
      const task = buildTask({ version: 7 });
      const ctx = taskContext(task);
      const launched = applyLaunchOutcome(
        claimed(),
        { kind: "launched", targetRunId: "t" },
        { now: T0, task: ctx, policy: policy() },
      );
      const done = completeRun(launched.run, { status: "succeeded" }, { now: T0, task: ctx });
      expect(withChange(withChange(task, launched), done).version).toBe(7);
      expect(Object.keys({ ...launched.taskLaunch, ...done.taskVerdict })).not.toContain("version");
    });
  });
});
