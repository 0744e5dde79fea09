/**
 * The rrule schedule type by example (docs/schedules.md#recurrence-rules-rfc-5545): the rules, the DST rule
 * of RFC 5545 3.3.5 on real transitions, the refusals, and what the two references get wrong.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import { dstWarnings, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";

function next(rrule: string, after: string, count = 5): string[] {
  return nextOccurrences({ type: "rrule", rrule }, { after: new Date(after), count }).map((d) =>
    d.toISOString().replace(".000", ""),
  );
}

function problems(rrule: string): string[] {
  try {
    nextOccurrences(
      { type: "rrule", rrule },
      { after: new Date("2026-01-01T00:00:00Z"), count: 1 },
    );
  } catch (error) {
    if (error instanceof ValidationError)
      return error.errors.map((e) => `${e.field}: ${e.message}`);
    throw error;
  }
  return [];
}

describe("rrule schedules", () => {
  it("fire every other Monday at 09:30 in Berlin (the issue's example)", () => {
    const rule =
      "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO";
    expect(next(rule, "2026-03-01T00:00:00Z", 4)).toEqual([
      "2026-03-02T08:30:00Z",
      "2026-03-16T08:30:00Z",
      "2026-03-30T07:30:00Z", // summer time from March 29
      "2026-04-13T07:30:00Z",
    ]);
  });

  it("say the last weekday of each quarter and the second Tuesday of odd months", () => {
    const quarter =
      "DTSTART;TZID=Europe/Berlin:20260101T170000\nRRULE:FREQ=MONTHLY;BYMONTH=3,6,9,12;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1";
    expect(next(quarter, "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-03-31T15:00:00Z",
      "2026-06-30T15:00:00Z",
      "2026-09-30T15:00:00Z",
      "2026-12-31T16:00:00Z",
    ]);
    const odd =
      "dtstart;tzid=Europe/Berlin:20260101T170000\nrrule:freq=monthly;bymonth=1,3,5;byday=2tu";
    expect(next(odd, "2026-01-01T00:00:00Z", 3)).toEqual([
      "2026-01-13T16:00:00Z",
      "2026-03-10T16:00:00Z",
      "2026-05-12T15:00:00Z",
    ]);
  });

  it("find a sparse rule's next instance decades ahead (Monday the 29th of February)", () => {
    const rule =
      "DTSTART;TZID=Europe/Berlin:20260101T090000\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO";
    expect(next(rule, "2026-01-01T00:00:00Z", 3)).toEqual([
      "2044-02-29T08:00:00Z",
      "2072-02-29T08:00:00Z",
      "2112-02-29T08:00:00Z",
    ]);
  });

  it("take plain and ordinal weekdays together (both references drop one kind)", () => {
    // Every Monday of the year, and also the first Monday: the plain day wins, nothing is lost.
    const rule = "DTSTART;TZID=UTC:20260101T090000\nRRULE:FREQ=YEARLY;BYDAY=1FR,MO";
    expect(next(rule, "2026-01-01T00:00:00Z", 3)).toEqual([
      "2026-01-02T09:00:00Z",
      "2026-01-05T09:00:00Z",
      "2026-01-12T09:00:00Z",
    ]);
  });

  it("union the rules and RDATEs, minus EXDATEs; COUNT counts the rule's instances", () => {
    const rule = [
      "DTSTART:20260101T080000Z",
      "RRULE:FREQ=MINUTELY;INTERVAL=90;COUNT=3",
      "RDATE:20260101T070000Z",
      "EXDATE:20260101T093000Z",
    ].join("\n");
    expect(next(rule, "2025-12-31T00:00:00Z")).toEqual([
      "2026-01-01T07:00:00Z",
      "2026-01-01T08:00:00Z",
      "2026-01-01T11:00:00Z",
    ]);
  });

  describe("DST, by RFC 5545 3.3.5", () => {
    it("reads a nonexistent local time with the offset before the gap (cron fires at the transition)", () => {
      const rule = "DTSTART;TZID=America/New_York:20240309T023000\nRRULE:FREQ=DAILY";
      expect(next(rule, "2024-03-09T00:00:00Z", 3)).toEqual([
        "2024-03-09T07:30:00Z",
        "2024-03-10T07:30:00Z", // 02:30 EST, that is 03:30 EDT
        "2024-03-11T06:30:00Z",
      ]);
    });

    it("fires once in a repeated hour, and once for a gap hour that meets the next", () => {
      const back = "DTSTART;TZID=America/New_York:20241103T000000\nRRULE:FREQ=HOURLY;COUNT=4";
      expect(next(back, "2024-11-01T00:00:00Z")).toEqual([
        "2024-11-03T04:00:00Z",
        "2024-11-03T05:00:00Z", // 01:00 EDT; 01:00 EST does not fire
        "2024-11-03T07:00:00Z",
        "2024-11-03T08:00:00Z",
      ]);
      const forward = "DTSTART;TZID=America/New_York:20240310T000000\nRRULE:FREQ=HOURLY;COUNT=4";
      expect(next(forward, "2024-03-01T00:00:00Z")).toEqual([
        "2024-03-10T05:00:00Z",
        "2024-03-10T06:00:00Z",
        "2024-03-10T07:00:00Z", // 02:00 EST = 03:00 EDT: one instance
        "2024-03-10T08:00:00Z",
      ]);
    });

    it("moves Lord Howe's half-hour gap by half an hour, and Apia's skipped day by a day", () => {
      const howe = "DTSTART;TZID=Australia/Lord_Howe:20241005T021500\nRRULE:FREQ=DAILY;COUNT=2";
      expect(next(howe, "2024-10-01T00:00:00Z")).toEqual([
        "2024-10-04T15:45:00Z",
        "2024-10-05T15:45:00Z", // 02:15 (+10:30) = 02:45 (+11:00)
      ]);
      const apia = "DTSTART;TZID=Pacific/Apia:20111228T090000\nRRULE:FREQ=DAILY;COUNT=4";
      expect(next(apia, "2011-12-01T00:00:00Z")).toEqual([
        "2011-12-28T19:00:00Z",
        "2011-12-29T19:00:00Z",
        "2011-12-30T19:00:00Z", // Dec 30 09:00 (never existed) and Dec 31 09:00: one instant
        "2011-12-31T19:00:00Z",
      ]);
    });

    it("warns about the instances a transition moves or repeats", () => {
      const spec = parseSchedule(
        { type: "rrule", rrule: "DTSTART;TZID=America/New_York:20240301T023000\nRRULE:FREQ=DAILY" },
        { referenceAt: instant(Date.parse("2024-03-01T00:00:00Z")) },
      );
      expect(
        dstWarnings(spec, instant(Date.parse("2024-03-01T00:00:00Z")), 300 * 86_400_000),
      ).toEqual([
        "In America/New_York, on 2024-03-10 clocks jump from 02:00 to 03:00: the instance at 02:30 does not exist and runs at 03:30 (2024-03-10T07:30:00Z) instead, read with the offset before the gap (RFC 5545 3.3.5).",
      ]);
    });
  });

  it("refuse broken rules naming the line, the part and the rule of RFC 5545", () => {
    const start = "DTSTART;TZID=Europe/Berlin:20260105T093000\n";
    const cases: [string, RegExp][] = [
      [
        `${start}RRULE:FREQ=WEEKLY;BYDAY=1MO`,
        /line 2: RRULE: BYDAY: an ordinal weekday .* not WEEKLY \(RFC 5545 3\.3\.10\)/,
      ],
      [
        `${start}RRULE:FREQ=DAILY;COUNT=2;UNTIL=20270101T000000Z`,
        /COUNT and UNTIL must not both occur/,
      ],
      [`${start}RRULE:FREQ=DAILY;BYSETPOS=1`, /BYSETPOS must be used with another BYxxx/],
      [`${start}RRULE:FREQ=WEEKLY;BYMONTHDAY=1`, /BYMONTHDAY is not allowed with FREQ=WEEKLY/],
      [`${start}RRULE:FREQ=MONTHLY;BYYEARDAY=1`, /BYYEARDAY is not allowed with FREQ=MONTHLY/],
      [`${start}RRULE:FREQ=MONTHLY;BYWEEKNO=1`, /BYWEEKNO is allowed only with FREQ=YEARLY/],
      [
        `${start}RRULE:FREQ=YEARLY;BYWEEKNO=1;BYDAY=1MO`,
        /ordinal weekday is not allowed with FREQ=YEARLY and BYWEEKNO/,
      ],
      [`${start}RRULE:INTERVAL=2`, /FREQ is required/],
      [`${start}RRULE:FREQ=FORTNIGHTLY`, /FREQ: "FORTNIGHTLY" must be one of/],
      [`${start}RRULE:FREQ=DAILY;FREQ=DAILY`, /FREQ: a rule part must not occur more than once/],
      [`${start}RRULE:FREQ=DAILY;BYFOO=1`, /BYFOO is not a rule part of RFC 5545 3\.3\.10/],
      [`${start}RRULE:FREQ=YEARLY;BYMONTH=13`, /BYMONTH: "13" must be an integer from 1 to 12/],
      [`${start}RRULE:FREQ=MONTHLY;BYMONTHDAY=0`, /BYMONTHDAY: "0" must be an integer/],
      [`${start}RRULE:FREQ=DAILY;INTERVAL=0`, /INTERVAL: "0" must be a positive integer/],
      [
        `${start}RRULE:FREQ=DAILY;UNTIL=20270101T000000`,
        /UNTIL: .* must be a UTC time ending in Z/,
      ],
      [`${start}RRULE:FREQ=DAILY;UNTIL=20270101`, /UNTIL: .* is a DATE/],
      [
        `${start}RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30`,
        /has no instance within 30 years of DTSTART/,
      ],
      ["RRULE:FREQ=DAILY", /DTSTART is required/],
      ["DTSTART:20260105T093000\nRRULE:FREQ=DAILY", /a floating time has no zone/],
      ["DTSTART;TZID=Mars/Olympus:20260105T093000\nRRULE:FREQ=DAILY", /TZID/],
      ["DTSTART;TZID=Europe/Berlin:20260105\nRRULE:FREQ=DAILY", /needs a time of day/],
      [start, /at least one RRULE line is required/],
      [
        `${start}RRULE:FREQ=DAILY\nRDATE;VALUE=PERIOD:20260105T093000/PT1H`,
        /VALUE=PERIOD is not supported/,
      ],
    ];
    for (const [rule, message] of cases) {
      const found = problems(rule);
      expect(found.length, rule).toBeGreaterThan(0);
      expect(found.join("\n"), rule).toMatch(message);
      expect(
        found.every((p) => p.startsWith("schedule.rrule: ")),
        rule,
      ).toBe(true);
    }
  });

  it("preview an ended recurrence as nothing, while a task refuses it", () => {
    const rule = "DTSTART:20200101T000000Z\nRRULE:FREQ=DAILY;COUNT=2";
    expect(next(rule, "2026-01-01T00:00:00Z")).toEqual([]);
    expect(() =>
      parseSchedule(
        { type: "rrule", rrule: rule },
        { referenceAt: instant(Date.parse("2026-01-01T00:00:00Z")) },
      ),
    ).toThrow(/no instance in UTC within 30 years/);
  });
});
