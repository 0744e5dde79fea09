/**
 * The acceptance scenario of reference 6.2 (TestFullLifecycle), adapted: one cron task through create,
 * admission, claim, launch, an overlap skip, completion, pause, resume, history and delete, on the real
 * services over the in-memory store with a fake launcher. No HTTP, no timer: `now` is moved by hand.
 */
import { describe, expect, it } from "vitest";
import {
  ALICE,
  claim,
  createTask,
  cronInput,
  harness,
  history,
  iso,
  launch,
  minute,
  reload,
  SECOND,
  RETENTION,
} from "./harness.js";

describe("TaskService and the dispatch use cases together", () => {
  it("runs a cron task through its whole lifecycle", async () => {
    const h = harness();
    const { tasks, dispatch, clock } = h;

    // create at 09:00: the first occurrence is 09:05.
    const created = await createTask(h, cronInput("*/5 * * * *"));
    expect(created).toMatchObject({
      status: "enabled",
      next_run_at: iso(minute(5)),
      decided_through: iso(minute(0)),
      run_count: 0,
      admitted_count: 0,
      last_error: null,
      version: 1,
    });
    expect(await dispatch.wakeUps.nextWakeAt()).toBe(minute(5));
    // Nothing is due before its time.
    expect((await dispatch.admission.admitDue(clock.set(minute(4, 59 * SECOND)), 10)).tasks).toBe(
      0,
    );

    // admit at 09:05: one queued run.
    const admitted = await dispatch.admission.admitDue(clock.set(minute(5)), 10);
    expect(admitted).toMatchObject({ tasks: 1, decisions: 1, skipped: 0, missed: 0 });
    const [queued] = admitted.queuedRuns;
    expect(queued).toMatchObject({
      status: "queued",
      trigger: "scheduled",
      scheduledFor: minute(5),
      attempt: 0,
    });
    expect(await reload(h, created.id)).toMatchObject({
      next_run_at: iso(minute(10)),
      decided_through: iso(minute(5)),
      admitted_count: 1,
      run_count: 0,
    });

    // claim and launch: running, with the launch bookkeeping on the task.
    const [claimed] = await claim(h, clock.now);
    expect(claimed!.run).toMatchObject({ id: queued!.id, status: "launching", attempt: 1 });
    const launched = await launch(h, claimed!, clock.advance(SECOND));
    expect(launched!.run).toMatchObject({
      status: "running",
      targetRunId: `target-${queued!.id}`,
      launchedAt: minute(5, SECOND),
      latenessMs: SECOND,
      late: false,
    });
    expect(h.launcher.launches.map((run) => run.id)).toEqual([queued!.id]);
    expect(await reload(h, created.id)).toMatchObject({
      run_count: 1,
      last_run_id: queued!.id,
      last_run_at: iso(minute(5, SECOND)),
      version: 1,
    });

    // 09:10 comes due while the 09:05 run is running: skipped for overlap.
    const overlapping = await dispatch.admission.admitDue(clock.set(minute(10)), 10);
    expect(overlapping).toMatchObject({ tasks: 1, decisions: 1, skipped: 1, queuedRuns: [] });
    expect(await claim(h, clock.now)).toEqual([]);
    expect(await reload(h, created.id)).toMatchObject({
      status: "enabled",
      run_count: 1,
      last_error: null,
      next_run_at: iso(minute(15)),
      admitted_count: 1,
    });

    // complete at 09:12.
    const completed = await dispatch.runWrites.recordCompletion(
      queued!.id,
      { status: "succeeded", result: { summary: "done" } },
      clock.set(minute(12)),
    );
    expect(completed!.run).toMatchObject({
      status: "succeeded",
      finishedAt: minute(12),
      result: { summary: "done" },
    });
    expect(await reload(h, created.id)).toMatchObject({
      status: "enabled",
      last_error: null,
      run_count: 1,
    });

    // pause at 09:13: nothing is admitted while paused.
    const paused = await tasks.pause(ALICE, created.id, {}, clock.set(minute(13)));
    expect(paused).toMatchObject({ status: "paused", version: 1 });
    for (const at of [minute(15), minute(20), minute(25), minute(30)]) {
      expect((await dispatch.admission.admitDue(clock.set(at), 10)).tasks).toBe(0);
    }
    expect(await dispatch.wakeUps.nextWakeAt()).toBeNull();

    // resume at 09:31 (catch_up none): 09:15..09:30 become one missed range, reason paused.
    const resumed = await tasks.resume(ALICE, created.id, {}, clock.set(minute(31)));
    expect(resumed).toMatchObject({
      status: "enabled",
      decided_through: iso(minute(30)),
      next_run_at: iso(minute(35)),
      run_count: 1,
    });
    expect(await claim(h, clock.now)).toEqual([]);

    // history, newest first.
    const runs = await history(h, ALICE, created.id);
    expect(runs.map((run) => [run.status, run.reason, run.scheduled_for])).toEqual([
      ["missed", "paused", iso(minute(15))],
      ["skipped", "overlap", iso(minute(10))],
      ["succeeded", null, iso(minute(5))],
    ]);
    expect(runs[0]).toMatchObject({ missed_count: 4, missed_until: iso(minute(30)) });

    // The slot freed at completion: 09:35 is queued (not skipped) and claimed.
    const next = await dispatch.admission.admitDue(clock.set(minute(35)), 10);
    expect(next).toMatchObject({ tasks: 1, skipped: 0 });
    expect(next.queuedRuns.map((run) => run.scheduledFor)).toEqual([minute(35)]);
    const [again] = await claim(h, clock.now);
    expect(again!.run.id).toBe(next.queuedRuns[0]!.id);
    await launch(h, again!, clock.now);
    await dispatch.runWrites.recordCompletion(
      again!.run.id,
      { status: "succeeded" },
      clock.set(minute(36)),
    );
    expect(await reload(h, created.id)).toMatchObject({ run_count: 2, last_error: null });

    // delete: gone from the API at once.
    await tasks.delete(ALICE, created.id, {}, clock.set(minute(37)));
    await expect(tasks.get(ALICE, created.id)).rejects.toMatchObject({ code: "not_found" });
    await expect(tasks.listRuns(ALICE, created.id, { limit: 10 })).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await tasks.list(ALICE, { limit: 10 })).items).toEqual([]);
    expect((await dispatch.admission.admitDue(clock.set(minute(40)), 10)).tasks).toBe(0);
    expect(await dispatch.wakeUps.nextWakeAt()).toBeNull();
    // Its rows go when nothing of it is active.
    expect(await dispatch.recovery.purge(clock.now, RETENTION, 100)).toBe(5);
  });
});
