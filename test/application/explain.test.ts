/**
 * `explain` through the TaskService on the in-memory store: the history admission and launches really
 * wrote, read back as a verdict for an instant (docs/semantics.md#task-operations).
 */
import { describe, expect, it } from "vitest";
import { instant } from "../../src/domain/time.js";
import {
  ALICE,
  BOB,
  HOUR,
  SECOND,
  claimAndLaunch,
  createTask,
  cronInput,
  harness,
  iso,
  minute,
} from "./harness.js";

describe("TaskService.explain", () => {
  it("says an occurrence was launched as run R, and the next one skipped for overlap", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    const admitted = await h.dispatch.admission.admitDue(h.clock.set(minute(5)), 10);
    const queued = admitted.queuedRuns[0]!;
    await claimAndLaunch(h, h.clock.advance(2 * SECOND));
    await h.dispatch.admission.admitDue(h.clock.set(minute(10)), 10);

    const launched = await h.tasks.explain(ALICE, task.id, iso(minute(5)), minute(11));
    expect(launched).toMatchObject({
      at: iso(minute(5)),
      task_status: "enabled",
      verdict: "launched",
      occurrence: { scheduled_for: iso(minute(5)), local_wall: "2030-01-07T09:05:00" },
      next_occurrence: { scheduled_for: iso(minute(10)) },
      run: { id: queued.id, status: "running", lateness_ms: 2000, late: false },
    });
    expect(launched.message).toContain(`launched as run ${queued.id}`);

    const skipped = await h.tasks.explain(ALICE, task.id, iso(minute(12)), minute(12));
    expect(skipped).toMatchObject({
      verdict: "skipped",
      occurrence: { scheduled_for: iso(minute(10)) },
      run: { status: "skipped", reason: "overlap" },
    });
    expect(skipped.message).toMatch(/still had an active run/);
  });

  it("gives the missed range while no replica was up, and the window beyond it", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    // Nobody admits until 11:05: 09:05-10:00 are outside the 1 h window, 10:05-11:00 missed while down.
    await h.dispatch.admission.admitDue(h.clock.set(minute(125)), 10);

    const down = await h.tasks.explain(ALICE, task.id, iso(minute(90)), minute(126));
    expect(down).toMatchObject({
      verdict: "missed",
      occurrence: { scheduled_for: iso(minute(90)) },
      run: {
        status: "missed",
        reason: "down",
        scheduled_for: iso(minute(65)),
        missed_until: iso(minute(120)),
        missed_count: 12,
      },
    });
    expect(down.message).toMatch(/covers 12 nominal times/);

    const window = await h.tasks.explain(ALICE, task.id, iso(minute(30, 10 * SECOND)), minute(126));
    expect(window).toMatchObject({
      verdict: "missed",
      run: { reason: "window", scheduled_for: iso(minute(5)), missed_until: iso(minute(60)) },
    });
    expect(window.message).toMatch(/beyond the catch-up window/);
  });

  it("says paused for a time after the pause, then missed (paused) after a resume", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await h.tasks.pause(ALICE, task.id, {}, h.clock.set(minute(2)));

    const paused = await h.tasks.explain(ALICE, task.id, iso(minute(10)), minute(12));
    expect(paused).toMatchObject({ verdict: "paused", task_status: "paused", run: null });

    await h.tasks.resume(ALICE, task.id, { catchUp: "none" }, h.clock.set(minute(17)));
    const resumed = await h.tasks.explain(ALICE, task.id, iso(minute(10)), minute(17));
    expect(resumed).toMatchObject({
      verdict: "missed",
      task_status: "enabled",
      run: { reason: "paused", missed_count: 3 },
    });
  });

  it("says before_start for an instant before the task existed", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 9 * * *"));
    const answer = await h.tasks.explain(ALICE, task.id, iso(minute(-60)), minute(1));
    expect(answer).toMatchObject({
      verdict: "before_start",
      next_occurrence: { scheduled_for: iso(minute(24 * 60)) },
    });
  });

  it("explains a DST gap in Europe/Berlin: 02:30 did not exist and the run fired at 03:00", async () => {
    const h = harness({ start: instant(Date.UTC(2030, 2, 30, 12)) });
    const task = await createTask(
      h,
      cronInput("30 2 * * *", {
        schedule: { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
      }),
    );
    const transition = instant(Date.UTC(2030, 2, 31, 1));
    const admitted = await h.dispatch.admission.admitDue(h.clock.set(transition), 10);
    expect(admitted.queuedRuns).toHaveLength(1);
    await claimAndLaunch(h, h.clock.advance(SECOND));

    const answer = await h.tasks.explain(
      ALICE,
      task.id,
      "2030-03-31T02:30:00+01:00",
      instant(transition + HOUR),
    );
    expect(answer).toMatchObject({
      verdict: "dst_gap",
      occurrence: {
        scheduled_for: iso(transition),
        local_wall: "2030-03-31T03:00:00",
        offset: "+02:00",
        dst_note: { kind: "gap_shifted", nominal_wall: "2030-03-31T02:30:00" },
      },
      run: { status: "running", scheduled_for: iso(transition) },
    });
    expect(answer.message).toMatch(/02:30:00 did not exist/);
  });

  it("explains a manual run around the instant", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("0 9 * * *"));
    const run = await h.tasks.trigger(ALICE, task.id, {}, h.clock.set(minute(30)));
    const answer = await h.tasks.explain(ALICE, task.id, iso(minute(30, 5 * SECOND)), minute(31));
    expect(answer).toMatchObject({ verdict: "queued", run: { id: run.id, trigger: "manual" } });
  });

  it("hides another owner's task (not_found) and refuses an instant that is not RFC 3339", async () => {
    const h = harness();
    const task = await createTask(h, cronInput("*/5 * * * *"));
    await expect(h.tasks.explain(BOB, task.id, iso(minute(5)), minute(6))).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(h.tasks.explain(ALICE, task.id, "yesterday", minute(6))).rejects.toMatchObject({
      code: "validation_failed",
    });
    await expect(h.tasks.explain(ALICE, task.id, undefined, minute(6))).rejects.toMatchObject({
      code: "validation_failed",
    });
  });
});
