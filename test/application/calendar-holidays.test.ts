/**
 * A calendar put with `holidays` (docs/schedules.md#holidays), through the service on the virtual
 * clock with a fake holiday source: the years asked (default this year and the 9 after, at most 30)
 * become dates among the calendar's items, and a task naming the calendar skips them.
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
});
