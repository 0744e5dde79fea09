/**
 * `punctual/testing` replays a year through the real coordinator on a virtual clock (issue 5): a daily
 * 02:30 Berlin task and an every-15-minutes task across both DST transitions of 2026.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

describe("createTestScheduler", () => {
  it(
    "replays a year of a daily 02:30 Berlin task and a quarter-hour task through both DST changes",
    { timeout: 120_000 },
    async () => {
      const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
      // Time is virtual: the replay takes as long as the work, not as long as the year.
      const daily = await scheduler.tasks.create({
        title: "daily",
        schedule: { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" },
        target: { kind: "handler", name: "log" },
      });
      const quarter = await scheduler.tasks.create({
        title: "quarter-hourly",
        schedule: { type: "cron", cron: "*/15 * * * *", timezone: "Europe/Berlin" },
        target: { kind: "handler", name: "log" },
      });

      await scheduler.advanceTo("2027-01-01T00:00:00Z");

      const dailyRuns = await scheduler.ledger(daily.task.id);
      expect(dailyRuns).toHaveLength(365);
      expect(dailyRuns.every((r) => r.status === "succeeded" && !r.late)).toBe(true);
      // 2026-03-29: 02:30 does not exist in Berlin; the fixed-time job fires once at 03:00 CEST (01:00Z).
      expect(dailyRuns.filter((r) => r.scheduled_for.startsWith("2026-03-29"))).toMatchObject([
        { scheduled_for: "2026-03-29T01:00:00Z" },
      ]);
      // 2026-10-25: 02:30 happens twice; it fires once, on the first pass (CEST, 00:30Z).
      expect(dailyRuns.filter((r) => r.scheduled_for.startsWith("2026-10-25"))).toMatchObject([
        { scheduled_for: "2026-10-25T00:30:00Z" },
      ]);

      const quarterRuns = await scheduler.ledger(quarter.task.id);
      // Every real quarter hour of the year: 365 * 96, the spring day has 4 fewer, the autumn day 4 more.
      expect(quarterRuns).toHaveLength(365 * 96);
      expect(quarterRuns.every((r) => r.status === "succeeded")).toBe(true);
      const between = (from: string, to: string): number =>
        quarterRuns.filter((r) => r.scheduled_for >= from && r.scheduled_for < to).length;
      // Local midnight to midnight: 23 hours on the spring day, 25 on the autumn day.
      expect(between("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")).toBe(92);
      expect(between("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(100);
      await scheduler.stop();
    },
  );
});
