/**
 * The coordinator admitting occurrences on the virtual clock (docs/semantics.md#the-life-of-an-occurrence, docs/schedules.md#bounds-and-jitter): catch-up after a gap with
 * each policy and the window, the late threshold, max_runs, end_at and jitter.
 */
import { describe, expect, it } from "vitest";
import type { Run } from "../../src/domain/run.js";
import { HOUR, MINUTE, SECOND, createHarness } from "./harness.js";
import type { LaunchCall } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);

/** Launches that succeed at once (the verdict comes with the launch). */
const succeedAtOnce = (call: LaunchCall): void => {
  call.resolve({ completion: { status: "succeeded" } });
};

function summary(runs: readonly Run[]) {
  return runs.map((r) => ({
    at: (r.scheduledFor - t0) / MINUTE,
    status: r.status,
    reason: r.reason,
    count: r.missedCount,
    until: r.missedUntil === null ? null : (r.missedUntil - t0) / MINUTE,
  }));
}

describe("Coordinator admission after a gap (catch-up)", () => {
  const every10Minutes = (policy: string) => ({
    schedule: { type: "interval", every: "PT10M" },
    options: { catch_up: { policy } },
  });

  it("misses what is outside the window, one missed range, and launches the latest (latest)", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create(every10Minutes("latest"));
    await h.tick();
    // Down for 3h05m: no tick between.
    await h.at(t0 + 185 * MINUTE);
    expect(summary(await h.runs(task.id))).toEqual([
      { at: 10, status: "missed", reason: "window", count: 12, until: 120 },
      { at: 130, status: "missed", reason: "down", count: 5, until: 170 },
      { at: 180, status: "running", reason: null, count: null, until: null },
    ]);
    expect(h.launcher.calls).toHaveLength(1);
    expect(h.launcher.calls[0]!.run).toMatchObject({ late: true, scheduledFor: t0 + 180 * MINUTE });
  });

  it("queues every occurrence inside the window, oldest first, and runs them one by one (all)", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = succeedAtOnce;
    const task = await h.create(every10Minutes("all"));
    await h.tick();
    await h.at(t0 + 185 * MINUTE);
    const runs = await h.runs(task.id);
    expect(summary(runs).slice(0, 2)).toEqual([
      { at: 10, status: "missed", reason: "window", count: 12, until: 120 },
      { at: 130, status: "succeeded", reason: null, count: null, until: null },
    ]);
    expect(runs.slice(1).map((r) => r.status)).toEqual(
      Array(6).fill("queued").fill("succeeded", 0, 1),
    );
    await h.runUntil(t0 + 186 * MINUTE);
    const after = await h.runs(task.id);
    expect(after.slice(1).map((r) => [(r.scheduledFor - t0) / MINUTE, r.status])).toEqual(
      [130, 140, 150, 160, 170, 180].map((m) => [m, "succeeded"]),
    );
    // Oldest first: launch order follows the nominal times.
    expect(h.launcher.calls.map((c) => (c.run.scheduledFor - t0) / MINUTE)).toEqual([
      130, 140, 150, 160, 170, 180,
    ]);
  });

  it("queues nothing overdue and records one missed range, then fires on time again (none)", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = succeedAtOnce;
    const task = await h.create(every10Minutes("none"));
    await h.tick();
    await h.at(t0 + 185 * MINUTE);
    expect(h.launcher.calls).toHaveLength(0);
    await h.runUntil(t0 + 191 * MINUTE);
    expect(summary(await h.runs(task.id))).toEqual([
      { at: 10, status: "missed", reason: "window", count: 12, until: 120 },
      { at: 130, status: "missed", reason: "down", count: 6, until: 180 },
      { at: 190, status: "succeeded", reason: null, count: null, until: null },
    ]);
  });

  it("honours a wider window", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({
      schedule: { type: "interval", every: "PT10M" },
      options: { catch_up: { policy: "latest", window: "PT4H" } },
    });
    await h.tick();
    await h.at(t0 + 185 * MINUTE);
    expect(summary(await h.runs(task.id))).toEqual([
      { at: 10, status: "missed", reason: "down", count: 17, until: 170 },
      { at: 180, status: "running", reason: null, count: null, until: null },
    ]);
  });
});

describe("Coordinator late threshold (late_after)", () => {
  it("marks a run launched more than late_after after fire_at late, and tells the launcher", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tick();
    // The replica was busy elsewhere for 5 minutes after the fire time.
    await h.at(t0 + HOUR + 5 * MINUTE);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", late: true, latenessMs: 5 * MINUTE });
    expect(h.launcher.calls[0]!.run).toMatchObject({
      late: true,
      scheduledFor: t0 + HOUR,
      fireAt: t0 + HOUR,
    });
  });

  it("does not mark a launch within late_after late", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({
      schedule: { type: "interval", every: "PT1H" },
      options: { late_after: "PT10M" },
    });
    await h.tick();
    await h.at(t0 + HOUR + 5 * MINUTE);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", late: false, latenessMs: 5 * MINUTE });
    expect(h.launcher.calls[0]!.run.late).toBe(false);
  });

  it("launches an on-time occurrence exactly at its fire time, not late", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.runUntil(t0 + HOUR + SECOND);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", late: false, latenessMs: 0 });
    expect(h.launcher.calls[0]!.at).toBe(t0 + HOUR);
  });
});

describe("Coordinator schedule bounds", () => {
  it("admits max_runs scheduled occurrences, then completes the task", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = succeedAtOnce;
    const task = await h.create({ schedule: { type: "interval", every: "PT1M", max_runs: 3 } });
    await h.runUntil(t0 + 10 * MINUTE);
    const runs = await h.runs(task.id);
    expect(runs.map((r) => [(r.scheduledFor - t0) / MINUTE, r.status])).toEqual([
      [1, "succeeded"],
      [2, "succeeded"],
      [3, "succeeded"],
    ]);
    expect(await h.task(task.id)).toMatchObject({
      status: "completed",
      nextRunAt: null,
      admittedCount: 3,
    });
  });

  it("stops at end_at (an occurrence exactly at end_at counts), then completes the task", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = succeedAtOnce;
    const task = await h.create({
      schedule: {
        type: "interval",
        every: "PT1M",
        end_at: new Date(t0 + 5 * MINUTE).toISOString(),
      },
    });
    await h.runUntil(t0 + 10 * MINUTE);
    const runs = await h.runs(task.id);
    expect(runs.map((r) => (r.scheduledFor - t0) / MINUTE)).toEqual([1, 2, 3, 4, 5]);
    expect(runs.every((r) => r.status === "succeeded")).toBe(true);
    expect(await h.task(task.id)).toMatchObject({ status: "completed", nextRunAt: null });
  });
});

describe("Coordinator jitter", () => {
  it("launches each occurrence at its jittered fire_at, within [scheduled_for, scheduled_for + jitter]", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = succeedAtOnce;
    const task = await h.create({ schedule: { type: "interval", every: "PT1H", jitter: "PT10M" } });
    await h.runUntil(t0 + 6 * HOUR + 11 * MINUTE, HOUR);
    const runs = await h.runs(task.id);
    expect(runs).toHaveLength(6);
    for (const run of runs) {
      expect(run.fireAt).toBeGreaterThanOrEqual(run.scheduledFor);
      expect(run.fireAt).toBeLessThanOrEqual(run.scheduledFor + 10 * MINUTE);
      expect(run.status).toBe("succeeded");
    }
    // Some jitter actually happened (it is a hash of the task id and the nominal time).
    expect(runs.some((r) => r.fireAt > r.scheduledFor)).toBe(true);
    // Never launched before fire_at, and not late: the coordinator slept until it.
    for (const call of h.launcher.calls) {
      expect(call.at).toBe(call.run.fireAt);
      expect(call.run.late).toBe(false);
    }
  });
});
