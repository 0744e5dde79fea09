/**
 * The Quartz-style day items of issue 22 (`?`, `L`, `L-n`, `LW`, `nW`, `VL`, `V#k`), item by item over
 * months of every length in leap and common years, then on DST days in the zones that have them, and
 * every refusal the issue lists. The expected days and instants were worked out independently of the
 * engine (a Python reading of the rules, and zoneinfo for the instants) and are written as literals.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { parseCron } from "../../../src/domain/schedule/cron-expression.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";

function fires(cron: string, timezone: string, after: string, count: number): string[] {
  return nextOccurrences({ type: "cron", cron, timezone }, { after: new Date(after), count }).map(
    (d) => d.toISOString().replace(".000Z", "Z"),
  );
}

/** The days (one list per month, "-" for none) a day item names in `year`, read from fires in UTC. */
function daysOfYear(cron: string, year: number): string {
  const start = `${year - 1}-12-31T23:59:59Z`;
  const list = nextOccurrences(
    { type: "cron", cron, timezone: "UTC" },
    { after: new Date(start), count: 40 },
  ).filter((d) => d.getUTCFullYear() === year);
  return Array.from({ length: 12 }, (_, month) => {
    const days = list.filter((d) => d.getUTCMonth() === month).map((d) => d.getUTCDate());
    return days.length === 0 ? "-" : days.join("+");
  }).join(" ");
}

/** item -> year -> the days of Jan..Dec. */
const DAY_TABLE: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  "0 0 L * *": {
    2023: "31 28 31 30 31 30 31 31 30 31 30 31",
    2024: "31 29 31 30 31 30 31 31 30 31 30 31",
    2100: "31 28 31 30 31 30 31 31 30 31 30 31",
    2000: "31 29 31 30 31 30 31 31 30 31 30 31",
  },
  "0 0 L-1 * *": {
    2023: "30 27 30 29 30 29 30 30 29 30 29 30",
    2024: "30 28 30 29 30 29 30 30 29 30 29 30",
  },
  "0 0 l-3 * ?": {
    2023: "28 25 28 27 28 27 28 28 27 28 27 28",
    2024: "28 26 28 27 28 27 28 28 27 28 27 28",
  },
  "0 0 L-28 * *": {
    2023: "3 - 3 2 3 2 3 3 2 3 2 3",
    2024: "3 1 3 2 3 2 3 3 2 3 2 3",
    2100: "3 - 3 2 3 2 3 3 2 3 2 3",
  },
  "0 0 L-30 * *": {
    2023: "1 - 1 - 1 - 1 1 - 1 - 1",
    2024: "1 - 1 - 1 - 1 1 - 1 - 1",
  },
  "0 0 LW * *": {
    2023: "31 28 31 28 31 30 31 31 29 31 30 29",
    2024: "31 29 29 30 31 28 31 30 30 31 29 31",
    2100: "29 26 31 30 31 30 30 31 30 29 30 31",
    2000: "31 29 31 28 31 30 31 31 29 31 30 29",
  },
  "0 0 1W * *": {
    2023: "2 1 1 3 1 1 3 1 1 2 1 1",
    2024: "1 1 1 1 1 3 1 1 2 1 1 2",
    2000: "3 1 1 3 1 1 3 1 1 2 1 1",
  },
  "0 0 15w * *": {
    2023: "16 15 15 14 15 15 14 15 15 16 15 15",
    2024: "15 15 15 15 15 14 15 15 16 15 15 16",
  },
  "0 0 29W * *": {
    2023: "30 - 29 28 29 29 28 29 29 30 29 29",
    2024: "29 29 29 29 29 28 29 29 30 29 29 30",
    2100: "29 - 29 29 28 29 29 30 29 29 29 29",
    2000: "28 29 29 28 29 29 28 29 29 30 29 29",
  },
  "0 0 30W * *": {
    2023: "30 - 30 28 30 30 31 30 29 30 30 29",
    2024: "30 - 29 30 30 28 30 30 30 30 29 30",
    2000: "31 - 30 28 30 30 31 30 29 30 30 29",
  },
  "0 0 31W * *": {
    2023: "31 - 31 - 31 - 31 31 - 31 - 29",
    2024: "31 - 29 - 31 - 31 30 - 31 - 31",
    2100: "29 - 31 - 31 - 30 31 - 29 - 31",
  },
  "0 0 ? * 5L": {
    2023: "27 24 31 28 26 30 28 25 29 27 24 29",
    2024: "26 23 29 26 31 28 26 30 27 25 29 27",
  },
  "0 0 * * 0L": {
    2023: "29 26 26 30 28 25 30 27 24 29 26 31",
    2100: "31 28 28 25 30 27 25 29 26 31 28 26",
  },
  "0 0 ? * 7l": {
    2024: "28 25 31 28 26 30 28 25 29 27 24 29",
  },
  "0 0 ? * fril": {
    2024: "26 23 29 26 31 28 26 30 27 25 29 27",
  },
  "0 0 ? * FRI#2": {
    2023: "13 10 10 14 12 9 14 11 8 13 10 8",
    2024: "12 9 8 12 10 14 12 9 13 11 8 13",
    2100: "8 12 12 9 14 11 9 13 10 8 12 10",
  },
  "0 0 ? * 5#2": {
    2000: "14 11 10 14 12 9 14 11 8 13 10 8",
  },
  "0 0 ? * MON#5": {
    2023: "30 - - - 29 - 31 - - 30 - -",
    2024: "29 - - 29 - - 29 - 30 - - 30",
    2100: "- - 29 - 31 - - 30 - - 29 -",
  },
  "0 0 * * sun#1": {
    2023: "1 5 5 2 7 4 2 6 3 1 5 3",
    2000: "2 6 5 2 7 4 2 6 3 1 5 3",
  },
};

describe("day items, month by month (UTC)", () => {
  const cases = Object.entries(DAY_TABLE).flatMap(([cron, years]) =>
    Object.entries(years).map(([year, days]) => ({ cron, year: Number(year), days })),
  );
  it.each(cases)("$cron in $year", ({ cron, year, days }) => {
    expect(daysOfYear(cron, year)).toBe(days);
  });

  it("ORs the items of a list: L,15 is the 15th and the last day", () => {
    expect(daysOfYear("0 0 L,15 * *", 2024)).toBe(
      "15+31 15+29 15+31 15+30 15+31 15+30 15+31 15+31 15+30 15+31 15+30 15+31",
    );
  });

  it("ORs classic and Quartz items of the day-of-week field: 1#1,5L", () => {
    expect(daysOfYear("0 0 ? 1-3 1#1,5L", 2024)).toBe("1+26 5+23 4+29 - - - - - - - - -");
  });

  it("reads ? ? as every day", () => {
    expect(fires("0 12 ? * ?", "UTC", "2024-02-28T00:00:00Z", 3)).toEqual([
      "2024-02-28T12:00:00Z",
      "2024-02-29T12:00:00Z",
      "2024-03-01T12:00:00Z",
    ]);
  });

  it("applies Vixie's day rule: L * FRI is the last day or any Friday", () => {
    expect(daysOfYear("0 0 L 2 FRI", 2024)).toBe("- 2+9+16+23+29 - - - - - - - - - -");
  });

  it("applies Vixie's day rule: ? as a day field means both must match (L ? is the last day only)", () => {
    expect(daysOfYear("0 0 L 2 ?", 2024)).toBe("- 29 - - - - - - - - - -");
    expect(daysOfYear("0 0 ? 2 FRI", 2024)).toBe("- 2+9+16+23 - - - - - - - - - -");
  });

  it("counts ? as unrestricted, like a field beginning with *", () => {
    const parsed = parseCron("0 0 ? * 5L");
    expect(
      parsed.ok && [parsed.value.dayOfMonthRestricted, parsed.value.dayOfWeekRestricted],
    ).toEqual([false, true]);
  });

  it("takes day items in the 6-field form", () => {
    expect(fires("30 0 17 LW * *", "UTC", "2024-05-01T00:00:00Z", 2)).toEqual([
      "2024-05-31T17:00:30Z",
      "2024-06-28T17:00:30Z",
    ]);
  });
});

interface Case {
  readonly cron: string;
  readonly after: string;
  readonly expected: readonly string[];
  readonly why: string;
}

function table(zone: string, cases: readonly Case[]): void {
  describe(zone, () => {
    it.each(cases)("$why: $cron after $after", ({ cron, after, expected }) => {
      expect(fires(cron, zone, after, expected.length)).toEqual(expected);
    });
  });
}

describe("day items on DST days: the DST rule applies unchanged to the resulting wall times", () => {
  // Europe/Berlin 2024: forward Mar 31 02:00 CET (01:00Z), back Oct 27 03:00 CEST (01:00Z).
  table("Europe/Berlin", [
    {
      why: "the last Sunday of March at 02:30 is in the gap: fires at the transition",
      cron: "30 2 ? 3 SUNL",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-03-31T01:00:00Z", "2025-03-30T01:00:00Z"],
    },
    {
      why: "the last Sunday of October at 02:30 happens twice: a fixed-time job fires on the first pass",
      cron: "30 2 ? 10 0L",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-10-27T00:30:00Z", "2025-10-26T00:30:00Z"],
    },
    {
      why: "a wildcard job on the last Sunday of October fires on both passes",
      cron: "*/30 2 ? 10 7L",
      after: "2024-10-26T12:00:00Z",
      expected: [
        "2024-10-27T00:00:00Z",
        "2024-10-27T00:30:00Z",
        "2024-10-27T01:00:00Z",
        "2024-10-27T01:30:00Z",
      ],
    },
    {
      why: "L in February of a leap year, then of a common year",
      cron: "0 12 L 2 *",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-02-29T11:00:00Z", "2025-02-28T11:00:00Z"],
    },
    {
      why: "the last business day, either side of the spring change",
      cron: "0 9 LW * *",
      after: "2024-03-01T00:00:00Z",
      expected: ["2024-03-29T08:00:00Z", "2024-04-30T07:00:00Z"],
    },
  ]);

  // America/New_York 2024: forward Mar 10 (07:00Z), back Nov 3 (06:00Z); 2025: Mar 9, Nov 2.
  table("America/New_York", [
    {
      why: "the second Sunday of March at 02:30 is in the gap every year",
      cron: "30 2 ? 3 SUN#2",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-03-10T07:00:00Z", "2025-03-09T07:00:00Z"],
    },
    {
      why: "the first Sunday of November at 01:30 fires on the first pass only",
      cron: "30 1 ? 11 SUN#1",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-11-03T05:30:00Z", "2025-11-02T05:30:00Z"],
    },
    {
      why: "a wildcard job on the first Sunday of November fires on both passes",
      cron: "*/30 1 ? 11 SUN#1",
      after: "2024-11-01T00:00:00Z",
      expected: [
        "2024-11-03T05:00:00Z",
        "2024-11-03T05:30:00Z",
        "2024-11-03T06:00:00Z",
        "2024-11-03T06:30:00Z",
      ],
    },
    {
      why: "the last business day of the month at 17:00 (the issue's example)",
      cron: "0 17 LW * *",
      after: "2024-02-01T00:00:00Z",
      expected: ["2024-02-29T22:00:00Z", "2024-03-29T21:00:00Z"],
    },
    {
      why: "10W moves off Sunday the 10th (the DST day) to Monday the 11th",
      cron: "0 2 10W 3 *",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-03-11T06:00:00Z"],
    },
    {
      why: "9W moves off Saturday the 9th to Friday the 8th",
      cron: "0 2 9W 3 *",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-03-08T07:00:00Z"],
    },
  ]);

  // Australia/Lord_Howe 2024: back Apr 7 02:00 -> 01:30 (2024-04-06T15:00Z), forward Oct 6 02:00 ->
  // 02:30 (2024-10-05T15:30Z): half-hour changes.
  table("Australia/Lord_Howe", [
    {
      why: "the first Sunday of October at 02:15 is in the half-hour gap",
      cron: "15 2 ? 10 SUN#1",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-10-05T15:30:00Z"],
    },
    {
      why: "the first Sunday of April at 01:45 happens twice: first pass",
      cron: "45 1 ? 4 SUN#1",
      after: "2024-01-01T00:00:00Z",
      expected: ["2024-04-06T14:45:00Z", "2025-04-05T14:45:00Z"],
    },
    {
      why: "a wildcard job skips the wall times of the half-hour gap",
      cron: "*/10 2 ? 10 SUN#1",
      after: "2024-10-01T00:00:00Z",
      expected: ["2024-10-05T15:30:00Z", "2024-10-05T15:40:00Z", "2024-10-05T15:50:00Z"],
    },
  ]);

  // America/Sao_Paulo before 2019: forward 2018-11-04 00:00 -> 01:00 (03:00Z); back 2018-02-18 00:00 ->
  // Feb 17 23:00 (02:00Z) and 2019-02-17 (02:00Z); no DST from 2019 on.
  table("America/Sao_Paulo", [
    {
      why: "the first Sunday of November 2018 at midnight did not exist: fired at 01:00",
      cron: "0 0 ? 11 SUN#1",
      after: "2018-01-01T00:00:00Z",
      expected: ["2018-11-04T03:00:00Z", "2019-11-03T03:00:00Z"],
    },
    {
      why: "the third Saturday of February at 23:30 happened twice: first pass",
      cron: "30 23 ? 2 SAT#3",
      after: "2018-01-01T00:00:00Z",
      expected: ["2018-02-18T01:30:00Z", "2019-02-17T01:30:00Z"],
    },
    {
      why: "4W moves off Sunday 2018-11-04 (the gap day) to Monday the 5th",
      cron: "0 0 4W 11 *",
      after: "2018-01-01T00:00:00Z",
      expected: ["2018-11-05T02:00:00Z"],
    },
  ]);

  // Pacific/Apia skipped 2011-12-30 entirely (2011-12-29 23:59:59 -10:00, then 2011-12-31 00:00 +14:00).
  table("Pacific/Apia", [
    {
      why: "L-1 named the skipped day in December 2011: nothing fires that year",
      cron: "0 12 L-1 12 *",
      after: "2011-12-01T00:00:00Z",
      expected: ["2012-12-29T22:00:00Z"],
    },
    {
      why: "30W named Friday the skipped 30th: nothing; in 2012 the 30th is a Sunday, so Monday the 31st",
      cron: "0 12 30W 12 *",
      after: "2011-12-01T00:00:00Z",
      expected: ["2012-12-30T22:00:00Z"],
    },
    {
      why: "FRI#5 of December 2011 was the skipped day; the next December with five Fridays is 2016",
      cron: "0 12 ? 12 FRI#5",
      after: "2011-12-01T00:00:00Z",
      expected: ["2016-12-29T22:00:00Z"],
    },
    {
      why: "LW of December 2011 was the skipped Friday (the 31st is a Saturday)",
      cron: "0 12 LW 12 *",
      after: "2011-12-01T00:00:00Z",
      expected: ["2012-12-30T22:00:00Z"],
    },
    {
      why: "a wildcard job on the skipped day has no wall time to fire at either",
      cron: "0 * L-1 12 *",
      after: "2011-12-29T00:00:00Z",
      expected: ["2012-12-29T10:00:00Z"],
    },
  ]);
});

describe("refusals (the message names the field)", () => {
  it.each([
    [
      "0 0 1 ? *",
      /^month field: "\?" is allowed only as the whole day-of-month or day-of-week field/,
    ],
    ["? 0 1 * *", /^minute field: "\?" is allowed only/],
    ["? 0 0 1 * *", /^second field: "\?" is allowed only/],
    ["0 L 1 * *", /^hour field: "L": L and W are allowed only in the day-of-month and day-of-week/],
    ["0 0 1 L *", /^month field: "L": L and W are allowed only/],
    ["15W 0 1 * *", /^minute field: "15W": L and W are allowed only/],
    ["0 0 1 1#2 *", /^month field: "#" is allowed only in the day-of-week field/],
    ["0 0 ?/2 * *", /^day-of-month field: "\?" stands alone/],
    ["0 0 ?,1 * *", /^day-of-month field: "\?" stands alone/],
    ["0 0 * * ?,1", /^day-of-week field: "\?" stands alone/],
    [
      "0 0 1-5W * *",
      /^day-of-month field: "1-5W": L and W cannot be combined with a range, a step or \*/,
    ],
    ["0 0 1-5L * *", /^day-of-month field: "1-5L": L and W cannot be combined/],
    ["0 0 */2W * *", /^day-of-month field: "\*\/2W": L and W cannot be combined/],
    ["0 0 * * MON-FRI#2", /^day-of-week field: "MON-FRI#2": L and # cannot be combined/],
    ["0 0 * * */2#1", /^day-of-week field: "\*\/2#1": L and # cannot be combined/],
    ["0 0 * * 1-5L", /^day-of-week field: "1-5L": L and # cannot be combined/],
    ["0 0 L-0 * *", /^day-of-month field: "L-0": L-n takes n from 1 to 30/],
    ["0 0 L-31 * *", /^day-of-month field: "L-31": L-n takes n from 1 to 30/],
    ["0 0 0W * *", /^day-of-month field: "0W": nW takes a day n from 1 to 31/],
    ["0 0 32W * *", /^day-of-month field: "32W": nW takes a day n from 1 to 31/],
    ["0 0 W * *", /^day-of-month field: "W": W needs a day/],
    ["0 0 LW-1 * *", /^day-of-month field: "LW-1"/],
    ["0 0 WL * *", /^day-of-month field: "WL" is not a day-of-month item/],
    ["0 0 LL * *", /^day-of-month field: "LL" is not a day-of-month item/],
    ["0 0 5L * *", /^day-of-month field: "5L" is a day-of-week item/],
    ["0 0 FRIL * *", /^day-of-month field: "FRIL" is a day-of-week item/],
    ["0 0 FRI#2 * *", /^day-of-month field: "FRI#2" is a day-of-week item/],
    ["0 0 * * L", /^day-of-week field: a lone "L" is a day-of-month item/],
    ["0 0 * * LW", /^day-of-week field: "LW" is a day-of-month item/],
    ["0 0 * * 15W", /^day-of-week field: "15W" is a day-of-month item/],
    ["0 0 * * L-2", /^day-of-week field: "L-2"/],
    ["0 0 * * FRI#0", /^day-of-week field: "FRI#0": V#k takes k from 1 to 5/],
    ["0 0 * * 1#6", /^day-of-week field: "1#6": V#k takes k from 1 to 5/],
    ["0 0 * * FRI#", /^day-of-week field: "FRI#": # needs a number from 1 to 5/],
    ["0 0 * * L#2", /^day-of-week field: "L#2" is not a day-of-week item/],
    ["0 0 * * 8#1", /^day-of-week field: 8 is out of range 0-7/],
    ["0 0 * * 8L", /^day-of-week field: 8 is out of range 0-7/],
    ["0 0 * * FOOL", /^day-of-week field: "FOO" is not a day name/],
  ])("%s", (text, message) => {
    const result = parseCron(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]).toMatch(message);
  });

  it.each(["0 0 31W 4 *", "0 0 30W 2 *", "0 0 L-29 2 *", "0 0 L-30 2 *", "0 0 31W 2,4,6 *"])(
    "%s: an expression that can never fire is refused",
    (cron) => {
      let error: unknown;
      try {
        nextOccurrences(
          { type: "cron", cron },
          { after: new Date("2026-01-01T00:00:00Z"), count: 1 },
        );
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors).toEqual([
        {
          field: "schedule.cron",
          message:
            "the day-of-month, month and day-of-week fields never match a real date within 30 years",
        },
      ]);
    },
  );
});
