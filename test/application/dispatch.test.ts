/**
 * The dispatch use cases (reference 6.2 TestDispatchOutcomes, TestRunOnceBudget, TestRunCompletion, adapted):
 * what each launcher answer does to the run and the task, fencing, the global budget, and completion's
 * mapping onto the task, through the real services and the in-memory store.
 */
import { describe, expect, it } from "vitest";
import { createDispatch } from "../../src/application/dispatch/dispatch.js";
import type { Store } from "../../src/domain/ports/store.js";
import { fencingToken } from "../../src/domain/ids.js";
import type { RunId } from "../../src/domain/ids.js";
import type { RunRepository } from "../../src/domain/ports/run-repository.js";
import { runTaskContext } from "../../src/domain/run-change.js";
import type { CompletionVerdict, RunTaskContext } from "../../src/domain/run-change.js";
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
  RETENTION,
  retention,
} from "./harness.js";
import type { Harness } from "./harness.js";

/** A task due at 09:05 with one queued scheduled run, admitted at 09:05. */
async function admittedTask(h: Harness, input = cronInput("*/5 * * * *")) {
  const task = await createTask(h, input);
  const report = await h.dispatch.admission.admitDue(h.clock.set(minute(5)), 10);
  const run = report.queuedRuns.find((r) => r.taskId === task.id);
  if (run === undefined) throw new Error("nothing was admitted");
  return { task, run };
}

describe("RunWrites.recordLaunch", () => {
  it("records a launch on the run and the task's launch bookkeeping, leaving the version alone", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    const [claimed] = await claim(h, minute(5));
    const change = await launch(h, claimed!, minute(5, 2 * SECOND));
    expect(change!.run).toMatchObject({
      id: run.id,
      status: "running",
      attempt: 1,
      failures: 0,
      targetRunId: `target-${run.id}`,
      claimToken: null,
      claimExpiresAt: null,
      launchedAt: minute(5, 2 * SECOND),
      deadlineAt: minute(65, 2 * SECOND),
      latenessMs: 2 * SECOND,
      late: false,
      idempotencyKey: run.idempotencyKey,
    });
    expect(change!.taskLaunch).toEqual({
      lastRunAt: minute(5, 2 * SECOND),
      lastRunId: run.id,
      runCountIncrement: 1,
    });
    expect(await reload(h, task.id)).toMatchObject({
      run_count: 1,
      last_run_id: run.id,
      last_run_at: iso(minute(5, 2 * SECOND)),
      last_error: null,
      status: "enabled",
      version: task.version,
      next_run_at: iso(minute(10)),
    });
  });

  it("marks a launch later than late_after as late", async () => {
    const h = harness();
    const { run } = await admittedTask(h);
    const [claimed] = await claim(h, minute(6, SECOND));
    expect(claimed!.run.late).toBe(true);
    const change = await launch(h, claimed!, minute(6, 2 * SECOND));
    expect(change!.run).toMatchObject({ id: run.id, late: true, latenessMs: 62 * SECOND });
  });

  it("refuses a manual trigger while the task has an active run under skip, recording nothing", async () => {
    const h = harness();
    const { task } = await admittedTask(h);
    const wakes = h.signals.wakes;
    // Queued ...
    await expect(
      h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k1" }, minute(5)),
    ).rejects.toMatchObject({
      code: "run_active",
    });
    // ... and running.
    await claimAndLaunch(h, minute(5));
    await expect(
      h.tasks.trigger(ALICE, task.id, { idempotencyKey: "k2" }, minute(6)),
    ).rejects.toMatchObject({ code: "run_active" });
    const runs = await history(h, ALICE, task.id);
    expect(runs.map((r) => r.trigger)).toEqual(["scheduled"]);
    expect(h.signals.wakes).toBe(wakes);
    expect(await reload(h, task.id)).toMatchObject({ run_count: 1 });
  });

  it("records a scheduled occurrence that overlaps an active run as a skipped tombstone, never claimed", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    await claimAndLaunch(h, minute(5));
    const report = await h.dispatch.admission.admitDue(minute(10), 10);
    expect(report).toMatchObject({ decisions: 1, skipped: 1, queuedRuns: [] });
    const [tombstone] = await history(h, ALICE, task.id);
    expect(tombstone).toMatchObject({
      trigger: "scheduled",
      scheduled_for: iso(minute(10)),
      status: "skipped",
      reason: "overlap",
      attempt: 0,
      launched_at: null,
      finished_at: iso(minute(10)),
    });
    await h.dispatch.runWrites.recordCompletion(run.id, { status: "succeeded" }, minute(11));
    expect(await claim(h, minute(11))).toEqual([]);
    expect(await reloadRun(h, tombstone!.id)).toEqual(tombstone);
    expect(await reload(h, task.id)).toMatchObject({ run_count: 1, last_error: null });
  });

  it("queues a certainly failed launch again with backoff while retries are left, keeping its idempotency key", async () => {
    const h = harness();
    const { task, run } = await admittedTask(
      h,
      cronInput("*/5 * * * *", {
        options: { retry: { max_attempts: 3, initial: "PT10S", max_delay: "PT1M" } },
      }),
    );
    h.launcher.answer({ kind: "failed" }, { kind: "failed" }, { kind: "failed" });

    const [first] = await claim(h, minute(5));
    const retried = (await launch(h, first!, minute(5, SECOND)))!.run;
    expect(retried).toMatchObject({
      id: run.id,
      status: "queued",
      attempt: 1,
      failures: 1,
      claimToken: null,
      launchedAt: null,
      idempotencyKey: run.idempotencyKey,
      queuedAt: run.queuedAt,
      error: "400: the target refused the input",
    });
    const backoff = retried.notBefore - minute(5, SECOND);
    expect(backoff).toBeGreaterThanOrEqual(10 * SECOND);
    expect(backoff).toBeLessThanOrEqual(15 * SECOND);
    expect(await reload(h, task.id)).toMatchObject({ run_count: 0, last_error: null });

    // Not before the backoff.
    expect(await claim(h, (retried.notBefore - 1) as typeof retried.notBefore)).toEqual([]);
    const [second] = await claim(h, retried.notBefore);
    expect(second!.run).toMatchObject({ id: run.id, attempt: 2, failures: 1 });
    const again = (await launch(h, second!, retried.notBefore))!.run;
    expect(again).toMatchObject({ status: "queued", failures: 2 });
    expect(again.notBefore - retried.notBefore).toBeGreaterThanOrEqual(20 * SECOND);
    expect(again.notBefore - retried.notBefore).toBeLessThanOrEqual(30 * SECOND);

    // The last attempt fails for good.
    const [third] = await claim(h, again.notBefore);
    const failed = (await launch(h, third!, again.notBefore))!.run;
    expect(failed).toMatchObject({
      status: "failed",
      reason: "launch_failed",
      attempt: 3,
      failures: 3,
      finishedAt: again.notBefore,
    });
    expect(h.launcher.launches.map((r) => r.idempotencyKey)).toEqual([
      run.idempotencyKey,
      run.idempotencyKey,
      run.idempotencyKey,
    ]);
    expect(await reload(h, task.id)).toMatchObject({
      status: "enabled",
      run_count: 0,
      last_error: "400: the target refused the input",
    });
  });

  it("fails a once task whose launch certainly failed with no retry left", async () => {
    const h = harness();
    const task = await createTask(h, onceInput(minute(5)));
    await h.dispatch.admission.admitDue(minute(5), 10);
    h.launcher.answer({ kind: "failed" });
    const [claimed] = await claim(h, minute(5));
    const change = await launch(h, claimed!, minute(5, SECOND));
    expect(change!.run).toMatchObject({ status: "failed", reason: "launch_failed", failures: 1 });
    expect(await reload(h, task.id)).toMatchObject({
      status: "failed",
      next_run_at: null,
      last_error: "400: the target refused the input",
      run_count: 0,
    });
  });

  it("puts a busy launch back in its FIFO place with not_before pushed, counting no failure", async () => {
    const h = harness();
    h.threads.add(ALICE.owner, "agent:main", "thread-1");
    const task = await createTask(
      h,
      cronInput("0 0 1 1 *", {
        context: { mode: "reuse_thread", thread_id: "thread-1" },
        options: { overlap: "allow_all" },
      }),
    );
    const older = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "older" }, minute(1));
    const newer = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "newer" }, minute(2));
    h.launcher.answer({ kind: "busy" });

    // One run per thread: the head of the thread's FIFO only.
    const [claimed, ...others] = await claim(h, minute(3));
    expect(others).toEqual([]);
    expect(claimed!.run.id).toBe(older.id);
    const busy = (await launch(h, claimed!, minute(3, SECOND)))!.run;
    expect(busy).toMatchObject({
      id: older.id,
      status: "queued",
      attempt: 1,
      failures: 0,
      claimToken: null,
      notBefore: minute(3, SECOND + h.policy.busyBackoffMs),
      queuedAt: minute(1),
    });
    expect(await reload(h, task.id)).toMatchObject({ run_count: 0, last_error: null });

    // The newer run does not overtake it while it waits out the backoff.
    expect(await claim(h, minute(3, 2 * SECOND))).toEqual([]);
    const [retry] = await claim(h, busy.notBefore);
    expect(retry!.run).toMatchObject({ id: older.id, attempt: 2, failures: 0 });
    await launch(h, retry!, busy.notBefore);
    expect((await reloadRun(h, older.id)).status).toBe("running");
    expect((await reloadRun(h, newer.id)).status).toBe("queued");
  });

  it("treats an indeterminate launch as running with no target run id, and never launches it again", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    h.launcher.answer({ kind: "indeterminate" });
    const [claimed] = await claim(h, minute(5));
    const change = await launch(h, claimed!, minute(5, SECOND));
    expect(change!.run).toMatchObject({
      status: "running",
      targetRunId: null,
      launchedAt: minute(5, SECOND),
      claimToken: null,
    });
    expect(change!.run.error).toMatch(/treated as launched/);
    expect(await reload(h, task.id)).toMatchObject({ run_count: 1, last_run_id: run.id });

    // Long after the lease: not claimable, not an expired claim; only its deadline or a verdict ends it.
    const later = minute(30);
    expect(await claim(h, later)).toEqual([]);
    expect(await h.dispatch.recovery.expiredClaims(later, 10)).toEqual([]);
    expect(h.launcher.launches).toHaveLength(1);
    const done = await h.dispatch.runWrites.recordCompletion(
      run.id,
      { status: "succeeded" },
      later,
    );
    expect(done!.run.status).toBe("succeeded");
  });

  it("flags a launcher that answers for another thread without moving the bookkeeping", async () => {
    const h = harness();
    h.threads.add(ALICE.owner, "agent:main", "thread-1");
    await admittedTask(
      h,
      cronInput("*/5 * * * *", { context: { mode: "reuse_thread", thread_id: "thread-1" } }),
    );
    h.launcher.answer({ kind: "launched", threadId: "thread-elsewhere" });
    const [claimed] = await claim(h, minute(5));
    const change = await launch(h, claimed!, minute(5));
    expect(change!.run).toMatchObject({ status: "running", threadId: "thread-1" });
    expect(change!.run.error).toMatch(/thread-elsewhere/);
  });

  it("refuses a launch write carrying a superseded claim token and changes nothing", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    const [first] = await claim(h, minute(5));
    // The claim expires; the target shows no run; the run is claimed again by another replica.
    const expiry = first!.run.claimExpiresAt!;
    const [expired] = await h.dispatch.recovery.expiredClaims((expiry + 1) as typeof expiry, 10);
    await h.dispatch.recovery.recordReconciliation(
      run.id,
      expired!.run.claimToken!,
      { kind: "absent" },
      (expiry + 1) as typeof expiry,
    );
    const [second] = await claim(h, (expiry + 2) as typeof expiry, { replicaId: "replica-b" });
    expect(second!.run.claimToken).not.toBe(first!.run.claimToken);

    // The first replica's launch answer arrives late.
    await expect(
      h.dispatch.runWrites.recordLaunch(
        run.id,
        first!.run.claimToken!,
        { kind: "launched", targetRunId: "late" },
        (expiry + 3) as typeof expiry,
      ),
    ).rejects.toMatchObject({ code: "lease_lost" });
    await expect(
      h.dispatch.runWrites.recordLaunch(
        run.id,
        fencingToken("never-issued"),
        { kind: "failed", message: "x" },
        (expiry + 3) as typeof expiry,
      ),
    ).rejects.toMatchObject({ code: "lease_lost" });
    const stored = await h.store.runs.findRun({ kind: "all" }, run.id);
    expect(stored).toEqual(second!.run);
    expect(await reload(h, task.id)).toMatchObject({ run_count: 0, last_run_id: null });
  });
});

describe("AdmitDue.admitDue", () => {
  it("completes a cron task at max_runs while its last run finishes normally", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", {
        schedule: { type: "cron", cron: "*/5 * * * *", timezone: "UTC", max_runs: 2 },
      }),
    );
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [first] = await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(first!.id, { status: "succeeded" }, minute(6));
    const report = await h.dispatch.admission.admitDue(minute(10), 10);
    expect(report.queuedRuns).toHaveLength(1);
    expect(await reload(h, task.id)).toMatchObject({
      status: "completed",
      next_run_at: null,
      admitted_count: 2,
    });
    expect(await h.dispatch.wakeUps.nextWakeAt()).toBe(minute(10));
    const [last] = await claimAndLaunch(h, minute(10));
    await h.dispatch.runWrites.recordCompletion(
      last!.id,
      { status: "failed", error: "late" },
      minute(11),
    );
    expect(await reload(h, task.id)).toMatchObject({
      status: "completed",
      run_count: 2,
      last_error: "late",
    });
    expect((await h.dispatch.admission.admitDue(minute(15), 10)).tasks).toBe(0);
  });

  it("asks the active run to stop under cancel_other, and holds the new run until it ends", async () => {
    const h = harness();
    await createTask(h, cronInput("*/5 * * * *", { options: { overlap: "cancel_other" } }));
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    const report = await h.dispatch.admission.admitDue(minute(10), 10);
    expect(
      report.cancellations.map((r) => [r.id, r.status, r.reason, r.cancelRequestedAt]),
    ).toEqual([[running!.id, "running", "superseded", minute(10)]]);
    const [successor] = report.queuedRuns;
    expect(await claim(h, minute(10))).toEqual([]);
    await h.dispatch.runWrites.recordCompletion(running!.id, { status: "cancelled" }, minute(11));
    const [claimed] = await claim(h, minute(11));
    expect(claimed!.run.id).toBe(successor!.id);
  });

  // docs/semantics.md#task-operations: the policy acts on a manual trigger as on any occurrence. It used to queue the manual run
  // behind the running one and leave that run alone (expected cancel_requested_at set, got null).
  it("asks the active run to stop when a manual trigger arrives under cancel_other", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "cancel_other" } }),
    );
    await h.dispatch.admission.admitDue(minute(5), 10);
    const [running] = await claimAndLaunch(h, minute(5));
    const manual = await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "now" }, minute(6));
    expect(manual.status).toBe("queued");
    const stopping = await h.store.runs.findRun({ kind: "all" }, running!.id);
    expect(stopping).toMatchObject({
      status: "running",
      reason: "superseded",
      cancelRequestedAt: minute(6),
    });
    expect(h.signals.cancelRequests.map((c) => c.run.id)).toEqual([running!.id]);
    // A repeat of the same trigger is that trigger: nothing more is asked to stop.
    await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "now" }, minute(7));
    expect(h.signals.cancelRequests).toHaveLength(1);
    expect(await claim(h, minute(7))).toEqual([]);
    await h.dispatch.runWrites.recordCompletion(running!.id, { status: "cancelled" }, minute(8));
    const [claimed] = await claim(h, minute(8));
    expect(claimed!.run.id).toBe(manual.id);
  });

  it("cancels a queued run when a manual trigger arrives under cancel_other, and leaves skip alone", async () => {
    const h = harness();
    const task = await createTask(
      h,
      cronInput("*/5 * * * *", { options: { overlap: "cancel_other" } }),
    );
    const [queued] = (await h.dispatch.admission.admitDue(minute(5), 10)).queuedRuns;
    await h.tasks.trigger(ALICE, task.id, { idempotencyKey: "now" }, minute(6));
    expect(await h.store.runs.findRun({ kind: "all" }, queued!.id)).toMatchObject({
      status: "cancelled",
      reason: "superseded",
    });
    const other = await createTask(
      h,
      cronInput("*/5 * * * *", { title: "buffered", options: { overlap: "buffer_all" } }),
    );
    const [kept] = (await h.dispatch.admission.admitDue(minute(10), 10)).queuedRuns.filter(
      (r) => r.taskId === other.id,
    );
    await h.tasks.trigger(ALICE, other.id, { idempotencyKey: "now" }, minute(11));
    expect((await h.store.runs.findRun({ kind: "all" }, kept!.id))?.status).toBe("queued");
  });
});

describe("ClaimRuns.claim and the global budget", () => {
  it("claims nothing while max_concurrent_runs runs are launching or running, manual runs included", async () => {
    const h = harness({ policy: { maxConcurrentRuns: 2 } });
    const a = await createTask(h, cronInput("*/5 * * * *", { title: "a" }));
    const b = await createTask(h, cronInput("*/5 * * * *", { title: "b" }));
    const c = await createTask(h, cronInput("*/5 * * * *", { title: "c" }));
    const d = await createTask(h, cronInput("0 0 1 1 *", { title: "d" }));
    const report = await h.dispatch.admission.admitDue(minute(5), 10);
    expect(report.queuedRuns).toHaveLength(3);

    const claimed = await claim(h, minute(5));
    expect(claimed.map((x) => x.task.id)).toEqual([a.id, b.id]);
    // One launched, one still launching: both hold a slot.
    await launch(h, claimed[0]!, minute(5, SECOND));
    expect(await claim(h, minute(5, 2 * SECOND))).toEqual([]);

    // A manual run waits for the budget like any other.
    const manual = await h.tasks.trigger(ALICE, d.id, { idempotencyKey: "now" }, minute(6));
    expect(manual.status).toBe("queued");
    expect(await claim(h, minute(6, SECOND))).toEqual([]);

    // A finished run frees one slot: the oldest queued run takes it.
    await h.dispatch.runWrites.recordCompletion(
      claimed[0]!.run.id,
      { status: "succeeded" },
      minute(7),
    );
    const next = await claim(h, minute(7));
    expect(next.map((x) => x.task.id)).toEqual([c.id]);
    expect(await claim(h, minute(7, SECOND))).toEqual([]);

    await launch(h, claimed[1]!, minute(7, 2 * SECOND));
    await h.dispatch.runWrites.recordCompletion(
      claimed[1]!.run.id,
      { status: "failed" },
      minute(8),
    );
    const last = await claim(h, minute(8));
    expect(last.map((x) => x.run.id)).toEqual([manual.id]);
  });

  it("claims only into the remaining budget, and no more than the limit asked", async () => {
    const h = harness({ policy: { maxConcurrentRuns: 3 } });
    const running = await createTask(h, cronInput("*/5 * * * *", { title: "running" }));
    await h.dispatch.admission.admitDue(minute(5), 10);
    await claimAndLaunch(h, minute(5));
    for (const title of ["w", "x", "y", "z"]) {
      await createTask(h, cronInput("*/10 * * * *", { title }));
    }
    const report = await h.dispatch.admission.admitDue(minute(10), 10);
    // The running task's 09:10 is skipped for overlap; four others are queued.
    expect(report).toMatchObject({ tasks: 5, skipped: 1 });
    expect(report.queuedRuns).toHaveLength(4);
    expect(await claim(h, minute(10), { limit: 1 })).toHaveLength(1);
    expect(await claim(h, minute(10), { limit: 10 })).toHaveLength(1);
    expect(await claim(h, minute(10), { limit: 10 })).toEqual([]);
    expect((await reload(h, running.id)).run_count).toBe(1);
  });
});

describe("RunWrites.recordCompletion", () => {
  const cases: [CompletionVerdict, string, string | null][] = [
    [{ status: "succeeded", result: { ok: true } }, "completed", null],
    [{ status: "failed", error: "the agent crashed" }, "failed", "the agent crashed"],
    [{ status: "cancelled", error: "interrupted" }, "cancelled", "interrupted"],
  ];

  it.each(cases)(
    "maps a once task's %o verdict to task status %s",
    async (verdict, taskStatus, lastError) => {
      const h = harness();
      const task = await createTask(h, onceInput(minute(5)));
      await h.dispatch.admission.admitDue(minute(5), 10);
      // The once task waits, enabled, for its run's verdict.
      expect(await reload(h, task.id)).toMatchObject({ status: "enabled", next_run_at: null });
      const [launched] = await claimAndLaunch(h, minute(5));
      const change = await h.dispatch.runWrites.recordCompletion(launched!.id, verdict, minute(6));
      expect(change!.run.status).toBe(verdict.status);
      expect(change!.run.finishedAt).toBe(minute(6));
      expect(await reload(h, task.id)).toMatchObject({
        status: taskStatus,
        last_error: lastError,
        run_count: 1,
        version: task.version,
      });
    },
  );

  it("keeps a cron task's status and records last_error, cleared by the next success", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    await claimAndLaunch(h, minute(5));
    const failed = await h.dispatch.runWrites.recordCompletion(
      run.id,
      { status: "failed", error: "boom", result: { partial: 1 } },
      minute(6),
    );
    expect(failed!.run).toMatchObject({
      status: "failed",
      reason: "target_failed",
      error: "boom",
      result: { partial: 1 },
    });
    expect(await reload(h, task.id)).toMatchObject({
      status: "enabled",
      last_error: "boom",
      next_run_at: iso(minute(10)),
    });

    const next = await h.dispatch.admission.admitDue(minute(10), 10);
    expect(next.queuedRuns).toHaveLength(1);
    const [launched] = await claimAndLaunch(h, minute(10));
    await h.dispatch.runWrites.recordCompletion(launched!.id, { status: "succeeded" }, minute(11));
    expect(await reload(h, task.id)).toMatchObject({
      status: "enabled",
      last_error: null,
      run_count: 2,
    });
  });

  it("keeps the first verdict: a late completion only records its result", async () => {
    const h = harness();
    const { run } = await admittedTask(h);
    await claimAndLaunch(h, minute(5));
    await h.dispatch.runWrites.recordCompletion(
      run.id,
      { status: "failed", error: "first" },
      minute(6),
    );
    const late = await h.dispatch.runWrites.recordCompletion(
      run.id,
      { status: "succeeded", result: "late" },
      minute(7),
    );
    expect(late!.run).toMatchObject({ status: "failed", error: "first", result: "late" });
    expect(late!.taskVerdict).toBeUndefined();
  });

  // BUG: docs/semantics.md#the-life-of-a-run (`reason` says why a run is cancelled) and docs/semantics.md "Reasons" (`superseded`:
  // overlap cancel_other replaced this run; `task_deleted`: a run whose task was deleted;
  // `cancel_requested`: its owner cancelled the run). A running run asked to stop keeps the reason it was
  // asked (cancelRun), but completeRun overwrites it with `cancel_requested` when the target confirms.
  // Expected: the confirmed run ends cancelled with reason `superseded` / `task_deleted`.
  // Actual: reason `cancel_requested`, i.e. the history says the owner cancelled it.
  it.each([
    ["superseded by cancel_other", "superseded"],
    ["asked to stop by a forced delete", "task_deleted"],
  ])(
    "keeps why a running run was asked to stop when its target confirms (%s)",
    async (_why, reason) => {
      const h = harness();
      const overlap = reason === "superseded" ? "cancel_other" : "skip";
      const task = await createTask(h, cronInput("*/5 * * * *", { options: { overlap } }));
      await h.dispatch.admission.admitDue(minute(5), 10);
      const [running] = await claimAndLaunch(h, minute(5));
      if (reason === "superseded") await h.dispatch.admission.admitDue(minute(10), 10);
      else await h.tasks.delete(ALICE, task.id, { force: true }, minute(10));
      const asked = await h.store.runs.findRun({ kind: "all" }, running!.id);
      expect(asked).toMatchObject({ status: "running", reason, cancelRequestedAt: minute(10) });
      const change = await h.dispatch.runWrites.recordCompletion(
        running!.id,
        { status: "cancelled" },
        minute(11),
      );
      expect(change!.run).toMatchObject({ status: "cancelled", reason });
    },
  );

  it("finalizes the run of a task deleted mid-flight", async () => {
    const h = harness();
    const { task, run } = await admittedTask(h);
    await claimAndLaunch(h, minute(5));
    await expect(h.tasks.delete(ALICE, task.id, {}, minute(6))).rejects.toMatchObject({
      code: "task_not_mutable",
    });
    await h.tasks.delete(ALICE, task.id, { force: true }, minute(6));
    expect(h.signals.cancelRequests.map((r) => [r.run.id, r.run.reason])).toEqual([
      [run.id, "task_deleted"],
    ]);
    await expect(h.tasks.get(ADMIN, task.id)).rejects.toMatchObject({ code: "not_found" });
    // Nothing of it is admitted any more; its run's rows stay until the verdict lands.
    expect((await h.dispatch.admission.admitDue(minute(10), 10)).tasks).toBe(0);
    expect(await h.dispatch.recovery.purge(minute(10), retention(0), 100)).toBe(0);

    const change = await h.dispatch.runWrites.recordCompletion(
      run.id,
      { status: "succeeded", result: "late" },
      minute(11),
    );
    expect(change!.run).toMatchObject({
      status: "succeeded",
      result: "late",
      finishedAt: minute(11),
      cancelRequestedAt: minute(6),
    });
    expect(await h.store.runs.findRun({ kind: "all" }, run.id)).toEqual(change!.run);
    // Now nothing is active: the task's rows go.
    expect(await h.dispatch.recovery.purge(minute(12), RETENTION, 100)).toBe(2);
    expect(await h.store.runs.findRun({ kind: "all" }, run.id)).toBeNull();
  });

  it("keeps a cron task's newer schedule and launch fields when a launch lands between a completion's read and its write", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("* * * * *", { options: { overlap: "allow_all" } }));
    await h.dispatch.admission.admitDue(minute(1), 10);
    const [first] = await claimAndLaunch(h, minute(1, SECOND));
    let second: RunId | undefined;

    // A store whose completion reads the task, lets admission and a launch land, then writes.
    const stale = interleavingStore(h.store, async () => {
      await h.dispatch.admission.admitDue(minute(2), 10);
      const [launched] = await claimAndLaunch(h, minute(2, SECOND));
      second = launched!.id;
    });
    const completing = createDispatch({ store: stale, policy: h.policy });
    await completing.runWrites.recordCompletion(
      first!.id,
      { status: "failed", error: "boom" },
      minute(2, 2 * SECOND),
    );

    expect(second).toBeDefined();
    expect(await reload(h, task.id)).toMatchObject({
      status: "enabled",
      last_error: "boom",
      run_count: 2,
      last_run_id: second,
      last_run_at: iso(minute(2, SECOND)),
      next_run_at: iso(minute(3)),
      decided_through: iso(minute(2)),
      admitted_count: 2,
      version: task.version,
    });
    expect((await reloadRun(h, first!.id)).status).toBe("failed");
    const next = await h.dispatch.admission.admitDue(minute(3), 10);
    expect(next.queuedRuns.map((r) => r.scheduledFor)).toEqual([minute(3)]);
  });
});

/**
 * The store seen by a completion that reads its task, then lets `between` happen, then writes: the
 * completion decides from what it read before.
 */
function interleavingStore(store: Store, between: () => Promise<void>): Store {
  const runs = store.runs;
  const changeRuns: RunRepository["changeRuns"] = async (requests) => {
    const read = new Map<RunId, RunTaskContext>();
    for (const { id } of requests) {
      const run = await runs.findRun({ kind: "all" }, id);
      const task = run === null ? null : await store.tasks.findTask({ kind: "all" }, run.taskId);
      if (task !== null) read.set(id, runTaskContext(task));
    }
    await between();
    return runs.changeRuns(
      requests.map((request) => ({
        ...request,
        decide: (current, task) => request.decide(current, read.get(request.id) ?? task),
      })),
    );
  };
  const wrapped: RunRepository = {
    findRun: (scope, id) => runs.findRun(scope, id),
    findManualRun: (taskId, key) => runs.findManualRun(taskId, key),
    findRunWithTask: (id) => runs.findRunWithTask(id),
    countRecentRuns: (owner, trigger, since) => runs.countRecentRuns(owner, trigger, since),
    listRuns: (scope, taskId, query) => runs.listRuns(scope, taskId, query),
    searchRuns: (scope, search) => runs.searchRuns(scope, search),
    claimRuns: (request, select, claimOne) => runs.claimRuns(request, select, claimOne),
    findRunningRuns: (kind, after, limit) => runs.findRunningRuns(kind, after, limit),
    changeRuns,
    findExpiredClaims: (now, limit) => runs.findExpiredClaims(now, limit),
    findPastDeadline: (now, limit) => runs.findPastDeadline(now, limit),
    findQueueTimeouts: (now, limit) => runs.findQueueTimeouts(now, limit),
    findLostHandlerRuns: (since, limit) => runs.findLostHandlerRuns(since, limit),
    findUnservedHandlerRuns: (dueBefore, served, limit) =>
      runs.findUnservedHandlerRuns(dueBefore, served, limit),
    purge: (before, limit) => runs.purge(before, limit),
    nextRunWakeAt: () => runs.nextRunWakeAt(),
    queueStats: (now) => runs.queueStats(now),
  };
  return {
    kind: store.kind,
    tasks: store.tasks,
    runs: wrapped,
    replicas: store.replicas,
    migrate: () => store.migrate(),
    migrationStatus: () => store.migrationStatus(),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
