/**
 * The library's operations (src/application/scheduler-api.ts, docs/library.md) over the real service
 * and the memory store, with a clock moved by hand: each operation acts as its actor at the clock's
 * `now` when it is called, and its options reach the service as documented (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import {
  pauseOptionsOf,
  resumeOptionsOf,
  runQueryOf,
  schedulerApi,
  taskQueryOf,
} from "../../src/application/scheduler-api.js";
import { runSearchOf } from "../../src/application/runs/find-runs.js";
import { ValidationError } from "../../src/domain/errors.js";
import { ALICE, BOB, claimAndLaunch, cronInput, harness, iso, minute, SECOND } from "./harness.js";

function world() {
  const h = harness();
  let opened = 0;
  const open = () => {
    opened++;
    return Promise.resolve({ tasks: h.tasks, clock: { now: () => h.clock.now } });
  };
  return { h, alice: schedulerApi(ALICE, open), bob: schedulerApi(BOB, open), opens: () => opened };
}

describe("the query and option mappings", () => {
  it("passes only the filters given, with the default page size", () => {
    expect(taskQueryOf({})).toEqual({ limit: 50 });
    expect(
      taskQueryOf({
        status: "paused",
        target_kind: "agent",
        thread_id: "t-1",
        key: "k",
        group: "g",
        search: "report",
        limit: 3,
        cursor: "c",
      }),
    ).toEqual({
      limit: 3,
      status: "paused",
      targetKind: "agent",
      thread: { threadId: "t-1" },
      key: "k",
      group: "g",
      search: "report",
      cursor: "c",
    });
    expect(runQueryOf({})).toEqual({ limit: 50 });
    expect(runQueryOf({ status: "failed", trigger: "manual", limit: 200, cursor: "c" })).toEqual({
      limit: 200,
      status: "failed",
      trigger: "manual",
      cursor: "c",
    });
    expect(() => runQueryOf({ limit: 201 })).toThrow(
      expect.objectContaining({ code: "limit_exceeded" }),
    );
    expect(pauseOptionsOf({})).toEqual({});
    expect(pauseOptionsOf({ cancel_running: false })).toEqual({ cancelRunning: false });
    expect(resumeOptionsOf({})).toEqual({});
    expect(resumeOptionsOf({ catch_up: "all" })).toEqual({ catchUp: "all" });
  });

  it("reads a run search's filters and refuses each bad one by name", () => {
    expect(runSearchOf({})).toEqual({ limit: 50 });
    expect(
      runSearchOf({
        status: ["failed", "timed_out"],
        task_id: "task-1",
        target_kind: "webhook",
        trigger: "scheduled",
        late: false,
        scheduled_after: "2030-01-07T09:00:00Z",
        scheduled_before: "2030-01-07T10:00:00Z",
        finished_after: "2030-01-07T09:00:00Z",
        finished_before: "2030-01-07T11:00:00Z",
        limit: 10,
        cursor: "c",
      }),
    ).toMatchObject({
      limit: 10,
      statuses: ["failed", "timed_out"],
      taskId: "task-1",
      targetKind: "webhook",
      trigger: "scheduled",
      late: false,
      scheduledAfter: minute(0),
      scheduledBefore: minute(60),
      finishedAfter: minute(0),
      finishedBefore: minute(120),
      cursor: "c",
    });
    expect(runSearchOf({ status: "queued" })).toMatchObject({ statuses: ["queued"] });
    let thrown: unknown;
    try {
      runSearchOf({
        status: "lost" as never,
        task_id: "",
        target_kind: "fax" as never,
        trigger: "cron" as never,
        late: "yes" as never,
        scheduled_after: "2030-01-07T10:00:00Z",
        scheduled_before: "2030-01-07T09:00:00Z",
        finished_after: "yesterday",
        finished_before: 5 as never,
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as ValidationError).errors.map((e) => e.field).sort()).toEqual(
      [
        "status",
        "task_id",
        "target_kind",
        "trigger",
        "late",
        "scheduled_before",
        "finished_after",
        "finished_before",
      ].sort(),
    );
  });
});

describe("schedulerApi", () => {
  it("runs a task's whole life through the library's operations, at the clock's now", async () => {
    const { h, alice, bob, opens } = world();
    const { task } = await alice.tasks.create(
      cronInput("0 * * * *", { key: "hourly", title: "Hourly" }),
    );
    expect(opens()).toBe(1);
    expect(task).toMatchObject({ key: "hourly", status: "enabled", next_run_at: iso(minute(60)) });
    expect(await alice.tasks.get(task.id)).toMatchObject({ id: task.id });
    expect(await alice.tasks.getByKey("hourly")).toMatchObject({ id: task.id });
    await expect(bob.tasks.get(task.id)).rejects.toMatchObject({ code: "not_found" });
    expect((await alice.tasks.list({ key: "hourly" })).items.map((t) => t.id)).toEqual([task.id]);
    expect((await bob.tasks.list()).items).toEqual([]);

    const [many] = await alice.tasks.createMany([cronInput("30 * * * *", { title: "Half past" })]);
    expect(many?.task.title).toBe("Half past");

    const updated = await alice.tasks.update(
      task.id,
      { title: "Hourly report" },
      { version: task.version },
    );
    expect(updated.task.title).toBe("Hourly report");
    await expect(
      alice.tasks.update(task.id, { title: "stale" }, { version: task.version }),
    ).rejects.toMatchObject({ code: "version_conflict" });
    const upserted = await alice.tasks.upsert(
      cronInput("0 * * * *", { key: "hourly", title: "Upserted" }),
    );
    expect(upserted.task).toMatchObject({ id: task.id, title: "Upserted" });

    expect((await alice.tasks.preview(task.id, 2)).occurrences.map((o) => o.at)).toEqual([
      iso(minute(60)),
      iso(minute(120)),
    ]);
    expect(await alice.tasks.explain(task.id, iso(minute(60)))).toMatchObject({
      at: iso(minute(60)),
      task_status: "enabled",
    });

    // Run now, with a key: a repeat answers the first run.
    h.clock.set(minute(5));
    const run = await alice.tasks.trigger(task.id, { idempotency_key: "once" });
    expect(run).toMatchObject({ trigger: "manual", status: "queued", queued_at: iso(minute(5)) });
    expect((await alice.tasks.trigger(task.id, { idempotency_key: "once" })).id).toBe(run.id);
    expect(await alice.runs.get(run.id)).toMatchObject({ id: run.id });
    expect((await alice.tasks.runs(task.id, { trigger: "manual" })).items.map((r) => r.id)).toEqual(
      [run.id],
    );
    expect((await alice.runs.list({ task_id: task.id })).items.map((r) => r.id)).toEqual([run.id]);
    expect((await bob.runs.list({})).items).toEqual([]);

    // Cancel the queued run, then redrive it.
    h.clock.set(minute(6));
    expect(await alice.runs.cancel(run.id)).toMatchObject({ status: "cancelled" });
    expect(await alice.runs.retry(run.id)).toMatchObject({ status: "queued" });
    const launched = await claimAndLaunch(h, minute(6, SECOND));
    expect(launched.map((r) => r.id)).toEqual([run.id]);

    // Pause (asking the running run to stop) and resume without catch-up.
    h.clock.set(minute(7));
    expect(await alice.tasks.pause(task.id, { cancel_running: true })).toMatchObject({
      status: "paused",
    });
    expect(h.signals.cancelRequests.map((c) => c.run.id)).toEqual([run.id]);
    h.clock.set(minute(200));
    const resumed = await alice.tasks.resume(task.id, { catch_up: "none" });
    expect(resumed).toMatchObject({ status: "enabled", next_run_at: iso(minute(240)) });

    const backfilled = await alice.tasks.backfill(task.id, {
      from: iso(minute(59)),
      to: iso(minute(121)),
    });
    // The 60- and 120-minute occurrences, decided by nothing yet, become backfill runs.
    expect(backfilled.runs.map((r) => [r.trigger, r.scheduled_for])).toEqual([
      ["backfill", iso(minute(60))],
      ["backfill", iso(minute(120))],
    ]);
    expect(backfilled.already_backfilled).toBe(0);

    const rotated = await alice.tasks.rotateSecret(task.id, { grace: "PT0S" });
    expect(rotated).toBeTruthy();

    expect(await alice.tasks.cancel(many!.task.id)).toMatchObject({ status: "cancelled" });
    await alice.tasks.delete(many!.task.id, { force: true, after_run: false });
    await expect(alice.tasks.get(many!.task.id)).rejects.toMatchObject({ code: "not_found" });
  });

  it("keeps named calendars per owner", async () => {
    const { alice, bob } = world();
    const put = await alice.calendars.put("holidays", ["2030-12-25"]);
    expect(put).toMatchObject({ name: "holidays", version: 1 });
    expect(await alice.calendars.get("holidays")).toMatchObject({ name: "holidays", version: 1 });
    expect((await alice.calendars.list()).items.map((c) => c.name)).toEqual(["holidays"]);
    expect((await bob.calendars.list()).items).toEqual([]);
    await expect(bob.calendars.get("holidays")).rejects.toMatchObject({ code: "not_found" });
    await alice.calendars.delete("holidays");
    await expect(alice.calendars.get("holidays")).rejects.toMatchObject({ code: "not_found" });
  });
});
