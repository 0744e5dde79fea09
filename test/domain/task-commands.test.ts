/**
 * Owner commands on a task (docs/semantics.md#task-operations): create, edit, pause, resume, cancel, trigger, backfill, delete,
 * and how an admission's rows and cancellations are written (applyAdmission).
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import { PunctualError } from "../../src/domain/errors.js";
import type { ErrorCode } from "../../src/domain/errors.js";
import type { RunId, ThreadId } from "../../src/domain/ids.js";
import { newRunFromDecision } from "../../src/domain/new-run.js";
import type { Run } from "../../src/domain/run.js";
import { activeView } from "../../src/domain/admit-task.js";
import {
  applyAdmission,
  backfillTask,
  cancelTask,
  deleteTask,
  pauseTask,
  resumeTask,
  triggerTask,
} from "../../src/domain/task-commands.js";
import { createTask, editTask } from "../../src/domain/task-fields.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import {
  at,
  buildRun,
  buildTask,
  claimed,
  DAY,
  deepFreeze,
  HOUR,
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
  userFields,
} from "./builders.js";

/** The error `action` throws (it must throw one of punctual's errors). */
function refusal(action: () => unknown): PunctualError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(PunctualError);
    return error as PunctualError;
  }
  throw new Error("expected the command to be refused");
}

function expectRefused(action: () => unknown, code: ErrorCode, fields?: string[]): void {
  const error = refusal(action);
  expect(error.code).toBe(code);
  if (fields !== undefined) {
    expect(
      (error as unknown as { errors: { field: string }[] }).errors.map((e) => e.field),
    ).toEqual(fields);
  }
}

const CREATE = { id: TASK_ID, owner: OWNER, now: T0, policy: policy(), webhookSecret: "s3cret" };
const run = (id: string, overrides: Partial<Run> = {}): Run =>
  buildRun({ id: id as RunId, ...overrides });

describe("createTask", () => {
  it("creates an enabled task deciding from now, with its next run and server-owned defaults", () => {
    const task = createTask(userFields({ title: "  Report  " }), CREATE);
    expect(task).toEqual({
      ...userFields(),
      title: "Report",
      id: TASK_ID,
      owner: OWNER,
      status: "enabled",
      nextRunAt: plus(T0, 5 * MINUTE),
      decidedThrough: T0,
      admittedCount: 0,
      lastRunAt: null,
      lastRunId: null,
      runCount: 0,
      lastError: null,
      version: 1,
      webhookSecret: "s3cret",
      key: null,
      group: null,
      createdAt: T0,
      updatedAt: T0,
      deletedAt: null,
      defect: null,
    });
  });

  it.each([
    ["an empty title", { title: "   " }, ["title"]],
    ["a title over 200 characters", { title: "x".repeat(201) }, ["title"]],
    ["a description over 10,000 characters", { description: "x".repeat(10_001) }, ["description"]],
    [
      "more than 32 metadata keys",
      { metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])) },
      ["metadata"],
    ],
    [
      "reuse_thread without a valid thread id",
      { context: { mode: "reuse_thread", threadId: "" as ThreadId } },
      ["context.thread_id"],
    ],
    [
      "reuse_thread with the thread id '..'",
      { context: { mode: "reuse_thread", threadId: ".." as ThreadId } },
      ["context.thread_id"],
    ],
    [
      "several faults at once",
      { title: "", context: { mode: "reuse_thread", threadId: "a b" as ThreadId } },
      ["title", "context.thread_id"],
    ],
  ] as const)("refuses %s, naming the fields", (_name, patch, fields) => {
    expectRefused(() => createTask(userFields(patch), CREATE), "validation_failed", [...fields]);
  });

  it("accepts exactly 200 title characters, 10,000 description characters and 32 metadata keys", () => {
    const fields = userFields({
      title: "x".repeat(200),
      description: "d".repeat(10_000),
      metadata: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, "v"])),
    });
    expect(createTask(fields, CREATE).title).toHaveLength(200);
  });

  it("counts characters, not UTF-16 code units: 200 emoji make a valid title, 201 do not", () => {
    const title = "\u{1F600}".repeat(200);
    const description = "\u{1F4C5}".repeat(10_000);
    expect(createTask(userFields({ title, description }), CREATE).title).toBe(title);
    expectRefused(
      () => createTask(userFields({ title: `${title}\u{1F600}` }), CREATE),
      "validation_failed",
      ["title"],
    );
    expectRefused(
      () => createTask(userFields({ description: `${description}x` }), CREATE),
      "validation_failed",
      ["description"],
    );
  });

  it("binds a reuse_thread task to its thread", () => {
    const context = { mode: "reuse_thread", threadId: "thread-1" as ThreadId } as const;
    expect(createTask(userFields({ context }), CREATE).context).toEqual(context);
  });

  describe("once schedules (docs/schedules.md#once)", () => {
    const onceAt = (runAt: Instant) =>
      userFields({ schedule: schedule({ type: "once", run_at: new Date(runAt).toISOString() }) });

    it("refuses a run_at in the past", () => {
      expectRefused(() => createTask(onceAt(plus(T0, -SECOND)), CREATE), "validation_failed", [
        "schedule.run_at",
      ]);
    });

    it("refuses a run_at closer than min_once_delay, and accepts exactly the minimum", () => {
      const ctx = { ...CREATE, policy: policy({ minOnceDelayMs: 5 * SECOND }) };
      expectRefused(() => createTask(onceAt(plus(T0, 4 * SECOND)), ctx), "validation_failed", [
        "schedule.run_at",
      ]);
      expect(createTask(onceAt(plus(T0, 5 * SECOND)), ctx).nextRunAt).toBe(plus(T0, 5 * SECOND));
    });

    it("accepts an imminent run_at under the domain's default minimum (0)", () => {
      expect(policy().minOnceDelayMs).toBe(0);
      expect(createTask(onceAt(plus(T0, SECOND)), CREATE).nextRunAt).toBe(plus(T0, SECOND));
    });

    it("refuses a run_at equal to now (it would never be decided: nothing lies after now)", () => {
      expectRefused(() => createTask(onceAt(T0), CREATE), "validation_failed");
    });

    it("never applies the floor to cron or interval schedules", () => {
      const ctx = { ...CREATE, policy: policy({ minOnceDelayMs: HOUR }) };
      const cron = schedule({ type: "cron", cron: "* * * * *" });
      expect(createTask(userFields({ schedule: cron }), ctx).nextRunAt).toBe(plus(T0, MINUTE));
    });
  });
});

describe("editTask", () => {
  const ctx = { now: plus(T0, HOUR), policy: policy() };

  it("bumps version, stamps updated_at and keeps every omitted field (PATCH)", () => {
    const task = buildTask({ description: "kept", metadata: { a: "1" } });
    const edited = editTask(task, { title: " New title " }, ctx);
    expect(edited).toEqual({ ...task, title: "New title", version: 2, updatedAt: ctx.now });
  });

  it("clears the description when it is given as null", () => {
    const task = buildTask({ description: "old" });
    expect(editTask(task, { description: null }, ctx).description).toBeNull();
  });

  it("leaves the schedule, launch and verdict fields alone when the schedule is not edited", () => {
    const task = buildTask({
      decidedThrough: plus(T0, 30 * MINUTE),
      admittedCount: 4,
      lastRunAt: T0,
      lastRunId: "run-9" as RunId,
      runCount: 4,
      lastError: "x",
      status: "paused",
    });
    const allowAll = options({ overlap: "allow_all" });
    const edited = editTask(task, { options: allowAll }, ctx);
    expect(edited).toEqual({ ...task, options: allowAll, version: 2, updatedAt: ctx.now });
  });

  it("refuses invalid fields and leaves the task as it was", () => {
    const task = deepFreeze(buildTask());
    expectRefused(() => editTask(task, { title: "" }, ctx), "validation_failed", ["title"]);
  });

  it("refuses a once schedule edited into the past", () => {
    const task = buildTask({
      schedule: schedule({ type: "once", run_at: "2026-03-03T09:00:00Z" }),
    });
    const past = schedule({ type: "once", run_at: "2026-03-02T09:30:00Z" });
    expectRefused(() => editTask(task, { schedule: past }, ctx), "validation_failed", [
      "schedule.run_at",
    ]);
  });

  it("does not re-check a once task's run_at when the schedule is not edited", () => {
    const task = buildTask({
      schedule: schedule({ type: "once", run_at: "2026-03-02T09:30:00Z" }),
      decidedThrough: at("2026-03-02T09:30:00Z"),
    });
    expect(editTask(task, { title: "renamed" }, ctx).title).toBe("renamed");
  });

  describe("a schedule edit", () => {
    it("keeps decided_through, so no decided occurrence is re-decided or lost", () => {
      const task = buildTask({ decidedThrough: plus(T0, 55 * MINUTE), admittedCount: 11 });
      const every10 = schedule({ type: "interval", every: "PT10M" }, ctx.now);
      const edited = editTask(task, { schedule: every10 }, ctx);
      expect(edited).toMatchObject({
        decidedThrough: plus(T0, 55 * MINUTE),
        admittedCount: 11,
        nextRunAt: plus(ctx.now, 10 * MINUTE),
        version: 2,
      });
    });

    // Was a domain bug, fixed: docs/semantics.md#task-operations says "a schedule edit recomputes next_run_at from now and keeps
    // decided_through". editTask computes next_run_at from decided_through instead (docs/decisions.md
    // records that choice), so a cron edit at 09:32 of a task decided through 09:00 answers with a
    // next_run_at of 09:05, in the past, and the next admission decides 09:05..09:30 of the new
    // expression (times before the edit) as missed "down" or queues 09:30.
    // Expected: next_run_at 09:35 (the first new-schedule time after now); actual: 09:05.
    it("recomputes next_run_at from now for a cron expression (docs/semantics.md#task-operations)", () => {
      const task = buildTask({
        schedule: schedule({ type: "cron", cron: "0 * * * *" }),
        decidedThrough: T0,
      });
      const now = at("2026-03-02T09:32:00Z");
      const every5 = schedule({ type: "cron", cron: "*/5 * * * *" }, now);
      const edited = editTask(task, { schedule: every5 }, { now, policy: policy() });
      expect(edited.decidedThrough).toBe(T0);
      expect(edited.nextRunAt).toBe(at("2026-03-02T09:35:00Z"));
    });

    it("keeps a non-terminal task's status (enabled or paused)", () => {
      for (const status of ["enabled", "paused"] as const) {
        const task = buildTask({ status });
        const cron = schedule({ type: "cron", cron: "0 * * * *" }, ctx.now);
        expect(editTask(task, { schedule: cron }, ctx).status).toBe(status);
      }
    });

    it.each(["completed", "failed", "cancelled"] as const)(
      "re-arms a %s task from now when the new schedule has a future occurrence",
      (status) => {
        const task = buildTask({ status, nextRunAt: null, lastError: "was failing" });
        const cron = schedule({ type: "cron", cron: "0 * * * *" }, ctx.now);
        expect(editTask(task, { schedule: cron }, ctx)).toMatchObject({
          status: "enabled",
          decidedThrough: ctx.now,
          nextRunAt: plus(ctx.now, HOUR),
          lastError: null,
        });
      },
    );

    it("leaves a completed task terminal when max_runs is already reached", () => {
      const task = buildTask({ status: "completed", nextRunAt: null, admittedCount: 3 });
      const capped = schedule({ type: "interval", every: "PT5M", max_runs: 3 }, ctx.now);
      expect(editTask(task, { schedule: capped }, ctx)).toMatchObject({
        status: "completed",
        nextRunAt: null,
      });
    });

    it("gives next_run_at null to an enabled task whose new max_runs is already reached", () => {
      const task = buildTask({ admittedCount: 3 });
      const capped = schedule({ type: "interval", every: "PT5M", max_runs: 2 }, ctx.now);
      expect(editTask(task, { schedule: capped }, ctx).nextRunAt).toBeNull();
    });
  });

  describe("an interval's anchor (docs/schedules.md#interval)", () => {
    const original = buildTask({ schedule: schedule({ type: "interval", every: "PT7M" }) });
    const editedAt = plus(T0, 10 * MINUTE);
    const edit = (input: Record<string, unknown>) =>
      editTask(
        original,
        { schedule: schedule({ type: "interval", ...input }, editedAt) },
        {
          now: editedAt,
          policy: policy(),
        },
      );

    it("is kept when neither every nor start_at changes (only jitter or bounds do)", () => {
      const edited = edit({ every: "PT7M", jitter: "PT10S", max_runs: 50 });
      expect(edited.schedule).toMatchObject({ anchorAt: T0, jitterMs: 10 * SECOND, maxRuns: 50 });
      // Anchored at T0 still; next_run_at is recomputed from the edit instant (docs/semantics.md#task-operations): T0 + 2 x 7 min.
      expect(edited.nextRunAt).toBe(plus(T0, 14 * MINUTE));
    });

    it("moves to the edit instant when every changes", () => {
      const edited = edit({ every: "PT3M" });
      expect(edited.schedule).toMatchObject({ anchorAt: editedAt });
      expect(edited.nextRunAt).toBe(plus(editedAt, 3 * MINUTE));
    });

    it("moves to start_at when start_at changes", () => {
      const edited = edit({ every: "PT7M", start_at: "2026-03-02T12:00:00Z" });
      expect(edited.schedule).toMatchObject({ anchorAt: at("2026-03-02T12:00:00Z") });
      expect(edited.nextRunAt).toBe(at("2026-03-02T12:00:00Z"));
    });
  });
});

describe("pauseTask", () => {
  const now = plus(T0, 7 * MINUTE);
  const queuedScheduled = run("q-s");
  const queuedManual = run("q-m", { trigger: "manual" });
  const queuedBackfill = run("q-b", { trigger: "backfill" });
  const launching = claimed(run("l"));
  const active = running(run("r"));
  const all = [queuedScheduled, queuedManual, queuedBackfill, launching, active];

  it("pauses the task and cancels only its queued scheduled runs (task_paused)", () => {
    const outcome = pauseTask(buildTask(), all, { now, cancelRunning: false });
    expect(outcome.task).toMatchObject({ status: "paused", updatedAt: now, version: 1 });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["q-s", "cancelled", "task_paused"],
    ]);
    expect(outcome.newRuns).toEqual([]);
    expect(outcome.cancelTargets).toEqual([]);
  });

  it("asks launching and running runs to stop too when cancel_running is set", () => {
    const outcome = pauseTask(buildTask(), all, { now, cancelRunning: true });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason, r.cancelRequestedAt])).toEqual([
      ["q-s", "cancelled", "task_paused", null],
      ["l", "launching", "cancel_requested", now],
      ["r", "running", "cancel_requested", now],
    ]);
    expect(outcome.cancelTargets.map((r) => r.id)).toEqual(["r"]);
  });

  it("cancels a once task whose only (queued) occurrence the pause cancelled", () => {
    const task = buildTask({
      schedule: schedule({ type: "once", run_at: "2026-03-02T09:05:00Z" }),
    });
    const outcome = pauseTask(task, [queuedScheduled], { now, cancelRunning: false });
    expect(outcome.task).toMatchObject({ status: "cancelled", nextRunAt: null });
  });

  it("pauses a paused task again without harm", () => {
    expect(
      pauseTask(buildTask({ status: "paused" }), [], { now, cancelRunning: false }).task.status,
    ).toBe("paused");
  });

  it.each(["completed", "failed", "cancelled"] as const)("refuses to pause a %s task", (status) => {
    expectRefused(
      () => pauseTask(buildTask({ status }), [], { now, cancelRunning: false }),
      "illegal_transition",
    );
  });
});

describe("resumeTask", () => {
  // Every 5 minutes from T0, paused through 09:00; resumed at 09:32 (09:05..09:30 fell in the pause).
  const paused = buildTask({ status: "paused" });
  const now = at("2026-03-02T09:32:00Z");
  const summary = (outcome: ReturnType<typeof resumeTask>) =>
    outcome.newRuns.map((r) =>
      r.status === "missed"
        ? `missed ${r.reason} x${r.missedCount} ${new Date(r.scheduledFor).toISOString().slice(11, 16)}..${new Date(r.missedUntil!).toISOString().slice(11, 16)}`
        : `${r.status} ${new Date(r.scheduledFor).toISOString().slice(11, 16)}`,
    );

  it("records everything inside the pause as one missed range (catch_up none)", () => {
    const outcome = resumeTask(paused, [], { now, catchUp: "none" });
    expect(summary(outcome)).toEqual(["missed paused x6 09:05..09:30"]);
    expect(outcome.task).toMatchObject({
      status: "enabled",
      decidedThrough: at("2026-03-02T09:30:00Z"),
      nextRunAt: at("2026-03-02T09:35:00Z"),
      version: 1,
    });
  });

  it("queues the most recent and misses the rest (catch_up latest)", () => {
    const outcome = resumeTask(paused, [], { now, catchUp: "latest" });
    expect(summary(outcome)).toEqual(["missed paused x5 09:05..09:25", "queued 09:30"]);
  });

  it("queues every one oldest first (catch_up all)", () => {
    const outcome = resumeTask(paused, [], { now, catchUp: "all" });
    expect(summary(outcome)).toEqual([
      "queued 09:05",
      "queued 09:10",
      "queued 09:15",
      "queued 09:20",
      "queued 09:25",
      "queued 09:30",
    ]);
    expect(outcome.task.admittedCount).toBe(6);
  });

  it("queues at most 100 (catch_up all) and misses the rest", () => {
    const later = plus(T0, 150 * 5 * MINUTE);
    const outcome = resumeTask(paused, [], { now: later, catchUp: "all" });
    expect(outcome.newRuns.filter((r) => r.status === "queued")).toHaveLength(100);
    const missed = outcome.newRuns.filter((r) => r.status === "missed");
    expect(missed.map((r) => [r.reason, r.missedCount])).toEqual([["paused", 50]]);
  });

  it("ignores the catch-up window: a two-day pause is missed as paused, not window", () => {
    const outcome = resumeTask(paused, [], { now: plus(T0, 2 * DAY), catchUp: "latest" });
    expect(outcome.newRuns.map((r) => [r.status, r.reason])).toEqual([
      ["missed", "paused"],
      ["queued", null],
    ]);
  });

  it("never fires by accident: nothing is queued under catch_up none", () => {
    const outcome = resumeTask(paused, [], { now: plus(T0, 3 * HOUR), catchUp: "none" });
    expect(outcome.newRuns.some((r) => r.status === "queued")).toBe(false);
  });

  it("applies the overlap policy to the run catch_up latest would queue", () => {
    const outcome = resumeTask(paused, [running(run("r"))], { now, catchUp: "latest" });
    expect(summary(outcome)).toEqual(["missed paused x5 09:05..09:25", "skipped 09:30"]);
  });

  it("fails a paused once task whose occurrence fell inside the pause (catch_up none)", () => {
    const once = buildTask({
      status: "paused",
      schedule: schedule({ type: "once", run_at: "2026-03-02T09:10:00Z" }),
    });
    const outcome = resumeTask(once, [], { now, catchUp: "none" });
    expect(summary(outcome)).toEqual(["missed paused x1 09:10..09:10"]);
    expect(outcome.task).toMatchObject({ status: "failed", nextRunAt: null });
    expect(outcome.task.lastError).toMatch(/paused/);
  });

  it("queues a paused once task's occurrence on resume with catch_up latest", () => {
    const once = buildTask({
      status: "paused",
      schedule: schedule({ type: "once", run_at: "2026-03-02T09:10:00Z" }),
    });
    const outcome = resumeTask(once, [], { now, catchUp: "latest" });
    expect(summary(outcome)).toEqual(["queued 09:10"]);
    expect(outcome.task.status).toBe("enabled");
  });

  it("round-trips pause and resume without changing version", () => {
    const task = buildTask();
    const pausedTask = pauseTask(task, [], { now: T0, cancelRunning: false }).task;
    const resumed = resumeTask(pausedTask, [], { now: plus(T0, MINUTE), catchUp: "none" }).task;
    expect(resumed).toMatchObject({ status: "enabled", version: task.version });
  });

  it("admits an enabled task normally (scheduled mode, the window applies)", () => {
    const outcome = resumeTask(buildTask(), [], { now: plus(T0, 5 * MINUTE), catchUp: "none" });
    expect(outcome.newRuns.map((r) => r.status)).toEqual(["queued"]);
    expect(outcome.admission.decisions).toHaveLength(1);
  });

  it.each(["completed", "failed", "cancelled"] as const)(
    "refuses to resume a %s task",
    (status) => {
      expectRefused(
        () => resumeTask(buildTask({ status }), [], { now, catchUp: "none" }),
        "illegal_transition",
      );
    },
  );
});

describe("cancelTask", () => {
  it("cancels the task and every queued run, whatever its trigger; launched runs finish normally", () => {
    const runs = [run("q-s"), run("q-m", { trigger: "manual" }), running(run("r"))];
    const outcome = cancelTask(buildTask({ status: "paused" }), runs, T0);
    expect(outcome.task).toMatchObject({ status: "cancelled", nextRunAt: null, updatedAt: T0 });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["q-s", "cancelled", "task_cancelled"],
      ["q-m", "cancelled", "task_cancelled"],
    ]);
    expect(outcome.cancelTargets).toEqual([]);
  });

  it.each(["completed", "failed", "cancelled"] as const)(
    "refuses to cancel a %s task",
    (status) => {
      expectRefused(() => cancelTask(buildTask({ status }), [], T0), "illegal_transition");
    },
  );
});

describe("triggerTask", () => {
  const now = plus(T0, 2 * MINUTE);

  it("queues a manual run for now, keyed by the client's key", () => {
    const manual = triggerTask(buildTask(), [], { now, clientKey: "abc" });
    expect(manual).toMatchObject({
      taskId: TASK_ID,
      owner: OWNER,
      trigger: "manual",
      status: "queued",
      scheduledFor: now,
      fireAt: now,
      notBefore: now,
      queuedAt: now,
      attempt: 0,
      failures: 0,
      exclusive: true,
      threadScope: `handler:${OWNER}`,
      threadId: null,
      idempotencyKey: "punctual:task-1:manual:abc",
    });
  });

  it("gives the same key for the same client key and different keys otherwise", () => {
    const task = buildTask();
    const a = triggerTask(task, [], { now, clientKey: "k1" }).idempotencyKey;
    expect(triggerTask(task, [], { now: plus(now, HOUR), clientKey: "k1" }).idempotencyKey).toBe(a);
    expect(triggerTask(task, [], { now, clientKey: "k2" }).idempotencyKey).not.toBe(a);
  });

  it("runs on the task's bound thread under reuse_thread", () => {
    const task = buildTask({ context: { mode: "reuse_thread", threadId: "th-1" as ThreadId } });
    expect(triggerTask(task, [], { now, clientKey: "k" }).threadId).toBe("th-1");
  });

  it.each(["queued", "running"] as const)(
    "is refused under overlap skip while the task has a %s run (run_active)",
    (status) => {
      const activeRun = status === "queued" ? run("a") : running(run("a"));
      expectRefused(
        () => triggerTask(buildTask(), [activeRun], { now, clientKey: "k" }),
        "run_active",
      );
    },
  );

  it.each(["buffer_one", "buffer_all", "cancel_other", "allow_all"] as const)(
    "queues beside an active run under overlap %s",
    (overlap) => {
      const task = buildTask({ options: options({ overlap }) });
      const manual = triggerTask(task, [running(run("a"))], { now, clientKey: "k" });
      expect(manual.status).toBe("queued");
      expect(manual.exclusive).toBe(overlap !== "allow_all");
    },
  );

  it.each(["paused", "completed", "failed", "cancelled"] as const)(
    "is allowed on a %s task",
    (status) => {
      expect(triggerTask(buildTask({ status }), [], { now, clientKey: "k" }).trigger).toBe(
        "manual",
      );
    },
  );

  it("refuses an empty key or one longer than 200 characters, and accepts 200", () => {
    expectRefused(() => triggerTask(buildTask(), [], { now, clientKey: "" }), "validation_failed", [
      "idempotency_key",
    ]);
    expectRefused(
      () => triggerTask(buildTask(), [], { now, clientKey: "k".repeat(201) }),
      "validation_failed",
      ["idempotency_key"],
    );
    expect(triggerTask(buildTask(), [], { now, clientKey: "k".repeat(200) }).trigger).toBe(
      "manual",
    );
  });
});

describe("backfillTask", () => {
  const hourly = buildTask({
    schedule: schedule({ type: "cron", cron: "0 * * * *" }),
    options: options({ overlap: "skip" }),
  });
  const now = at("2026-03-02T12:00:00Z");

  it("queues the nominal times in [from, to) oldest first, each with its own key", () => {
    const runs = backfillTask(hourly, {
      now,
      from: at("2026-03-02T06:00:00Z"),
      to: at("2026-03-02T09:00:00Z"),
    });
    expect(runs.map((r) => new Date(r.scheduledFor).toISOString().slice(11, 16))).toEqual([
      "06:00",
      "07:00",
      "08:00",
    ]);
    for (const r of runs) {
      expect(r).toMatchObject({
        trigger: "backfill",
        status: "queued",
        fireAt: r.scheduledFor,
        notBefore: now,
        queuedAt: now,
        idempotencyKey: `punctual:task-1:backfill:${r.scheduledFor}`,
      });
    }
  });

  it("starts after from when from is not a nominal time", () => {
    const runs = backfillTask(hourly, {
      now,
      from: at("2026-03-02T06:00:01Z"),
      to: at("2026-03-02T08:00:00Z"),
    });
    expect(runs.map((r) => r.scheduledFor)).toEqual([at("2026-03-02T07:00:00Z")]);
  });

  it("gives the same rows for the same range twice (the store drops the duplicates)", () => {
    const range = { now, from: at("2026-03-01T00:00:00Z"), to: at("2026-03-02T00:00:00Z") };
    expect(backfillTask(hourly, range)).toEqual(backfillTask(hourly, range));
  });

  it("accepts exactly 1,000 nominal times and refuses 1,001 (limit_exceeded)", () => {
    const minutely = buildTask({ schedule: schedule({ type: "cron", cron: "* * * * *" }) });
    const from = at("2026-03-01T00:00:00Z");
    expect(backfillTask(minutely, { now, from, to: plus(from, 1000 * MINUTE) })).toHaveLength(1000);
    const error = refusal(() =>
      backfillTask(minutely, { now, from, to: plus(from, 1001 * MINUTE) }),
    );
    expect(error).toMatchObject({ code: "limit_exceeded", limit: "backfill", max: 1000 });
  });

  it("refuses a range that ends in the future, and accepts one that ends now", () => {
    expectRefused(
      () => backfillTask(hourly, { now, from: at("2026-03-02T10:00:00Z"), to: plus(now, SECOND) }),
      "validation_failed",
      ["to"],
    );
    expect(backfillTask(hourly, { now, from: at("2026-03-02T10:00:00Z"), to: now })).toHaveLength(
      2,
    );
  });

  it("refuses an empty or reversed range", () => {
    expectRefused(() => backfillTask(hourly, { now, from: now, to: now }), "validation_failed", [
      "from",
    ]);
  });

  it("queues whatever the overlap policy and leaves the task untouched", () => {
    const task = deepFreeze(buildTask({ ...hourly, admittedCount: 3 }));
    const runs = backfillTask(task, { now, from: at("2026-03-02T10:00:00Z"), to: now });
    expect(runs).toHaveLength(2);
    expect(task.admittedCount).toBe(3);
  });
});

describe("deleteTask", () => {
  const now = plus(T0, HOUR);

  it.each(["launching", "running"] as const)(
    "is refused while a run is %s, unless forced (task_not_mutable)",
    (status) => {
      const active = status === "launching" ? claimed(run("a")) : running(run("a"));
      expectRefused(
        () => deleteTask(buildTask(), [active], { now, force: false }),
        "task_not_mutable",
      );
    },
  );

  it("deletes a task with only queued runs, cancelling them (task_deleted)", () => {
    const outcome = deleteTask(buildTask(), [run("q")], { now, force: false });
    expect(outcome.task).toMatchObject({ deletedAt: now, nextRunAt: null });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["q", "cancelled", "task_deleted"],
    ]);
  });

  it("with force, asks launching and running runs to stop and cancels queued ones", () => {
    const runs = [run("q"), claimed(run("l")), running(run("r"))];
    const outcome = deleteTask(buildTask(), runs, { now, force: true });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["q", "cancelled", "task_deleted"],
      ["l", "launching", "task_deleted"],
      ["r", "running", "task_deleted"],
    ]);
    expect(outcome.cancelTargets.map((r) => r.id)).toEqual(["r"]);
  });

  it("after its run, deletes at once, cancels queued runs and leaves launching and running ones be", () => {
    const runs = [run("q"), claimed(run("l")), running(run("r"))];
    const outcome = deleteTask(buildTask(), runs, { now, force: false, afterRun: true });
    expect(outcome.task).toMatchObject({ deletedAt: now, nextRunAt: null });
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["q", "cancelled", "task_deleted"],
    ]);
    expect(outcome.cancelTargets).toEqual([]);
  });
});

describe("applyAdmission", () => {
  it("writes the decisions as rows and applies cancel_other's cancellations", () => {
    const task = buildTask({ options: options({ overlap: "cancel_other" }) });
    const now = plus(T0, 5 * MINUTE);
    const active = [running(run("r")), run("q", { trigger: "manual" })];
    const admission = admit({ task, now, activeRuns: active.map(activeView) });
    const outcome = applyAdmission(task, active, admission, now);
    expect(outcome.task).toEqual({ ...task, ...admission.task });
    expect(outcome.newRuns.map((r) => [r.status, r.scheduledFor])).toEqual([["queued", now]]);
    expect(outcome.runUpdates.map((r) => [r.id, r.status, r.reason])).toEqual([
      ["r", "running", "superseded"],
      ["q", "cancelled", "superseded"],
    ]);
    expect(outcome.cancelTargets.map((r) => r.id)).toEqual(["r"]);
  });

  it("refuses to build an admission view of a run that is not active", () => {
    expectRefused(() => activeView(buildRun({ status: "succeeded" })), "illegal_transition");
  });
});

describe("newRunFromDecision", () => {
  const scope = { id: TASK_ID, owner: OWNER, threadScope: "handler" };

  it("writes a missed range as one terminal row with its count and bounds", () => {
    const row = newRunFromDecision(
      scope,
      { kind: "miss", from: T0, until: plus(T0, HOUR), count: 13, reason: "down" },
      plus(T0, 2 * HOUR),
    );
    expect(row).toMatchObject({
      status: "missed",
      reason: "down",
      trigger: "scheduled",
      scheduledFor: T0,
      missedCount: 13,
      missedUntil: plus(T0, HOUR),
      finishedAt: plus(T0, 2 * HOUR),
      launchedAt: null,
      exclusive: false,
    });
  });

  it("writes a skip as a terminal tombstone that is never queued", () => {
    const row = newRunFromDecision(
      scope,
      { kind: "skip", scheduledFor: T0, fireAt: T0, reason: "overlap" },
      T0,
    );
    expect(row).toMatchObject({
      status: "skipped",
      reason: "overlap",
      missedCount: null,
      finishedAt: T0,
    });
  });
});

describe("commands never mutate their inputs", () => {
  it("leave a frozen task and frozen runs untouched", () => {
    const task: Task = deepFreeze(buildTask());
    const runs = deepFreeze([run("q"), running(run("r"))]);
    const now = plus(T0, HOUR);
    expect(() => {
      editTask(
        task,
        { title: "x", schedule: schedule({ type: "interval", every: "PT1M" }, now) },
        {
          now,
          policy: policy(),
        },
      );
      pauseTask(task, runs, { now, cancelRunning: true });
      resumeTask({ ...task, status: "paused" }, runs, { now, catchUp: "all" });
      cancelTask(task, runs, now);
      triggerTask({ ...task, options: options({ overlap: "allow_all" }) }, runs, {
        now,
        clientKey: "k",
      });
      backfillTask(task, { now, from: T0, to: now });
      deleteTask(task, runs, { now, force: true });
    }).not.toThrow();
  });
});
