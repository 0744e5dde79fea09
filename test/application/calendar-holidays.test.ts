/**
 * A calendar put with `holidays` (docs/schedules.md#holidays), through the service on the virtual
 * clock with a fake holiday source: the years asked (default this year and the 9 after, at most 30)
 * become dates among the calendar's items, and a task naming the calendar skips them. The yearly
 * extension (`extendHolidays`) adds the years missing up to this year + 9, keeps the other items, and
 * reports a calendar it cannot extend, leaving it as it was.
 */
import { describe, expect, it } from "vitest";
import { CalendarService } from "../../src/application/calendars/calendar-service.js";
import { ValidationError } from "../../src/domain/errors.js";
import type { HolidayRequest, HolidaySource } from "../../src/domain/ports/holiday-source.js";
import { ALICE, createTask, handlerInput, harness, iso } from "./harness.js";
import { instant } from "../../src/domain/time.js";

/** New Year's Day and 2 January of each year asked, for any region; records what was asked. */
class FakeHolidays implements HolidaySource {
  readonly asked: HolidayRequest[] = [];
  publicHolidays(request: HolidayRequest): Promise<readonly string[]> {
    this.asked.push(request);
    const dates: string[] = [];
    for (let y = request.fromYear; y <= request.toYear; y++) dates.push(`${y}-01-01`, `${y}-01-02`);
    return Promise.resolve(dates);
  }
}

function setup() {
  const h = harness();
  const holidays = new FakeHolidays();
  const calendars = new CalendarService({ store: h.store, wake: () => undefined, holidays });
  return { h, holidays, calendars };
}

describe("calendar puts with public holidays", () => {
  it("adds the region's holidays of this year and the 9 after to the items, once each", async () => {
    const { h, holidays, calendars } = setup();
    // T0 is 2030-01-07.
    const put = await calendars.put(
      ALICE,
      "de-by",
      { items: ["2030-01-01", "2030-12-24"], holidays: { region: "DE-BY" } },
      h.clock.now,
    );
    expect(holidays.asked).toEqual([{ region: "DE-BY", fromYear: 2030, toYear: 2039 }]);
    expect(put.calendar.items).toHaveLength(2 + 20 - 1);
    expect(put.calendar.items.slice(0, 4)).toEqual([
      "2030-01-01",
      "2030-12-24",
      "2030-01-02",
      "2031-01-01",
    ]);
  });

  it("skips the holidays in a task naming the calendar", async () => {
    const { h, calendars } = setup();
    await calendars.put(
      ALICE,
      "days-off",
      { items: [], holidays: { region: "DE", from_year: 2031, to_year: 2031 } },
      h.clock.now,
    );
    const task = await createTask(
      h,
      handlerInput("0 8 * * *", {
        schedule: {
          type: "cron",
          cron: "0 8 1,2,3 1 *",
          timezone: "UTC",
          exclude: [{ calendar: "days-off" }],
        },
      }),
    );
    expect(task.next_run_at).toBe(iso(instant(Date.UTC(2031, 0, 3, 8))));
  });

  it.each([
    [{ region: "DE", from_year: 2030, to_year: 2029 }, "holidays.to_year", "must not be before"],
    [{ region: "DE", from_year: 2030, to_year: 2060 }, "holidays.to_year", "at most 30 years"],
    [{ region: "DE", from_year: 1900 }, "holidays.from_year", ""],
  ])("refuses the years of %j", async (request, field, message) => {
    const { h, holidays, calendars } = setup();
    const refusal = calendars.put(ALICE, "x", { items: [], holidays: request }, h.clock.now);
    await expect(refusal).rejects.toBeInstanceOf(ValidationError);
    await expect(refusal).rejects.toMatchObject({
      errors: [{ field, message: expect.stringContaining(message) as string }],
    });
    expect(holidays.asked).toEqual([]);
  });

  it("refuses holidays on a service built without a holiday source", async () => {
    const h = harness();
    const refusal = h.tasks.calendars.put(
      ALICE,
      "x",
      { items: [], holidays: { region: "DE" } },
      h.clock.now,
    );
    await expect(refusal).rejects.toMatchObject({
      errors: [{ field: "holidays", message: "this server has no holiday dataset" }],
    });
  });

  it("extends a calendar to this year + 9, asking only the missing years, and keeps its other items", async () => {
    const { h, holidays, calendars } = setup();
    await calendars.put(
      ALICE,
      "de",
      { items: ["2030-07-01"], holidays: { region: "DE", from_year: 2030, to_year: 2031 } },
      h.clock.now,
    );
    await calendars.put(ALICE, "plain", { items: ["2030-07-02"] }, h.clock.now);
    holidays.asked.length = 0;
    const upkeep = await calendars.extendHolidays(h.clock.now);
    expect(upkeep).toEqual({
      extended: [{ owner: ALICE.owner, name: "de", throughYear: 2039 }],
      failed: [],
    });
    expect(holidays.asked).toEqual([{ region: "DE", fromYear: 2032, toYear: 2039 }]);
    const extended = await calendars.get(ALICE, "de");
    expect(extended).toMatchObject({
      version: 2,
      holidays: { region: "DE", from_year: 2030, through_year: 2039 },
    });
    expect(extended.items).toHaveLength(1 + 2 * 10);
    expect(extended.items.slice(0, 2)).toEqual(["2030-07-01", "2030-01-01"]);
    // Nothing is missing any more: a second check changes nothing.
    expect(await calendars.extendHolidays(h.clock.now)).toEqual({ extended: [], failed: [] });
    expect((await calendars.get(ALICE, "plain")).version).toBe(1);
  });

  it("reports a calendar that cannot take the later years and leaves it as it was", async () => {
    const { h, calendars } = setup();
    // 996 dates of 2040 and 2041, and 2030's two holidays: 998 items; 2031-2039 would add 18.
    const filler = Array.from({ length: 996 }, (_, i) =>
      new Date(Date.UTC(2040, 0, 1) + i * 86_400_000).toISOString().slice(0, 10),
    );
    await calendars.put(
      ALICE,
      "full",
      { items: filler, holidays: { region: "DE", from_year: 2030, to_year: 2030 } },
      h.clock.now,
    );
    const upkeep = await calendars.extendHolidays(h.clock.now);
    expect(upkeep.extended).toEqual([]);
    expect(upkeep.failed).toMatchObject([{ owner: ALICE.owner, name: "full" }]);
    expect(upkeep.failed[0]?.error).toBeInstanceOf(ValidationError);
    expect(await calendars.get(ALICE, "full")).toMatchObject({
      version: 1,
      holidays: { through_year: 2030 },
    });
  });
});
