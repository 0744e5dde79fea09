/**
 * `scheduler.runs.list` and `scheduler.runs.retry` through the public library on virtual time
 * (docs/semantics.md#redrive): a once task whose only run fails is redriven after the fix, launches as
 * attempt 2 with the same idempotency key, and the task ends `completed`; the listing across tasks
 * finds the failure by status and finish time, and refuses a bad filter naming it.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

describe("scheduler.runs.list and scheduler.runs.retry", () => {
  it("finds what failed in the last hour across tasks, redrives it, and the once task completes", async () => {
    let broken = true;
    const scheduler = createTestScheduler({
      start: "2026-05-04T08:00:00Z",
      handlers: {
        send: () => (broken ? Promise.reject(new Error("smtp down")) : Promise.resolve()),
        log: () => Promise.resolve(),
      },
    });
    const { task: reminder } = await scheduler.tasks.create({
      title: "reminder",
      schedule: { type: "once", run_at: "2026-05-04T09:00:00Z" },
      target: { kind: "handler", name: "send" },
    });
    const { task: report } = await scheduler.tasks.create({
      title: "report",
      schedule: { type: "cron", cron: "30 * * * *" },
      target: { kind: "handler", name: "log" },
    });
    await scheduler.advanceTo("2026-05-04T09:45:00Z");
    expect((await scheduler.tasks.get(reminder.id)).status).toBe("failed");

    const failed = await scheduler.runs.list({
      status: ["failed", "timed_out"],
      finished_after: "2026-05-04T08:45:00Z",
    });
    expect(failed.items.map((r) => [r.task_id, r.status, r.attempt])).toEqual([
      [reminder.id, "failed", 1],
    ]);
    const all = await scheduler.runs.list();
    expect(new Set(all.items.map((r) => r.task_id))).toEqual(new Set([reminder.id, report.id]));
    await expect(scheduler.runs.list({ status: "broken" as "failed" })).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ field: "status" }],
    });

    broken = false;
    const run = failed.items[0]!;
    const retrying: string[] = [];
    scheduler.on("run:retrying", ({ run: r }) => retrying.push(`${r.id} ${r.status}`));
    expect(await scheduler.runs.retry(run.id)).toMatchObject({ id: run.id, status: "queued" });
    expect(retrying).toEqual([`${run.id} queued`]);
    await scheduler.advanceBy(60_000);
    expect(await scheduler.runs.get(run.id)).toMatchObject({
      status: "succeeded",
      attempt: 2,
      failures: 1,
      idempotency_key: run.idempotency_key,
    });
    expect((await scheduler.tasks.get(reminder.id)).status).toBe("completed");
    await expect(scheduler.runs.retry(run.id)).rejects.toMatchObject({
      code: "illegal_transition",
    });
    await scheduler.stop();
  });
});
