/**
 * `exclude` (issue 22): dates, inclusive ranges, day rules and named calendars, read on the local dates
 * of the schedule's zone; excluded nominal times do not fire, previews list them as suppressed, and every
 * malformed item is refused naming its field. Expected instants are worked out by hand.
 */
import { describe, expect, it, vi } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import type { FieldError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import {
  calendarItemInput,
  describeOccurrences,
  excludedAt,
  nextDueAfter,
  parseCalendarItems,
  parseSchedule,
  scheduleToInput,
} from "../../../src/domain/schedule/schedule-spec.js";
import type { CalendarSnapshot } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const iso = (d: Date | number): string => new Date(d).toISOString().replace(".000Z", "Z");
const REFERENCE = at("2026-01-01T00:00:00Z");
const TODAY = Math.floor(REFERENCE / 86_400_000);

function holidays(version = 1): CalendarSnapshot {
  const parsed = parseCalendarItems(
    ["2026-12-25", { from: "2026-12-31", to: "2027-01-01" }],
    "items",
    TODAY,
  );
  return { name: "holidays", version, items: parsed.items };
}

function parse(input: Record<string, unknown>, calendars?: readonly CalendarSnapshot[]) {
  return parseSchedule(input, {
    referenceAt: REFERENCE,
    ...(calendars === undefined ? {} : { calendars: new Map(calendars.map((c) => [c.name, c])) }),
  });
}

function fires(input: Record<string, unknown>, after: string, count: number): string[] {
  return nextOccurrences(input as never, { after: new Date(after), count }).map(iso);
}

function errorsOf(
  input: Record<string, unknown>,
  calendars?: readonly CalendarSnapshot[],
): FieldError[] {
  try {
    parse(input, calendars);
  } catch (error) {
    if (error instanceof ValidationError) return [...error.errors];
    throw error;
  }
  throw new Error("expected a refusal");
}

const daily8 = { type: "cron", cron: "0 8 * * *", timezone: "Europe/Berlin" };

describe("exclude", () => {
  it("skips a date, an inclusive range and a day rule: daily at 08:00 except public holidays", () => {
    const schedule = {
      ...daily8,
      exclude: ["2026-12-25", { from: "2026-12-31", to: "2027-01-01" }, { days: "26 12 *" }],
    };
    expect(fires(schedule, "2026-12-23T12:00:00Z", 5)).toEqual([
      "2026-12-24T07:00:00Z",
      "2026-12-27T07:00:00Z",
      "2026-12-28T07:00:00Z",
      "2026-12-29T07:00:00Z",
      "2026-12-30T07:00:00Z",
    ]);
    expect(fires(schedule, "2026-12-30T12:00:00Z", 1)).toEqual(["2027-01-02T07:00:00Z"]);
  });

  it("takes the day fields' full grammar: weekends by day of week, the last day by L", () => {
    const schedule = {
      type: "cron",
      cron: "0 9 * * *",
      timezone: "UTC",
      exclude: [{ days: "* * sat,sun" }, { days: "L * ?" }],
    };
    // 2026-01-30 is a Friday; the 31st is a Saturday (and the last day); Feb 1 a Sunday.
    expect(fires(schedule, "2026-01-29T12:00:00Z", 3)).toEqual([
      "2026-01-30T09:00:00Z",
      "2026-02-02T09:00:00Z",
      "2026-02-03T09:00:00Z",
    ]);
    // March 31, 2026 is a Tuesday: excluded as the last day.
    expect(fires(schedule, "2026-03-30T12:00:00Z", 1)).toEqual(["2026-04-01T09:00:00Z"]);
  });

  it("reads the dates in the schedule's zone, not in UTC", () => {
    // 23:30 in New York on Dec 24 is Dec 25 in UTC: excluding Dec 25 in New York leaves it.
    const schedule = {
      type: "cron",
      cron: "30 23 * * *",
      timezone: "America/New_York",
      exclude: ["2026-12-25"],
    };
    expect(fires(schedule, "2026-12-24T12:00:00Z", 2)).toEqual([
      "2026-12-25T04:30:00Z",
      "2026-12-27T04:30:00Z",
    ]);
  });

  it("excludes an interval's fires on local dates of its timezone (UTC by default)", () => {
    const every6h = { type: "interval", every: "PT6H", start_at: "2026-06-01T00:00:00Z" };
    expect(fires({ ...every6h, exclude: ["2026-06-02"] }, "2026-06-01T12:00:00Z", 3)).toEqual([
      "2026-06-01T18:00:00Z",
      "2026-06-03T00:00:00Z",
      "2026-06-03T06:00:00Z",
    ]);
    // In Tokyo (+09:00) June 2 runs from 2026-06-01T15:00Z to 2026-06-02T15:00Z.
    const tokyo = { ...every6h, timezone: "Asia/Tokyo", exclude: ["2026-06-02"] };
    expect(fires(tokyo, "2026-06-01T12:00:00Z", 2)).toEqual([
      "2026-06-02T18:00:00Z",
      "2026-06-03T00:00:00Z",
    ]);
  });

  it("applies the DST rule first: a gap fire on an excluded date does not fire", () => {
    // New York 2026-03-08 02:30 does not exist: it would fire at 03:00 EDT (07:00Z) that day.
    const schedule = {
      type: "cron",
      cron: "30 2 * * *",
      timezone: "America/New_York",
      exclude: ["2026-03-08"],
    };
    expect(fires(schedule, "2026-03-07T12:00:00Z", 1)).toEqual(["2026-03-09T06:30:00Z"]);
  });

  it("names the excluded item of a named calendar", () => {
    const spec = parse({ ...daily8, exclude: [{ calendar: "holidays" }] }, [holidays()]);
    const hit = excludedAt(spec, at("2026-12-31T07:00:00Z"));
    expect(hit && [calendarItemInput(hit.item), hit.calendar]).toEqual([
      { from: "2026-12-31", to: "2027-01-01" },
      "holidays",
    ]);
    expect(excludedAt(spec, at("2026-12-30T07:00:00Z"))).toBeNull();
  });

  it("lists excluded nominal times in a preview as suppressed, with the item", () => {
    const spec = parse({ ...daily8, exclude: ["2026-12-25", { days: "26 12 *" }] });
    const [first, second] = describeOccurrences(spec, at("2026-12-24T12:00:00Z"), 2);
    expect(first && iso(first.at)).toBe("2026-12-27T07:00:00Z");
    expect(first?.suppressedBefore.map((s) => [s.kind, s.wall, s.exclusion?.item.kind])).toEqual([
      ["excluded", "2026-12-25T08:00:00", "date"],
      ["excluded", "2026-12-26T08:00:00", "days"],
    ]);
    expect(second?.suppressedBefore).toEqual([]);
  });

  it("lists every nominal time, excluded ones marked, when asked for nominal times", () => {
    const spec = parse({ ...daily8, exclude: ["2026-12-25"] });
    const listed = describeOccurrences(spec, at("2026-12-24T12:00:00Z"), 2, { nominal: true });
    expect(listed.map((o) => [iso(o.at), o.exclusion?.item.kind ?? null])).toEqual([
      ["2026-12-25T07:00:00Z", "date"],
      ["2026-12-26T07:00:00Z", null],
    ]);
  });

  it("jumps over a long excluded range in one search", () => {
    const spec = parse({
      type: "cron",
      cron: "* * * * * *",
      timezone: "UTC",
      exclude: [{ from: "2026-02-01", to: "2027-01-31" }],
    });
    expect(iso(nextDueAfter(spec, at("2026-01-31T23:59:59Z")) ?? 0)).toBe("2027-02-01T00:00:00Z");
  });

  it("resumes on a day whose midnight is skipped by a DST jump, at its first fire", () => {
    // America/Santiago jumps from 2026-09-06 00:00 to 01:00: that day starts at 01:00 (04:00Z), and its
    // 00:30, in the gap, fires at the jump.
    expect(
      fires(
        { type: "cron", cron: "30 0 * * *", timezone: "America/Santiago", exclude: ["2026-09-05"] },
        "2026-09-04T12:00:00Z",
        2,
      ),
    ).toEqual(["2026-09-06T04:00:00Z", "2026-09-07T03:30:00Z"]);
  });

  it("has nothing due once no nominal time remains before end_at", () => {
    const spec = parse({ ...daily8, end_at: "2026-12-26T12:00:00Z", exclude: ["2026-12-25"] });
    expect(nextDueAfter(spec, at("2026-12-26T08:00:00Z"))).toBeNull();
  });

  it("wakes at end_at when only excluded nominal times remain before it", () => {
    const spec = parse({
      ...daily8,
      end_at: "2026-12-26T12:00:00Z",
      exclude: ["2026-12-25", "2026-12-26"],
    });
    expect(iso(nextDueAfter(spec, at("2026-12-24T12:00:00Z")) ?? 0)).toBe("2026-12-26T12:00:00Z");
  });

  it("writes exclude back as written, a calendar by its name", () => {
    const spec = parse(
      {
        ...daily8,
        exclude: [
          "2026-12-25",
          { from: "2026-12-24", to: "2026-12-26" },
          { days: "25  12 *" },
          { calendar: "holidays" },
        ],
      },
      [holidays()],
    );
    expect(scheduleToInput(spec)).toEqual({
      ...daily8,
      exclude: [
        "2026-12-25",
        { from: "2026-12-24", to: "2026-12-26" },
        { days: "25 12 *" },
        { calendar: "holidays" },
      ],
    });
    const interval = parse({
      type: "interval",
      every: "PT1H",
      timezone: "Asia/Tokyo",
      exclude: ["2026-06-02"],
    });
    expect(scheduleToInput(interval)).toMatchObject({
      timezone: "Asia/Tokyo",
      exclude: ["2026-06-02"],
    });
  });

  it.each([
    [{ exclude: "2026-12-25" }, "schedule.exclude", /must be a list/],
    [{ exclude: ["2026-13-01"] }, "schedule.exclude.0", /is not a real date/],
    [{ exclude: ["2026-02-29"] }, "schedule.exclude.0", /is not a real date/],
    [{ exclude: ["25.12.2026"] }, "schedule.exclude.0", /is not a date such as 2026-12-25/],
    [{ exclude: [20261225] }, "schedule.exclude.0", /must be a date/],
    [
      { exclude: [{ from: "2026-12-26", to: "2026-12-24" }] },
      "schedule.exclude.0.to",
      /must not be before from/,
    ],
    [{ exclude: [{ from: "2026-12-24" }] }, "schedule.exclude.0.to", /must be a date/],
    [
      { exclude: [{ from: "2026-12-24", to: "2026-12-26", by: 1 }] },
      "schedule.exclude.0",
      /unknown field "by"/,
    ],
    [{ exclude: [{ days: "25 12" }] }, "schedule.exclude.0.days", /three day fields/],
    [{ exclude: [{ days: "0 0 25 12 *" }] }, "schedule.exclude.0.days", /three day fields/],
    [
      { exclude: [{ days: "32 12 *" }] },
      "schedule.exclude.0.days",
      /^day-of-month field: 32 is out of range/,
    ],
    [{ exclude: [{ days: "* * L" }] }, "schedule.exclude.0.days", /^day-of-week field: a lone "L"/],
    [{ exclude: [{ days: "31 2 *" }] }, "schedule.exclude.0.days", /never matches a real date/],
    [
      { exclude: [{ calendar: "holidays" }] },
      "schedule.exclude.0.calendar",
      /no calendar named "holidays"/,
    ],
    [{ exclude: [{ calendar: "a/b" }] }, "schedule.exclude.0.calendar", /must be a calendar name/],
    [{ exclude: [true] }, "schedule.exclude.0", /must be a date .* a calendar/],
    [
      { exclude: Array.from({ length: 1001 }, () => "2026-12-25") },
      "schedule.exclude",
      /at most 1000/,
    ],
    [
      { cron: "0 9 * * sat", exclude: [{ days: "* * sat,sun" }] },
      "schedule.exclude",
      /excludes every occurrence within 30 years/,
    ],
    [
      { end_at: "2026-12-27T00:00:00Z", exclude: [{ from: "2026-01-01", to: "2026-12-31" }] },
      "schedule.exclude",
      /excludes every occurrence before end_at/,
    ],
  ])("refuses %j naming %s", (patch, field, message) => {
    const errors = errorsOf({ ...daily8, ...patch }, []);
    expect(errors.map((e) => e.field)).toEqual([field]);
    expect(errors[0]?.message).toMatch(message);
  });

  it("refuses exclude on a once schedule", () => {
    expect(
      errorsOf({ type: "once", run_at: "2026-06-01T09:00:00Z", exclude: ["2026-06-01"] }),
    ).toEqual([{ field: "schedule.exclude", message: "is not a field of a once schedule" }]);
  });

  it("refuses a named calendar where none can be read (nextOccurrences)", () => {
    expect(() =>
      fires({ ...daily8, exclude: [{ calendar: "holidays" }] }, "2026-06-01T00:00:00Z", 1),
    ).toThrow(/schedule.exclude.0.calendar: named calendars are kept by a scheduler/);
  });

  it("refuses a calendar that names another calendar", () => {
    expect(
      parseCalendarItems(["2026-12-25", { calendar: "other" }], "items", TODAY).errors,
    ).toEqual([{ field: "items.1", message: "a calendar cannot name another calendar" }]);
  });
});

describe("exclusions that leave no fire (the work of the search, counted in zone probes)", () => {
  // Every weekday excluded from a weekday schedule: nothing ever fires.
  const input = (timezone: string) => ({
    type: "cron",
    cron: "0 9 * * 1-5",
    timezone,
    exclude: [{ days: "* * mon-fri" }],
  });
  /** Intl probes (one per offset read while a year's table is built) made by `run`. */
  function probes(run: () => unknown): number {
    const spy = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    try {
      run();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  }

  it("are refused after searching the 30 years the check asks for, not the 400 a task may search", () => {
    const validated = probes(() => {
      expect(() => parseSchedule(input("Europe/Vilnius"), { referenceAt: REFERENCE })).toThrow(
        ValidationError,
      );
    });
    const spec = parseSchedule(input("Europe/Riga"), {
      referenceAt: REFERENCE,
      checkReachable: false,
    });
    const stored = probes(() => {
      expect(nextDueAfter(spec, REFERENCE)).toBeNull();
    });
    expect(validated).toBeGreaterThan(0);
    expect(validated * 5).toBeLessThan(stored);
    // The years a task's search built stay cached for its next search: none is built again.
    const again = probes(() => {
      expect(nextDueAfter(spec, REFERENCE)).toBeNull();
    });
    expect(again).toBe(0);
  });
});
