/**
 * TaskService commands on tasks and runs (docs/semantics.md#task-operations, docs/semantics.md#cancellation): trigger and its idempotency key, backfill,
 * pause, resume, cancel, delete, cancel run and preview, through the in-memory store.
 */
import { describe, expect, it } from "vitest";
import { runId } from "../../src/domain/ids.js";
import {
  ADMIN,
  ALICE,
  claim,
  claimAndLaunch,
  createTask,
  cronInput,
  harness,
  history,
  iso,
  launch,
  minute,
  onceInput,
  reload,
  reloadRun,
  SECOND,
  T0,
  RETENTION,
} from "./harness.js";

describe("TaskService.trigger", () => {
  it("answers the same run for the same idempotency key, even once it runs", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 12 * * *"));
    const run = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k" }, minute(1));
    expect(run).toMatchObject({
      task_id: task.id,
      owner: "alice",
      trigger: "manual",
      status: "queued",
      scheduled_for: iso(minute(1)),
      fire_at: iso(minute(1)),
      not_before: iso(minute(1)),
      idempotency_key: `punctual:${task.id}:manual:k`,
    });
    expect(h.signals.wakes).toBe(2);
    expect(await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k" }, minute(2))).toEqual(run);

    await claimAndLaunch(h, minute(3));
    // Under overlap skip a new trigger is refused, but the same key still answers its run.
    const again = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k" }, minute(4));
    expect(again).toMatchObject({ id: run.id, status: "running" });
    expect(await history(h, ALICE, task.id)).toHaveLength(1);
  });

  it("mints a fresh key for each trigger without one", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("0 12 * * *", { options: { overlap: "allow_all" } }),
    );
    const first = await h.tasks.trigger(ALICE, task.id, {}, minute(1));
    const second = await h.tasks.trigger(ALICE, task.id, {}, minute(1));
    expect(second.id).not.toBe(first.id);
    expect(second.idempotency_key).not.toBe(first.idempotency_key);
    expect(await history(h, ALICE, task.id)).toHaveLength(2);
  });

  it("runs a paused task's manual run, and the task stays paused", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.tasks.pause(ALICE, task.id, {}, minute(1));
    const run = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "now" }, minute(2));
    expect(run.status).toBe("queued");
    const [launched] = await claimAndLaunch(h, minute(2));
    expect(launched!.id).toBe(run.id);
    await h.dispatch.runWrites.recordCompletion(
      runId(run.id),
      { status: "failed", error: "nope" },
      minute(3),
    );
    expect(await reload(h, task.id)).toMatchObject({
      status: "paused",
      run_count: 1,
      last_run_id: run.id,
      last_error: "nope",
    });
    expect((await h.dispatch.admission.admitDue(minute(10), 10)).tasks).toBe(0);
  });

  it("runs a manual run of a terminal task without changing its status", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [scheduled] = await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(scheduled!.id, { status: "succeeded" }, minute(6));
    expect((await reload(h, task.id)).status).toBe("completed");

    const manual = await h.tasks.trigger(ALICE, task.id, {}, minute(7));
    const [launched] = await claimAndLaunch(h, minute(7));
    expect(launched!.id).toBe(manual.id);
    await h.dispatch.runWrites.recordCompletion(
      runId(manual.id),
      { status: "failed", error: "x" },
      minute(8),
    );
    expect(await reload(h, task.id)).toMatchObject({ status: "completed", run_count: 2 });
  });

  it("refuses an empty idempotency key or one over 200 characters as invalid input", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 12 * * *"));
    for (const key of ["", "k".repeat(201)]) {
      await expect(
        h.tasks.trigger(ALICE, task.id, { idempotencyKey: key }, minute(1)),
      ).rejects.toMatchObject({
        code: "validation_failed",
        errors: [{ field: "idempotency_key" }],
      });
    }
    expect(await history(h, ALICE, task.id)).toEqual([]);
  });

  // BUG: docs/semantics.md#task-operations, docs/semantics.md#launch, docs/api.md ("never 500 for bad input"): a client key long enough that the derived
  // key passes 255 characters is refused by idempotencyKeyFor with a RangeError before triggerTask can
  // validate it. Expected: ValidationError (validation_failed, field idempotency_key). Actual: RangeError
  // "idempotency key too long" (no code), which the HTTP layer would answer with a 500.
  it("refuses a very long idempotency key as invalid input", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 12 * * *"));
    await expect(
      h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k".repeat(300) }, minute(1)),
    ).rejects.toMatchObject({ code: "validation_failed", errors: [{ field: "idempotency_key" }] });
  });
});

describe("TaskService.backfill", () => {
  it("queues the nominal times of [from, to) oldest first, and a repeat adds nothing", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const now = minute(60);
    const range = { from: iso(minute(0)), to: iso(minute(30)) };

    const first = await h.tasks.backfill(ALICE, task.id, range, now);
    expect(first.already_backfilled).toBe(0);
    expect(first.runs.map((r) => r.scheduled_for)).toEqual(
      [0, 5, 10, 15, 20, 25].map((m) => iso(minute(m))),
    );
    for (const run of first.runs) {
      expect(run).toMatchObject({
        trigger: "backfill",
        status: "queued",
        queued_at: iso(now),
        idempotency_key: `punctual:${task.id}:backfill:${Date.parse(run.scheduled_for)}`,
      });
    }
    expect(await h.tasks.backfill(ALICE, task.id, range, now)).toEqual({
      runs: [],
      already_backfilled: 6,
    });
    const overlapping = await h.tasks.backfill(
      ALICE,
      task.id,
      { from: iso(minute(20)), to: iso(minute(40)) },
      now,
    );
    expect(overlapping.already_backfilled).toBe(2);
    expect(overlapping.runs.map((r) => r.scheduled_for)).toEqual([
      iso(minute(30)),
      iso(minute(35)),
    ]);

    // The scheduled decisions are untouched.
    expect(await reload(h, task.id)).toEqual(task);

    // One at a time (overlap skip makes runs exclusive), oldest first.
    const launchedOrder: string[] = [];
    for (let i = 0; i < 3; i++) {
      const [launched] = await claimAndLaunch(h, minute(61 + i));
      launchedOrder.push(iso(launched!.scheduledFor));
      expect(await claim(h, minute(61 + i))).toEqual([]);
      await h.dispatch.runWrites.recordCompletion(
        launched!.id,
        { status: "succeeded" },
        minute(61 + i, 1),
      );
    }
    expect(launchedOrder).toEqual([0, 5, 10].map((m) => iso(minute(m))));
  });

  it("refuses a range that is empty, ends in the future, is malformed or is too long, writing nothing", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("* * * * *"));
    const now = minute(60);
    const cases: [{ from: unknown; to: unknown }, Record<string, unknown>][] = [
      [{ from: iso(minute(30)), to: iso(minute(30)) }, { errors: [{ field: "from" }] }],
      [{ from: iso(minute(30)), to: iso(minute(61)) }, { errors: [{ field: "to" }] }],
      [{ from: "yesterday", to: iso(minute(30)) }, { errors: [{ field: "from" }] }],
      [{ from: iso(minute(0)), to: 42 }, { errors: [{ field: "to" }] }],
      [{ from: iso(minute(-2000)), to: iso(minute(0)) }, { code: "limit_exceeded" }],
    ];
    for (const [range, error] of cases) {
      await expect(h.tasks.backfill(ALICE, task.id, range, now)).rejects.toMatchObject(error);
    }
    expect(await history(h, ALICE, task.id)).toEqual([]);
  });
});

describe("TaskService.pause and resume", () => {
  it("cancels queued scheduled runs on pause, keeping manual and running runs", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "buffer_one" } }),
    );
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    const [waiting] = (await h.dispatch.admission.admitDue(minute(10), 10)).queuedRuns;
    const manual = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "m" }, minute(10));

    const paused = await h.tasks.pause(ALICE, task.id, {}, minute(11));
    expect(paused).toMatchObject({ status: "paused", version: task.version });
    expect(await reloadRun(h, waiting!.id)).toMatchObject({
      status: "cancelled",
      reason: "task_paused",
      finished_at: iso(minute(11)),
    });
    expect((await reloadRun(h, manual.id)).status).toBe("queued");
    expect(await reloadRun(h, running!.id)).toMatchObject({
      status: "running",
      cancel_requested_at: null,
    });
    expect(h.signals.cancelRequests).toEqual([]);
    // Pausing a paused task changes nothing more.
    expect(await h.tasks.pause(ALICE, task.id, {}, minute(12))).toMatchObject({ status: "paused" });
  });

  it("asks the running run to stop when pausing with cancel_running", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    await h.tasks.pause(ALICE, task.id, { cancelRunning: true }, minute(6));
    expect(h.signals.cancelRequests.map((c) => [c.run.id, c.run.reason, c.task.id])).toEqual([
      [running!.id, "cancel_requested", task.id],
    ]);
    expect(await reloadRun(h, running!.id)).toMatchObject({
      status: "running",
      cancel_requested_at: iso(minute(6)),
    });
    const confirmed = await h.dispatch.runWrites.recordCompletion(
      running!.id,
      { status: "cancelled" },
      minute(7),
    );
    expect(confirmed!.run).toMatchObject({
      status: "cancelled",
      reason: "cancel_requested",
      launchedAt: minute(5),
    });
    expect((await reload(h, task.id)).status).toBe("paused");
  });

  const catchUps: ["latest" | "all", [string, string, string | null, number | null][]][] = [
    [
      "latest",
      [
        [iso(minute(30)), "queued", null, null],
        [iso(minute(5)), "missed", "paused", 5],
      ],
    ],
    ["all", [30, 25, 20, 15, 10, 5].map((m) => [iso(minute(m)), "queued", null, null])],
  ];

  it.each(catchUps)(
    "decides the pause's occurrences with catch_up %s",
    async (catchUp, expected) => {
      const h = harness();
      const task = await createTask(h, cronInput("*/5 * * * *"));
      await h.tasks.pause(ALICE, task.id, {}, minute(1));
      const resumed = await h.tasks.resume(ALICE, task.id, { catchUp }, minute(31));
      expect(resumed).toMatchObject({
        status: "enabled",
        decided_through: iso(minute(30)),
        next_run_at: iso(minute(35)),
      });
      const runs = await history(h, ALICE, task.id);
      expect(runs.map((r) => [r.scheduled_for, r.status, r.reason, r.missed_count])).toEqual(
        expected,
      );
    },
  );

  it("queues at most 100 of the pause's occurrences with catch_up all, oldest first, the rest missed", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("* * * * *"));
    await h.tasks.pause(ALICE, task.id, {}, minute(0, 30 * SECOND));
    await h.tasks.resume(ALICE, task.id, { catchUp: "all" }, minute(120, 30 * SECOND));
    const runs = (await history(h, ALICE, task.id)).reverse();
    const queued = runs.filter((r) => r.status === "queued");
    expect(queued).toHaveLength(100);
    expect(queued[0]!.scheduled_for).toBe(iso(minute(1)));
    expect(queued.at(-1)!.scheduled_for).toBe(iso(minute(100)));
    expect(runs.at(-1)).toMatchObject({
      status: "missed",
      reason: "paused",
      scheduled_for: iso(minute(101)),
      missed_until: iso(minute(120)),
      missed_count: 20,
    });
    expect(runs).toHaveLength(101);
  });

  it("records nothing when a task is resumed before any occurrence fell in the pause", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.tasks.pause(ALICE, task.id, {}, minute(1));
    const resumed = await h.tasks.resume(ALICE, task.id, {}, minute(4));
    expect(resumed).toMatchObject({ status: "enabled", next_run_at: iso(minute(5)) });
    expect(await history(h, ALICE, task.id)).toEqual([]);
  });

  it("ends a once task whose only queued run a pause cancelled", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const paused = await h.tasks.pause(ALICE, task.id, {}, minute(6));
    expect(paused).toMatchObject({ status: "cancelled", next_run_at: null });
  });
});

describe("TaskService.cancel", () => {
  it("cancels the task and its queued runs; a launched run finishes normally", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "allow_all" } }),
    );
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    const manual = await h.tasks.trigger(ALICE, task.id, {}, minute(6));

    const cancelled = await h.tasks.cancel(ALICE, task.id, minute(7));
    expect(cancelled).toMatchObject({ status: "cancelled", next_run_at: null });
    expect(await reloadRun(h, manual.id)).toMatchObject({
      status: "cancelled",
      reason: "task_cancelled",
    });
    expect((await reloadRun(h, running!.id)).status).toBe("running");
    expect((await h.dispatch.admission.admitDue(minute(10), 10)).tasks).toBe(0);
    await h.dispatch.runWrites.recordCompletion(running!.id, { status: "succeeded" }, minute(8));
    expect(await reload(h, task.id)).toMatchObject({ status: "cancelled", run_count: 1 });

    for (const call of [
      () => h.tasks.cancel(ALICE, task.id, minute(9)),
      () => h.tasks.pause(ALICE, task.id, {}, minute(9)),
      () => h.tasks.resume(ALICE, task.id, {}, minute(9)),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "illegal_transition" });
    }
  });
});

describe("TaskService.delete", () => {
  it("cancels queued runs and hides the task at once", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const [queued] = (await h.dispatch.admission.admitDue(minute(5), 10)).queuedRuns;
    await h.tasks.delete(ALICE, task.id, {}, minute(6));
    expect(await h.store.runs.findRun({ kind: "all" }, queued!.id)).toMatchObject({
      status: "cancelled",
      reason: "task_deleted",
    });
    for (const call of [
      () => h.tasks.get(ADMIN, task.id),
      () => h.tasks.trigger(ALICE, task.id, {}, minute(7)),
      () => h.tasks.delete(ALICE, task.id, {}, minute(7)),
      () => h.tasks.update(ALICE, task.id, { title: "x" }, null, minute(7)),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "not_found" });
    }
    expect(await claim(h, minute(7))).toEqual([]);
    expect(await h.dispatch.recovery.purge(minute(7), RETENTION, 10)).toBe(2);
  });

  it("asks a launching run to stop on a forced delete, and stops it when the launch answers", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [launching] = await claim(h, minute(5));
    await expect(h.tasks.delete(ALICE, task.id, {}, minute(5, SECOND))).rejects.toMatchObject({
      code: "task_not_mutable",
    });
    await h.tasks.delete(ALICE, task.id, { force: true }, minute(5, SECOND));
    // A launching run has nothing to cancel at its target yet.
    expect(h.signals.cancelRequests).toEqual([]);

    const change = await launch(h, launching!, minute(5, 2 * SECOND));
    expect(change).toMatchObject({
      cancelTarget: true,
      run: { status: "running", reason: "task_deleted", cancelRequestedAt: minute(5, SECOND) },
    });
  });
});

describe("TaskService.cancelRun", () => {
  it("cancels a queued run at once", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    const [queued] = (await h.dispatch.admission.admitDue(minute(5), 10)).queuedRuns;
    const cancelled = await h.tasks.cancelRun(ALICE, queued!.id, minute(6));
    expect(cancelled).toMatchObject({
      status: "cancelled",
      reason: "cancel_requested",
      finished_at: iso(minute(6)),
      launched_at: null,
    });
    expect(h.signals.cancelRequests).toEqual([]);
    // A once task's only run, cancelled, takes its task with it.
    expect(await reload(h, task.id)).toMatchObject({ status: "cancelled" });
    expect(await claim(h, minute(6))).toEqual([]);
  });

  it("asks a running run's target to stop, once, and keeps launched_at when it ends", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    const asked = await h.tasks.cancelRun(ALICE, running!.id, minute(6));
    expect(asked).toMatchObject({
      status: "running",
      cancel_requested_at: iso(minute(6)),
      reason: "cancel_requested",
    });
    expect(h.signals.cancelRequests.map((c) => [c.run.id, c.task.id])).toEqual([
      [running!.id, task.id],
    ]);
    await h.tasks.cancelRun(ALICE, running!.id, minute(7));
    expect(h.signals.cancelRequests).toHaveLength(1);

    await h.dispatch.runWrites.recordCompletion(running!.id, { status: "cancelled" }, minute(8));
    expect(await reloadRun(h, running!.id)).toMatchObject({
      status: "cancelled",
      reason: "cancel_requested",
      launched_at: iso(minute(5)),
      finished_at: iso(minute(8)),
    });
    expect(await reload(h, task.id)).toMatchObject({ status: "enabled" });
  });

  it("ends a launching run asked to stop when its launch certainly did not start", async () => {
    const h = harness();
    await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [launching] = await claim(h, minute(5));
    await h.tasks.cancelRun(ALICE, launching!.run.id, minute(5, SECOND));
    expect(h.signals.cancelRequests).toEqual([]);
    h.launcher.answer({ kind: "busy" });
    const change = await launch(h, launching!, minute(5, 2 * SECOND));
    expect(change!.run).toMatchObject({
      status: "cancelled",
      reason: "cancel_requested",
      launchedAt: null,
    });
  });

  it("leaves a finished run as it is, and says it has ended (illegal_transition)", async () => {
    const h = harness();
    await createTask(h, cronInput("*/5 * * * *"));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(running!.id, { status: "succeeded" }, minute(6));
    const before = await reloadRun(h, running!.id);
    await expect(h.tasks.cancelRun(ALICE, running!.id, minute(7))).rejects.toMatchObject({
      code: "illegal_transition",
    });
    expect(await reloadRun(h, running!.id)).toEqual(before);
    expect(h.signals.cancelRequests).toEqual([]);
  });
});

describe("TaskService.preview", () => {
  it("lists the next occurrences after now with their local wall times", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("30 2 * * *", {
        schedule: { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
      }),
    );
    const { occurrences: preview } = await h.tasks.preview(ALICE, task.id, 3, T0);
    expect(preview.map((o) => o.wall)).toEqual([
      "2030-01-08T02:30:00",
      "2030-01-09T02:30:00",
      "2030-01-10T02:30:00",
    ]);
    expect(preview.map((o) => o.offset)).toEqual(["+01:00", "+01:00", "+01:00"]);
    // Across the spring-forward gap the fire is shifted, and the preview says so.
    const { occurrences: spring } = await h.tasks.preview(
      ALICE,
      task.id,
      1,
      minute(0, Date.UTC(2030, 2, 30, 12) - T0),
    );
    expect(spring[0]).toMatchObject({ wall: "2030-03-31T03:00:00", note: { kind: "gap_shifted" } });
  });

  it("refuses a count outside 1..100", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    for (const count of [0, 101, 1.5]) {
      await expect(h.tasks.preview(ALICE, task.id, count, T0)).rejects.toMatchObject({
        code: "validation_failed",
        errors: [{ field: "count" }],
      });
    }
    expect((await h.tasks.preview(ALICE, task.id, 100, T0)).occurrences).toHaveLength(100);
  });

  // Was a bug: the preview returned the domain's objects (epoch ms, camelCase) instead of the API's
  // shape (docs/library.md, docs/api.md).
  it("answers the preview in the API's shape: RFC 3339 instants and snake_case names", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const {
      occurrences: [first],
    } = await h.tasks.preview(ALICE, task.id, 1, T0);
    expect(first).toEqual({
      at: iso(minute(5)),
      wall: "2030-01-07T09:05:00",
      offset: "+00:00",
      note: null,
      rule: "*/5 * * * *",
      suppressed_before: [],
    });
  });
});
