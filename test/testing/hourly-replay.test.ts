/**
 * `punctual/testing` replays a year of an hourly cron in New York through both DST changes of 2026 (SPEC
 * 3.1): `0 * * * *` is a wildcard job, so it fires at every real hour and never at a wall time that does
 * not exist.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

const HOUR = 3_600_000;

describe("createTestScheduler", () => {
  it("replays a year of an hourly New York task: every real hour once, 23 on the spring day, 25 in autumn", async () => {
    const scheduler = createTestScheduler({ start: "2026-01-01T00:00:00Z" });
    const { task } = await scheduler.tasks.create({
      title: "hourly",
      schedule: { type: "cron", cron: "0 * * * *", timezone: "America/New_York" },
      target: { kind: "handler", name: "log" },
    });

    await scheduler.advanceTo("2027-01-01T00:00:00Z");

    const runs = await scheduler.ledger(task.id);
    // 365 days of 24 real hours: the hour skipped in March is not fired, the hour repeated in
    // November fires on both passes.
    expect(runs).toHaveLength(8760);
    expect(
      runs.every((r) => r.status === "succeeded" && r.trigger === "scheduled" && !r.late),
    ).toBe(true);
    const instants = runs.map((r) => Date.parse(r.scheduled_for));
    expect(instants.every((at, i) => i === 0 || at - (instants[i - 1] ?? 0) === HOUR)).toBe(true);
    expect(runs[0]?.scheduled_for).toBe("2026-01-01T01:00:00Z");
    expect(runs.at(-1)?.scheduled_for).toBe("2027-01-01T00:00:00Z");

    const localDay = (from: string, to: string): string[] =>
      runs
        .filter((r) => r.scheduled_for >= from && r.scheduled_for < to)
        .map((r) => r.scheduled_for);
    // 2026-03-08: 02:00 EST does not exist (clocks jump to 03:00 EDT at 07:00Z); local midnight to midnight
    // is 05:00Z to 04:00Z the next day.
    const spring = localDay("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z");
    expect(spring).toHaveLength(23);
    expect(spring).toContain("2026-03-08T06:00:00Z"); // 01:00 EST
    expect(spring).toContain("2026-03-08T07:00:00Z"); // 03:00 EDT, the next real hour
    // 2026-11-01: 01:00 happens twice, at 05:00Z (EDT) and 06:00Z (EST); both fire.
    const autumn = localDay("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z");
    expect(autumn).toHaveLength(25);
    expect(autumn).toContain("2026-11-01T05:00:00Z");
    expect(autumn).toContain("2026-11-01T06:00:00Z");
    await scheduler.stop();
  });
});
