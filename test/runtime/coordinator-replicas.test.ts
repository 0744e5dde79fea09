/**
 * Claims across replicas and time (docs/semantics.md#run-statuses, docs/semantics.md#launch, docs/architecture.md#cadence): a launch claim that expires while the launcher is
 * still pending, a replica stopped mid-launch, handler runs lost with their replica. Two coordinators share
 * one memory store with distinct replica ids; a replica whose process stalls keeps its own (frozen) clock.
 * The invariant checked throughout: never two launches in one attempt.
 */
import { describe, expect, it } from "vitest";
import type { Instant } from "../../src/domain/time.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { HOUR, SECOND, createHarness, leavePending } from "./harness.js";
import type { FakeLauncher, Harness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const hourly = { type: "interval", every: "PT1H" };
const webhook = { kind: "webhook", url: "https://example.test/hook" };
/**
 * A 30 s lease: the launch timeout is 25 s (the lease minus a 5 s margin). The liveness timeout is the
 * default 10 s: a replica silent that long loses its claims and handler runs well before the lease.
 */
const policy = { leaseSeconds: 30 };

/** Replica A with its own clock (it may stall) and replica B on the shared timeline, one store. */
function twoReplicas(): { a: Harness; b: Harness } {
  const b = createHarness({ start: T0, policy, replicaId: "replica-b" });
  const a = createHarness({
    store: b.store,
    clock: new VirtualClock(t0),
    policy,
    replicaId: "replica-a",
  });
  return { a, b };
}

function expectAtMostOneLaunchPerAttempt(...launchers: FakeLauncher[]): void {
  const counts = new Map<string, number>();
  for (const launcher of launchers) {
    for (const [key, n] of launcher.launchesPerAttempt())
      counts.set(key, (counts.get(key) ?? 0) + n);
  }
  for (const [key, n] of counts) expect(n, `launches of ${key}`).toBe(1);
}

describe("Coordinator launch claims", () => {
  it("an expired claim whose launcher is still pending is reconciled by another replica, never relaunched", async () => {
    const { a, b } = twoReplicas();
    a.launcher.behaviour = leavePending;
    // A webhook target: its runs live on the target, so only the claim matters (no replica heartbeat).
    const task = await b.create({ schedule: hourly, target: webhook });
    // A claims at 01:00 and its process stalls inside the launcher call (its clock stops).
    await a.at(t0 + HOUR);
    const [claimed] = await b.runs(task.id);
    expect(claimed).toMatchObject({ status: "launching", claimedBy: "replica-a", attempt: 1 });
    // B sweeps after the lease: the target cannot say (unknown), so it counts as launched.
    await b.at(t0 + HOUR + 31 * SECOND);
    expect(b.launcher.reconciles.map((r) => r.id)).toEqual([claimed!.id]);
    expect(await b.run(claimed!.id)).toMatchObject({ status: "running", targetRunId: null });
    // A wakes up and its launcher answers: the fenced write is refused, nothing changes.
    a.launcher.calls[0]!.resolve();
    await flushPromises();
    expect(a.logger.at("warn")).toContain(
      "the launch claim was taken over before its outcome was recorded",
    );
    await b.runUntil(t0 + HOUR + 5 * 60 * SECOND);
    expect(await b.run(claimed!.id)).toMatchObject({ status: "running", attempt: 1 });
    expect(b.launcher.calls).toHaveLength(0);
    expectAtMostOneLaunchPerAttempt(a.launcher, b.launcher);
  });

  it("an expired claim the target shows no run for is queued again and launched as a new attempt", async () => {
    const { a, b } = twoReplicas();
    a.launcher.behaviour = leavePending;
    b.launcher.finding = () => ({ kind: "absent" });
    const task = await b.create({ schedule: hourly });
    await a.at(t0 + HOUR);
    await b.at(t0 + HOUR + 31 * SECOND);
    const [run] = await b.runs(task.id);
    // Reconciled absent (queued, no retry consumed) and claimed again by B in the same tick.
    expect(run).toMatchObject({
      status: "running",
      attempt: 2,
      failures: 0,
      claimedBy: "replica-b",
    });
    expect(b.launcher.calls.map((c) => c.run.attempt)).toEqual([2]);
    expect(b.launcher.calls[0]!.run.idempotencyKey).toBe(a.launcher.calls[0]!.run.idempotencyKey);
    a.launcher.calls[0]!.resolve();
    await flushPromises();
    expect(await b.run(run!.id)).toMatchObject({ status: "running", attempt: 2 });
    expectAtMostOneLaunchPerAttempt(a.launcher, b.launcher);
  });

  it("a lone replica whose launcher ignores the timeout records the launch as uncertain before the lease ends", async () => {
    const h = createHarness({ start: T0, policy });
    h.launcher.behaviour = leavePending;
    const task = await h.create({ schedule: hourly, options: { run_timeout: "PT10M" } });
    await h.at(t0 + HOUR);
    await h.at(t0 + HOUR + 24 * SECOND);
    expect(h.launcher.calls[0]!.signal.aborted).toBe(false);
    expect(await h.runs(task.id)).toMatchObject([{ status: "launching" }]);
    await h.at(t0 + HOUR + 25 * SECOND);
    expect(h.launcher.calls[0]!.signal.aborted).toBe(true);
    const [run] = await h.runs(task.id);
    // docs/semantics.md#launch: a launch that timed out may have started; it is running and never launched again.
    expect(run).toMatchObject({ status: "running", targetRunId: null, attempt: 1 });
    // Issue 17: launched_at is when the request was sent, not when the launch gave up waiting.
    expect(run!.launchedAt).toBe(t0 + HOUR);
    expect(run!.deadlineAt).toBe(t0 + HOUR + 10 * 60 * SECOND);
    await h.runUntil(t0 + HOUR + 11 * 60 * SECOND);
    expect(await h.run(run!.id)).toMatchObject({ status: "timed_out" });
    expect(h.launcher.calls).toHaveLength(1);
    // A verdict the launcher gives after all is still recorded (first verdict wins: here, the timeout).
    h.launcher.calls[0]!.resolve({ completion: { status: "succeeded", result: { late: true } } });
    await flushPromises();
    expect(await h.run(run!.id)).toMatchObject({ status: "timed_out", result: { late: true } });
  });

  it("a replica stopped mid-launch keeps its claim; another replica takes the run over once it is silent", async () => {
    const { a, b } = twoReplicas();
    a.launcher.behaviour = leavePending;
    b.launcher.finding = () => ({ kind: "absent" });
    const task = await b.create({ schedule: hourly });
    await a.at(t0 + HOUR);
    const stopped = a.coordinator.stop();
    expect(a.coordinator.stop()).toBe(stopped);
    await flushPromises();
    // The launch is still in flight at the shutdown timeout (10 s): A gives up waiting, keeps the claim.
    await a.clock.advance(10 * SECOND);
    await stopped;
    expect(a.logger.at("warn")).toContain(
      "stopped with launches in flight; their claims will expire and be reconciled",
    );
    const [run] = await b.runs(task.id);
    expect(run).toMatchObject({ status: "launching", claimedBy: "replica-a" });
    expect(run!.claimToken).not.toBeNull();
    // A's last beat was its pass at 01:00 (it ticked by hand, never started): B leaves the claim alone
    // until A has been silent for the liveness timeout (10 s), long before the 30 s lease.
    await b.at(t0 + HOUR + 9 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "launching", claimedBy: "replica-a" });
    await b.at(t0 + HOUR + 11 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({
      status: "running",
      attempt: 2,
      claimedBy: "replica-b",
    });
    expectAtMostOneLaunchPerAttempt(a.launcher, b.launcher);
  });

  it("a replica draining at shutdown keeps heartbeating, so its claim is not taken over meanwhile", async () => {
    const b = createHarness({ start: T0, policy, replicaId: "replica-b" });
    const a = createHarness({
      store: b.store,
      clock: new VirtualClock(t0),
      policy,
      replicaId: "replica-a",
      coordinator: { shutdownTimeoutMs: 20 * SECOND },
    });
    a.launcher.behaviour = leavePending;
    const task = await b.create({ schedule: hourly, target: webhook });
    a.coordinator.start();
    await flushPromises();
    await a.clock.set((t0 + HOUR) as Instant);
    const [run] = await b.runs(task.id);
    expect(run).toMatchObject({ status: "launching", claimedBy: "replica-a" });
    const stopped = a.coordinator.stop();
    // 18 s of drain, second by second: A's heartbeat goes on beating.
    for (let s = 1; s <= 18; s++) await a.clock.set((t0 + HOUR + s * SECOND) as Instant);
    await b.at(t0 + HOUR + 18 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "launching", claimedBy: "replica-a" });
    a.launcher.calls[0]!.resolve();
    await stopped;
    expect(await b.run(run!.id)).toMatchObject({ status: "running", attempt: 1 });
    expect(b.launcher.reconciles).toHaveLength(0);
    // Stopped: silent from now on, as a crashed replica would be.
    await b.at(t0 + HOUR + 40 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "running", attempt: 1 });
  });

  it("a silent replica's pending claim is reconciled within the liveness timeout, its late answer refused", async () => {
    const { a, b } = twoReplicas();
    a.launcher.behaviour = leavePending;
    b.launcher.finding = () => ({ kind: "absent" });
    const task = await b.create({ schedule: hourly, target: webhook });
    await a.at(t0 + HOUR);
    const [claimed] = await b.runs(task.id);
    expect(claimed!.claimExpiresAt).toBe(t0 + HOUR + 30 * SECOND);
    // A stalls (its clock stops). 11 s later B finds it silent: the claim is reconciled (the target
    // shows nothing) and relaunched by B as attempt 2, 19 s before the lease would have ended.
    await b.at(t0 + HOUR + 11 * SECOND);
    expect(await b.run(claimed!.id)).toMatchObject({
      status: "running",
      attempt: 2,
      claimedBy: "replica-b",
    });
    // A resumes: its launch answer carries the superseded token and is refused.
    a.launcher.calls[0]!.resolve();
    await flushPromises();
    expect(a.logger.at("warn")).toContain(
      "the launch claim was taken over before its outcome was recorded",
    );
    expect(await b.run(claimed!.id)).toMatchObject({ status: "running", attempt: 2 });
    expectAtMostOneLaunchPerAttempt(a.launcher, b.launcher);
  });

  it("a replica paused past the liveness timeout, then resumed, cannot record over the replica that took its run", async () => {
    const { a, b } = twoReplicas();
    const task = await b.create({ schedule: hourly, options: { retry: { max_attempts: 2 } } });
    await a.at(t0 + HOUR);
    const [run] = await b.runs(task.id);
    expect(run).toMatchObject({ status: "running", claimedBy: "replica-a", attempt: 1 });
    // A pauses (its clock stops); B finds it silent, the run is lost and B runs attempt 2.
    await b.at(t0 + HOUR + 11 * SECOND);
    await b.runUntil(t0 + HOUR + 2 * 60 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({
      status: "running",
      attempt: 2,
      claimedBy: "replica-b",
    });
    // A resumes: its handler's verdict about attempt 1, and its hand-back at shutdown, are refused.
    await a.coordinator.reportCompletion(run!.id, { status: "succeeded", result: "stale" }, 1);
    await a.coordinator.reportLost(run!.id, 1);
    await a.coordinator.settle();
    expect(a.logger.at("error")).toContain("could not record a completion");
    expect(await b.run(run!.id)).toMatchObject({
      status: "running",
      attempt: 2,
      claimedBy: "replica-b",
      result: null,
    });
    // B's own verdict is recorded.
    await b.coordinator.reportCompletion(run!.id, { status: "succeeded", result: "fresh" }, 2);
    expect(await b.run(run!.id)).toMatchObject({ status: "succeeded", result: "fresh" });
  });

  it("a replica back from a store outage gives the others a liveness timeout to beat before judging them", async () => {
    const { a, b } = twoReplicas();
    const task = await b.create({ schedule: hourly });
    await a.at(t0 + HOUR);
    await b.at(t0 + HOUR);
    const [run] = await b.runs(task.id);
    // B cannot reach the store from 01:00:01 to 01:00:20 (A, paused, beats no more either).
    const registry = b.store.replicas;
    const beat = registry.heartbeat.bind(registry);
    let down = true;
    registry.heartbeat = (replicaId, now) =>
      down && replicaId === "replica-b"
        ? Promise.reject(new Error("database unavailable"))
        : beat(replicaId, now);
    await b.clock.set((t0 + HOUR + 5 * SECOND) as Instant);
    await expect(b.coordinator.tick()).rejects.toThrow("database unavailable");
    down = false;
    // Back at 01:00:21: A has been silent 21 s, but B has only just seen the store again.
    await b.at(t0 + HOUR + 21 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "running", claimedBy: "replica-a" });
    // A liveness timeout later A has had its chance to beat and has not: it is lost.
    await b.at(t0 + HOUR + 31 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "failed", reason: "replica_lost" });
  });

  it("a silent replica's budget slots are free once its work is taken over, not at the lease", async () => {
    const budget = { leaseSeconds: 30, maxConcurrentRuns: 1 };
    const b = createHarness({ start: T0, policy: budget, replicaId: "replica-b" });
    const a = createHarness({
      store: b.store,
      clock: new VirtualClock(t0),
      policy: budget,
      replicaId: "replica-a",
    });
    const first = await b.create({ schedule: hourly });
    const second = await b.create({ schedule: { type: "interval", every: "PT1H", start_at: T0 } });
    // A takes the budget's one slot with the first task's run, and dies; B cannot launch the second's.
    await a.at(t0 + HOUR);
    const [held] = await b.runs(first.id);
    expect(held).toMatchObject({ status: "running", claimedBy: "replica-a" });
    await b.at(t0 + HOUR + 5 * SECOND);
    expect(await b.runs(second.id)).toMatchObject([{ status: "queued" }]);
    // A liveness timeout later the run is lost, its slot free, and B launches the second task's run.
    await b.at(t0 + HOUR + 11 * SECOND);
    expect(await b.run(held!.id)).toMatchObject({ status: "failed", reason: "replica_lost" });
    expect(await b.runs(second.id)).toMatchObject([{ status: "running", claimedBy: "replica-b" }]);
  });

  it("a process restarted under the same replica id loses the handler runs its predecessor left", async () => {
    const before = createHarness({ start: T0, policy, replicaId: "pod-0" });
    const task = await before.create({
      schedule: hourly,
      options: { retry: { max_attempts: 2, initial: "PT1S" } },
    });
    await before.at(t0 + HOUR);
    const [run] = await before.runs(task.id);
    expect(run).toMatchObject({ status: "running", claimedBy: "pod-0", attempt: 1 });
    // The process dies and a new one starts at once under the same id (a pod's name): its heartbeat is
    // fresh, so no silence would show the run; it runs no handler yet, so the run is its predecessor's.
    const after = createHarness({
      store: before.store,
      clock: before.clock,
      policy,
      replicaId: "pod-0",
      inProcess: {
        running: 0,
        settled: () => Promise.resolve(),
        abandon: () => undefined,
        runsHere: () => false,
      },
    });
    await after.at(t0 + HOUR + SECOND);
    expect(await after.run(run!.id)).toMatchObject({ status: "queued", failures: 1 });
    expect(after.logger.at("warn")).toContain(
      "handler runs an earlier process with this replica id left running were lost",
    );
    await after.runUntil(t0 + HOUR + 10 * SECOND);
    expect(await after.run(run!.id)).toMatchObject({ status: "running", attempt: 2 });
    // Only once: the runs it launches itself later are its own.
    expect(after.logger.at("warn")).toHaveLength(1);
  });

  it("a handler run whose replica stops heartbeating is lost and retried by another replica", async () => {
    const { a, b } = twoReplicas();
    const task = await b.create({ schedule: hourly, options: { retry: { max_attempts: 2 } } });
    await a.at(t0 + HOUR);
    const [run] = await b.runs(task.id);
    expect(run).toMatchObject({ status: "running", claimedBy: "replica-a" });
    // A dies. B keeps ticking; after the liveness timeout of silence (10 s) the run is lost and goes
    // back to the queue.
    await b.at(t0 + HOUR + 9 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({ status: "running" });
    await b.at(t0 + HOUR + 11 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({
      status: "queued",
      failures: 1,
      error: expect.stringContaining("replica") as unknown,
    });
    await b.runUntil(t0 + HOUR + 2 * 60 * SECOND);
    expect(await b.run(run!.id)).toMatchObject({
      status: "running",
      claimedBy: "replica-b",
      attempt: 2,
    });
    expectAtMostOneLaunchPerAttempt(a.launcher, b.launcher);
  });

  it("a lost handler run with no attempt left fails with reason replica_lost", async () => {
    const { a, b } = twoReplicas();
    const task = await b.create({ schedule: hourly });
    await a.at(t0 + HOUR);
    await b.at(t0 + HOUR + 31 * SECOND);
    const [run] = await b.runs(task.id);
    expect(run).toMatchObject({ status: "failed", reason: "replica_lost" });
  });
});

describe("Coordinator shutdown", () => {
  it("stop() is idempotent and drains in-flight launches, recording their outcome", async () => {
    const h = createHarness({ start: T0 });
    h.launcher.behaviour = leavePending;
    const task = await h.create({ schedule: hourly });
    h.coordinator.start();
    await flushPromises();
    await h.clock.set((t0 + HOUR) as Instant);
    expect(h.launcher.calls).toHaveLength(1);
    let done = false;
    const first = h.coordinator.stop();
    void first.then(() => (done = true));
    expect(h.coordinator.stop()).toBe(first);
    await h.clock.advance(SECOND);
    expect(done).toBe(false);
    h.launcher.calls[0]!.resolve();
    await first;
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running" });
    expect(h.coordinator.inFlight).toBe(0);
    // Stopped: no more admissions or claims, whatever time does.
    await h.clock.advance(2 * HOUR);
    expect(await h.runs(task.id)).toHaveLength(1);
  });

  it("stop() before start() resolves at once, and a start() after it starts nothing", async () => {
    const h = createHarness({ start: T0 });
    const task = await h.create({ schedule: hourly });
    let done = false;
    const first = h.coordinator.stop();
    void first.then(() => (done = true));
    // At once: without the virtual clock moving, so no drain timeout is being waited out.
    await flushPromises();
    expect(done).toBe(true);
    expect(h.coordinator.stop()).toBe(first);
    h.coordinator.start();
    await h.clock.advance(2 * HOUR);
    expect(h.launcher.calls).toHaveLength(0);
    expect(await h.runs(task.id)).toHaveLength(0);
  });
});
