/**
 * `DateHolidaysSource` (docs/schedules.md#holidays): a region's public holidays from the dataset the
 * date-holidays package bundles, as local dates; an unknown country, state or region refused by name.
 */
import { describe, expect, it } from "vitest";
import { DateHolidaysSource } from "../../../src/adapters/holidays/date-holidays-source.js";
import { ValidationError } from "../../../src/domain/errors.js";

const source = new DateHolidaysSource();

describe("DateHolidaysSource", () => {
  it("gives Bavaria's public holidays of 2026, its own (Epiphany, Corpus Christi, All Saints) included", async () => {
    expect(await source.publicHolidays({ region: "DE-BY", fromYear: 2026, toYear: 2026 })).toEqual([
      "2026-01-01",
      "2026-01-06",
      "2026-04-03",
      "2026-04-06",
      "2026-05-01",
      "2026-05-14",
      "2026-05-25",
      "2026-06-04",
      "2026-10-03",
      "2026-11-01",
      "2026-12-25",
      "2026-12-26",
    ]);
  }, 30_000);

  it("reads the region in any case, and a state's holidays differ from another's", async () => {
    const berlin = await source.publicHolidays({ region: "de-be", fromYear: 2026, toYear: 2026 });
    expect(berlin).toContain("2026-03-08"); // International Women's Day, Berlin only
    expect(berlin).not.toContain("2026-01-06");
  }, 30_000);

  it("covers every year asked, substitute days included (US: Independence Day 2026 on a Saturday)", async () => {
    const us = await source.publicHolidays({ region: "US", fromYear: 2026, toYear: 2028 });
    expect(us).toContain("2026-07-03");
    expect(us.filter((d) => d.endsWith("-12-25"))).toEqual([
      "2026-12-25",
      "2027-12-25",
      "2028-12-25",
    ]);
  }, 30_000);

  it.each([
    ["XX", 'no public holidays are known for the country "XX"'],
    ["DE-ZZ", 'no public holidays are known for "DE-ZZ"'],
    ["Germany", "is not a region"],
    ["DE BY", "is not a region"],
  ])("refuses %j naming holidays.region", async (region, message) => {
    const refusal = source.publicHolidays({ region, fromYear: 2026, toYear: 2026 });
    await expect(refusal).rejects.toBeInstanceOf(ValidationError);
    await expect(refusal).rejects.toMatchObject({
      errors: [{ field: "holidays.region", message: expect.stringContaining(message) as string }],
    });
  });
});
