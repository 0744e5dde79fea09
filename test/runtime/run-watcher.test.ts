/**
 * The run watcher on the virtual clock (docs/semantics.md#launch, docs/semantics.md#completion): running runs on a watched target are observed
 * until their verdict; an uncertain launch is reconciled by searching the target after its request's
 * timeout, never by launching again blindly: found -> the id is recorded, absent -> queued again through
 * the claim (one launch per attempt), no answer -> left running until the target answers or it times out.
 */
import { describe, expect, it } from "vitest";
import { LaunchIndeterminateError } from "../../src/domain/errors.js";
import type { RunObservation } from "../../src/domain/ports/run-launcher.js";
import type { Run } from "../../src/domain/run.js";
import type { Instant } from "../../src/domain/time.js";
import { RunWatcher } from "../../src/runtime/run-watcher.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { FakeLauncher, HOUR, MINUTE, SECOND, createHarness, leavePending } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const inOneMinute = { type: "once", run_at: new Date(t0 + MINUTE).toISOString() };
const RECONCILE_DELAY = 30 * SECOND;

/** The fake launcher of a target whose server is asked about its runs (as agent servers are). */
class WatchedLauncher extends FakeLauncher {
  readonly observed: Run[] = [];
  observation: (run: Run) => RunObservation = () => ({ kind: "active" });

  watches(): boolean {
    return true;
  }

  observe(run: Run): Promise<RunObservation> {
    this.observed.push(run);
    return Promise.resolve(this.observation(run));
  }

  reconcileDelayMs(): number {
    return RECONCILE_DELAY;
  }
}

function setUp() {
  const clock = new VirtualClock(t0);
  const launcher = new WatchedLauncher(clock);
  const h = createHarness({ clock, launcher });
  const watcher = new RunWatcher({
    recovery: h.dispatch.recovery,
    runWrites: h.dispatch.runWrites,
    launcher,
    clock,
    targetKinds: ["handler"],
    logger: h.logger,
  });
  return { h, launcher, watcher };
}

describe("RunWatcher", () => {
  it("observes a running run until the target's verdict, then records it once", async () => {
    const { h, launcher, watcher } = setUp();
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", targetRunId: `t-${run!.id}` });

    await watcher.pass();
    expect(launcher.observed).toHaveLength(1);
    expect((await h.run(run!.id)).status).toBe("running");

    launcher.observation = () => ({
      kind: "finished",
      verdict: { status: "succeeded", result: { answer: 42 } },
    });
    await watcher.pass();
    expect(await h.run(run!.id)).toMatchObject({ status: "succeeded", result: { answer: 42 } });
    expect((await h.task(task.id)).status).toBe("completed");

    // Nothing running any more: nothing is asked.
    await watcher.pass();
    expect(launcher.observed).toHaveLength(2);
  });

  it("maps a run that vanished or was interrupted on the target to cancelled", async () => {
    const { h, launcher, watcher } = setUp();
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    launcher.observation = () => ({
      kind: "finished",
      verdict: { status: "cancelled", error: "the run disappeared from the agent server" },
    });
    await watcher.pass();
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "cancelled", reason: "target_cancelled" });
  });

  it("reconciles an uncertain launch only after the request's timeout, and records the found run", async () => {
    const { h, launcher, watcher } = setUp();
    launcher.behaviour = (call) => {
      call.reject(new LaunchIndeterminateError("the connection dropped before the answer"));
    };
    launcher.finding = (run) => ({ kind: "found", targetRunId: `found-${run.id}` });
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", targetRunId: null });

    await h.clock.advance(RECONCILE_DELAY - SECOND);
    await watcher.pass();
    expect(launcher.reconciles).toHaveLength(0);

    await h.clock.advance(SECOND);
    await watcher.pass();
    expect(launcher.reconciles).toHaveLength(1);
    expect(await h.run(run!.id)).toMatchObject({
      status: "running",
      targetRunId: `found-${run!.id}`,
    });

    launcher.observation = (r) =>
      r.targetRunId === `found-${run!.id}`
        ? { kind: "finished", verdict: { status: "succeeded" } }
        : { kind: "unknown" };
    await watcher.pass();
    expect((await h.run(run!.id)).status).toBe("succeeded");
    // Never launched twice: one launch call in all.
    expect(launcher.calls).toHaveLength(1);
  });

  // Issue 17: the first question came request_timeout after the request gave up (launched_at was that
  // instant), up to twice the timeout after it was sent.
  it("asks request_timeout after the request was sent, and takes the found run's creation instant", async () => {
    const { h, launcher, watcher } = setUp();
    launcher.behaviour = leavePending;
    const createdAt = (t0 + MINUTE + 2 * SECOND) as Instant;
    launcher.finding = (run) => ({ kind: "found", targetRunId: `found-${run.id}`, createdAt });
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    await h.clock.advance(20 * SECOND);
    launcher.calls[0]!.reject(new LaunchIndeterminateError("the request timed out"));
    await h.tick();
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", targetRunId: null, launchedAt: t0 + MINUTE });

    await h.clock.advance(RECONCILE_DELAY - 20 * SECOND - SECOND);
    await watcher.pass();
    expect(launcher.reconciles).toHaveLength(0);
    await h.clock.advance(SECOND);
    await watcher.pass();
    expect(launcher.reconciles).toHaveLength(1);
    expect(await h.run(run!.id)).toMatchObject({
      targetRunId: `found-${run!.id}`,
      launchedAt: createdAt,
      deadlineAt: createdAt + HOUR,
    });
  });

  it("queues an uncertain launch the target never saw, and launches it again as a new attempt", async () => {
    const { h, launcher, watcher } = setUp();
    launcher.behaviour = (call) => {
      if (launcher.calls.length === 1) call.reject(new LaunchIndeterminateError("HTTP 502"));
      else call.resolve();
    };
    launcher.finding = () => ({ kind: "absent" });
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    await h.clock.advance(RECONCILE_DELAY);
    await watcher.pass();
    const [queued] = await h.runs(task.id);
    expect(queued).toMatchObject({ status: "queued", attempt: 1, failures: 0, targetRunId: null });

    await h.tick();
    const [relaunched] = await h.runs(task.id);
    expect(relaunched).toMatchObject({ status: "running", attempt: 2, failures: 0 });
    expect(launcher.calls.map((c) => c.run.attempt)).toEqual([1, 2]);
    expect([...launcher.launchesPerAttempt().values()].every((n) => n === 1)).toBe(true);
  });

  it("leaves an uncertain launch running while the target cannot say, until its run timeout", async () => {
    const { h, launcher, watcher } = setUp();
    launcher.behaviour = (call) => {
      call.reject(new LaunchIndeterminateError("timeout"));
    };
    const task = await h.create({ schedule: inOneMinute, options: { run_timeout: "PT10M" } });
    await h.at(t0 + MINUTE);
    for (let i = 0; i < 5; i++) {
      await h.clock.advance(MINUTE);
      await watcher.pass();
    }
    const [run] = await h.runs(task.id);
    expect(run).toMatchObject({ status: "running", targetRunId: null });
    expect(launcher.reconciles.length).toBeGreaterThanOrEqual(4);
    await h.advance(10 * MINUTE);
    expect((await h.run(run!.id)).status).toBe("timed_out");
    expect(launcher.calls).toHaveLength(1);
  });

  it("ends an uncertain launch that was asked to stop when the target shows no run", async () => {
    const { h, launcher, watcher } = setUp();
    launcher.behaviour = (call) => {
      call.reject(new LaunchIndeterminateError("HTTP 503"));
    };
    launcher.finding = () => ({ kind: "absent" });
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    const [run] = await h.runs(task.id);
    await h.tasks.cancelRun(LOCAL_ACTOR, run!.id, h.clock.now());
    await h.clock.advance(RECONCILE_DELAY);
    await watcher.pass();
    expect((await h.run(run!.id)).status).toBe("cancelled");
    expect(launcher.calls).toHaveLength(1);
  });

  it("never lets a verdict about another target run end this one", async () => {
    const { h } = setUp();
    const task = await h.create({ schedule: inOneMinute });
    await h.at(t0 + MINUTE);
    const [run] = await h.runs(task.id);
    const change = await h.dispatch.runWrites.recordTargetVerdict(
      run!.id,
      "some-older-run",
      { status: "failed", error: "old" },
      h.clock.now(),
    );
    expect(change).toBeNull();
    expect((await h.run(run!.id)).status).toBe("running");
    await h.advance(HOUR);
  });
});
