/**
 * The library's `scheduler.calendars` and a replay through `punctual/testing` (issue 22): "daily at 08:00
 * except public holidays" over a year in Berlin, the calendar edited on the way; the ledger holds one
 * `skipped` range (reason `excluded`) per excluded stretch and a run for every other day.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

describe("scheduler.calendars in a replay", () => {
  it("skips the calendar's days, records each stretch once, and follows an edit", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
    const created = await scheduler.calendars.put("holidays", [
      "2026-01-01",
      { from: "2026-12-24", to: "2026-12-26" },
    ]);
    expect(created).toMatchObject({ name: "holidays", version: 1, tasks_refreshed: 0 });
    const { task } = await scheduler.tasks.create({
      title: "morning report",
      schedule: {
        type: "cron",
        cron: "0 8 * * *",
        timezone: "Europe/Berlin",
        exclude: [{ calendar: "holidays" }, { days: "* * sat,sun" }],
      },
      target: { kind: "handler", name: "log" },
    });
    // Jan 1 excluded, Jan 2 a Friday: the first fire.
    expect(task.next_run_at).toBe("2026-01-02T07:00:00Z");

    await scheduler.advanceTo("2026-06-30T12:00:00Z");
    const edited = await scheduler.calendars.put("holidays", [
      "2026-01-01",
      "2026-07-01",
      { from: "2026-12-24", to: "2026-12-26" },
    ]);
    expect(edited).toMatchObject({ version: 2, tasks_refreshed: 1 });
    expect((await scheduler.tasks.get(task.id)).next_run_at).toBe("2026-07-02T06:00:00Z");
    await scheduler.advanceTo("2027-01-01T00:00:00Z");

    const runs = await scheduler.ledger(task.id);
    const fired = runs.filter((r) => r.status === "succeeded");
    const excluded = runs.filter((r) => r.status === "skipped" && r.reason === "excluded");
    expect(runs.length).toBe(fired.length + excluded.length);
    // 2026 has 261 weekdays; Jan 1, Jul 1 and Dec 24-25 are weekdays among the holidays.
    expect(fired).toHaveLength(257);
    const covered = excluded.reduce((n, r) => n + (r.missed_count ?? 0), 0);
    expect(covered).toBe(365 - 257);
    // Dec 24 (Thu) to Dec 27 (Sun): one stretch of four nominal times.
    expect(excluded.find((r) => r.scheduled_for === "2026-12-24T07:00:00Z")).toMatchObject({
      missed_count: 4,
      missed_until: "2026-12-27T07:00:00Z",
    });
    await expect(scheduler.calendars.delete("holidays")).rejects.toMatchObject({
      code: "calendar_in_use",
    });
    expect((await scheduler.calendars.list()).items.map((c) => c.name)).toEqual(["holidays"]);
    await scheduler.stop();
  });
});
