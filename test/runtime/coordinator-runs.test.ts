/**
 * A run's life through the coordinator (docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation): retries with back-off keeping the occurrence's
 * identity, busy threads, uncertain launches, run_timeout with heartbeats, queue_timeout, a completion
 * that never comes, and cancellation of queued, launching and running runs.
 */
import { describe, expect, it } from "vitest";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../src/domain/errors.js";
import type { OwnerId } from "../../src/domain/ids.js";
import { HOUR, MINUTE, SECOND, createHarness, leavePending } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const hourly = { type: "interval", every: "PT1H" };

describe("Coordinator retries", () => {
  it("retries a certainly failed launch with growing back-off, keeping the run and its key", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = (call) => {
      if (h.launcher.calls.length <= 2) call.reject(new LaunchFailedError("HTTP 400"));
      else call.resolve();
    };
    const task = await h.create({
      schedule: hourly,
      options: { retry: { max_attempts: 3, initial: "PT10S", max_delay: "PT1M" } },
    });
    await h.runUntil(t0 + HOUR + 2 * MINUTE);
    const calls = h.launcher.calls;
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.run.id)).size).toBe(1);
    expect(new Set(calls.map((c) => c.run.idempotencyKey)).size).toBe(1);
    expect(calls.map((c) => [c.run.attempt, c.run.failures])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    const [first, second, third] = calls.map((c) => c.at);
    // Back-off: initial 10 s plus up to 50% jitter, then doubled.
    expect(second! - first!).toBeGreaterThanOrEqual(10 * SECOND);
    expect(second! - first!).toBeLessThanOrEqual(15 * SECOND);
    expect(third! - second!).toBeGreaterThanOrEqual(20 * SECOND);
    expect(third! - second!).toBeLessThanOrEqual(30 * SECOND);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", attempt: 3, failures: 2 });
  });

  it("fails the run (launch_failed) when the attempts are used up", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = (call) => {
      call.reject(new LaunchFailedError("HTTP 422"));
    };
    const task = await h.create({
      schedule: hourly,
      options: { retry: { max_attempts: 2, initial: "PT10S" } },
    });
    await h.runUntil(t0 + HOUR + 5 * MINUTE);
    expect(h.launcher.calls).toHaveLength(2);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "failed", reason: "launch_failed", failures: 2 });
    expect((await h.task(task.id)).lastError).toBe("HTTP 422");
  });

  it("retries a run whose target reported a failure, with the same idempotency key", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({
      schedule: hourly,
      options: { retry: { max_attempts: 2, initial: "PT30S" } },
    });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    await h.coordinator.reportCompletion(run!.id, { status: "failed", error: "boom" });
    expect(await h.run(run!.id)).toMatchObject({ status: "queued", failures: 1, error: "boom" });
    await h.runUntil(t0 + HOUR + MINUTE);
    await h.coordinator.reportCompletion(run!.id, { status: "succeeded", result: { ok: 1 } });
    expect(await h.run(run!.id)).toMatchObject({ status: "succeeded", attempt: 2, failures: 1 });
    expect(h.launcher.calls.map((c) => c.run.idempotencyKey)).toEqual([
      run!.idempotencyKey,
      run!.idempotencyKey,
    ]);
  });

  it("puts a run refused as busy back in the queue without consuming an attempt", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = (call) => {
      if (h.launcher.calls.length === 1) call.reject(new ThreadBusyError("thread busy"));
      else call.resolve();
    };
    const task = await h.create({ schedule: hourly });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "queued", failures: 0, attempt: 1 });
    expect(run!.notBefore).toBe(t0 + HOUR + h.policy.busyBackoffMs);
    await h.runUntil(t0 + HOUR + 10 * SECOND);
    expect(await h.run(run!.id)).toMatchObject({ status: "running", failures: 0, attempt: 2 });
  });

  it("treats an uncertain launch as launched and never launches it again", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = (call) => {
      call.reject(new LaunchIndeterminateError("socket hang up"));
    };
    const task = await h.create({
      schedule: hourly,
      options: { run_timeout: "PT5M", retry: { max_attempts: 3 } },
    });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", targetRunId: null });
    await h.runUntil(t0 + HOUR + 4 * MINUTE);
    expect(h.launcher.calls).toHaveLength(1);
  });
});

describe("Coordinator deadlines", () => {
  it("times a run out at run_timeout unless heartbeats move its deadline", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({ schedule: hourly, options: { run_timeout: "PT1M" } });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    expect(run!.deadlineAt).toBe(t0 + HOUR + MINUTE);
    for (const s of [50, 100]) {
      await h.at(t0 + HOUR + s * SECOND);
      await h.dispatch.runWrites.recordHeartbeat(run!.id, h.clock.now());
    }
    await h.at(t0 + HOUR + 150 * SECOND);
    expect(await h.run(run!.id)).toMatchObject({
      status: "running",
      deadlineAt: t0 + HOUR + 160 * SECOND,
    });
    expect(h.launcher.cancels).toHaveLength(0);
    await h.at(t0 + HOUR + 161 * SECOND);
    expect(await h.run(run!.id)).toMatchObject({ status: "timed_out", reason: "run_timeout" });
    expect(h.launcher.cancels.map((r) => r.id)).toEqual([run!.id]);
  });

  it("frees the slot and the budget of a run whose completion never comes", async () => {
    const h = createHarness({ start: T0, policy: { maxConcurrentRuns: 1 } });
    const lost = await h.create({ schedule: hourly, options: { run_timeout: "PT1H" } });
    await h.runUntil(t0 + 30 * MINUTE, HOUR);
    const waiting = await h.create({ schedule: hourly });
    await h.runUntil(t0 + 2 * HOUR + 5 * SECOND, MINUTE);
    const [lostRun] = await h.runs(lost.id);
    const [waitingRun] = await h.runs(waiting.id);
    expect(lostRun).toMatchObject({ status: "timed_out", reason: "run_timeout" });
    expect(waitingRun).toMatchObject({ status: "running" });
    expect(waitingRun!.launchedAt).toBeGreaterThanOrEqual(lostRun!.finishedAt!);
    expect(h.launcher.cancels.map((r) => r.id)).toContain(lostRun!.id);
  });

  it("skips a run that waited longer than queue_timeout", async () => {
    const h = createHarness({ start: T0, policy: { maxConcurrentRuns: 1 } });
    await h.create({ schedule: { type: "interval", every: "PT30M" } });
    const waiting = await h.create({ schedule: hourly, options: { queue_timeout: "PT10M" } });
    await h.runUntil(t0 + HOUR + 11 * MINUTE, MINUTE);
    const [run] = await h.runs(waiting.id);
    expect(run).toMatchObject({ status: "skipped", reason: "queue_timeout", launchedAt: null });
    expect(h.launcher.callsFor(waiting.id)).toHaveLength(0);
  });

  it("does not launch a run past its queue_timeout when the budget frees in the same tick", async () => {
    const h = createHarness({ start: T0, policy: { maxConcurrentRuns: 1 } });
    const busy = await h.create({ schedule: { type: "interval", every: "PT30M" } });
    const waiting = await h.create({ schedule: hourly, options: { queue_timeout: "PT10M" } });
    await h.at(t0 + 30 * MINUTE);
    await h.at(t0 + HOUR);
    // No tick while the budget is held, then the budget frees 20 minutes later.
    await h.clock.set((t0 + HOUR + 20 * MINUTE) as never);
    const [busyRun] = await h.runs(busy.id);
    await h.coordinator.reportCompletion(busyRun!.id, { status: "succeeded" });
    await h.tick();
    const [run] = await h.runs(waiting.id);
    expect(run).toMatchObject({ status: "skipped", reason: "queue_timeout" });
    expect(h.launcher.callsFor(waiting.id)).toHaveLength(0);
  });
});

describe("Coordinator cancellation", () => {
  it("cancels a queued run at once; it is never launched", async () => {
    const h = createHarness({ start: T0, policy: { maxConcurrentRuns: 1 } });
    const busy = await h.create({ schedule: { type: "interval", every: "PT30M" } });
    const waiting = await h.create({ schedule: hourly });
    await h.runUntil(t0 + HOUR, MINUTE);
    const [run] = await h.runs(waiting.id);
    expect(run).toMatchObject({ status: "queued" });
    await h.tasks.cancelRun(LOCAL_ACTOR, run!.id, h.clock.now());
    expect(await h.run(run!.id)).toMatchObject({ status: "cancelled", reason: "cancel_requested" });
    // The budget frees; the cancelled run stays cancelled.
    const [busyRun] = await h.runs(busy.id);
    await h.coordinator.reportCompletion(busyRun!.id, { status: "succeeded" });
    await h.runUntil(t0 + HOUR + MINUTE, MINUTE);
    expect(h.launcher.callsFor(waiting.id)).toHaveLength(0);
    expect(h.launcher.cancels).toHaveLength(0);
  });

  it("asks a running run's target to stop; the run ends cancelled when it confirms", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({ schedule: hourly });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    await h.tasks.cancelRun(LOCAL_ACTOR, run!.id, h.clock.now());
    await h.tick();
    expect(await h.run(run!.id)).toMatchObject({ status: "running", reason: "cancel_requested" });
    expect(h.launcher.cancels.map((r) => r.id)).toEqual([run!.id]);
    await h.coordinator.reportCompletion(run!.id, { status: "cancelled" });
    const after = await h.run(run!.id);
    // It had started: it keeps launched_at (it escaped).
    expect(after).toMatchObject({ status: "cancelled", reason: "cancel_requested" });
    expect(after.launchedAt).toBe(t0 + HOUR);
  });

  it("tells the target to stop a run cancelled while its launch was in flight, once it has launched", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = leavePending;
    const task = await h.create({ schedule: hourly });
    await h.at(t0 + HOUR);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "launching" });
    await h.tasks.cancelRun(LOCAL_ACTOR, run!.id, h.clock.now());
    expect(h.launcher.cancels).toHaveLength(0);
    h.launcher.calls[0]!.resolve();
    await h.tick();
    expect(h.launcher.cancels.map((r) => r.id)).toEqual([run!.id]);
    expect(await h.run(run!.id)).toMatchObject({ status: "running" });
  });
});

describe("Coordinator retention", () => {
  it("deletes finished runs older than the retention and never decides their occurrences again", async () => {
    const h = createHarness({ start: T0, coordinator: { retentionMs: HOUR } });
    h.launcher.behaviour = (call) => {
      call.resolve({ completion: { status: "succeeded" } });
    };
    const task = await h.create({ schedule: { type: "interval", every: "PT30M" } });
    await h.runUntil(t0 + HOUR + MINUTE, MINUTE);
    expect((await h.runs(task.id)).map((r) => r.scheduledFor - t0)).toEqual([30 * MINUTE, HOUR]);
    await h.runUntil(t0 + 2 * HOUR + MINUTE, MINUTE);
    // The 00:30 and 01:00 runs finished more than an hour ago: gone. Nothing was decided twice.
    expect((await h.runs(task.id)).map((r) => r.scheduledFor - t0)).toEqual([
      90 * MINUTE,
      2 * HOUR,
    ]);
    expect(h.launcher.calls.map((c) => c.run.scheduledFor - t0)).toEqual([
      30 * MINUTE,
      HOUR,
      90 * MINUTE,
      2 * HOUR,
    ]);
  });
});

describe("Coordinator fair share (docs/semantics.md#fair-share)", () => {
  it("holds each owner to its share and launches another owner's run beside a backlog", async () => {
    const h = createHarness({
      start: T0,
      policy: {
        maxConcurrentRuns: 4,
        maxActiveRunsPerOwner: 2,
        maxActiveRunsByOwner: { carol: 1 },
      },
    });
    const bob = { owner: "bob" as OwnerId, admin: false };
    const alice = { owner: "alice" as OwnerId, admin: false };
    const carol = { owner: "carol" as OwnerId, admin: false };
    const body = { title: "t", schedule: hourly, target: { kind: "handler", name: "job" } };
    const owned = async (actor: typeof bob, count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const created = await h.tasks.create(actor, body, h.clock.now());
        await h.tasks.trigger(actor, created.task.id, {}, h.clock.now());
        ids.push(created.task.id);
      }
      return ids;
    };
    await owned(bob, 5);
    await owned(carol, 3);
    await h.runUntil(t0 + MINUTE, SECOND);
    const launchedBy = (owner: string): number =>
      h.launcher.calls.filter((c) => c.run.owner === owner).length;
    // Bob's share is 2 and Carol's override 1, though the budget of 4 has room for more.
    expect([launchedBy("bob"), launchedBy("carol")]).toEqual([2, 1]);
    await owned(alice, 1);
    await h.runUntil(t0 + 2 * MINUTE, SECOND);
    expect([launchedBy("bob"), launchedBy("carol"), launchedBy("alice")]).toEqual([2, 1, 1]);
  });
});
