/**
 * A calendar following a region's public holidays is kept current as years pass (issue 34,
 * docs/schedules.md#holidays): on the virtual clock crossing into a new year, the runtime's daily check
 * adds the holidays of the year that came within the horizon as a new calendar version, and a task
 * naming the calendar takes it (its next fire moves past the new holiday); a put without `holidays`
 * drops the region, and nothing extends the calendar any more.
 */
import { describe, expect, it } from "vitest";
import { createTestScheduler } from "../../src/testing.js";

describe("holidays kept current as years pass", () => {
  it("extends the calendar to the current year + 9 when the year turns, and refreshes the tasks naming it", async () => {
    const scheduler = createTestScheduler({ start: "2030-12-30T12:00:00Z" });
    const put = await scheduler.calendars.put("de-by", ["2030-12-31"], {
      holidays: { region: "DE-BY" },
    });
    expect(put).toMatchObject({
      version: 1,
      holidays: { region: "DE-BY", from_year: 2030, through_year: 2039 },
    });
    expect(put.items).toContain("2039-12-26");
    expect(put.items).not.toContain("2040-01-01");
    const { task } = await scheduler.tasks.create({
      title: "new year's report",
      schedule: {
        type: "cron",
        cron: "0 8 1 1 *",
        timezone: "UTC",
        exclude: [{ calendar: "de-by" }],
      },
      target: { kind: "handler", name: "log" },
    });
    // Every 1 January through 2039 is a holiday the calendar holds; 2040's is not held yet.
    expect(task.next_run_at).toBe("2040-01-01T08:00:00Z");

    await scheduler.advanceTo("2030-12-31T23:00:00Z");
    expect((await scheduler.calendars.get("de-by")).version).toBe(1);

    await scheduler.advanceTo("2031-01-01T00:30:00Z");
    const extended = await scheduler.calendars.get("de-by");
    expect(extended).toMatchObject({
      version: 2,
      holidays: { region: "DE-BY", from_year: 2030, through_year: 2040 },
    });
    expect(extended.items).toContain("2040-01-01");
    expect(extended.items).toContain("2030-12-31");
    expect((await scheduler.tasks.get(task.id)).next_run_at).toBe("2041-01-01T08:00:00Z");

    // A put without `holidays` drops the region: the next year's check leaves the calendar alone.
    const plain = await scheduler.calendars.put("de-by", extended.items);
    expect(plain).toMatchObject({ version: 3, holidays: null });
    await scheduler.advanceTo("2032-01-01T00:30:00Z");
    expect(await scheduler.calendars.get("de-by")).toMatchObject({ version: 3, holidays: null });
    await scheduler.stop();
  });
});
