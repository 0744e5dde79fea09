/**
 * How the text of a recurrence is read (docs/schedules.md#rrule, RFC 5545 3.1 to 3.3.5): folded lines,
 * parameters, date-time values and the problems each malformed line is named with (issue 36 item 7).
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";

function next(rrule: string, after = "2026-01-01T00:00:00Z", count = 3): string[] {
  return nextOccurrences({ type: "rrule", rrule }, { after: new Date(after), count }).map((d) =>
    d.toISOString().replace(".000", ""),
  );
}

function problems(rrule: string): string {
  try {
    next(rrule);
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => e.message).join("\n");
    throw error;
  }
  return "";
}

const START = "DTSTART;TZID=Europe/Berlin:20260105T093000\n";

describe("the text of a recurrence", () => {
  it("unfolds a line continued with a space or a tab, ignores blank lines and reads CRLF", () => {
    const folded =
      "DTSTART;TZID=Europe/Ber\n lin:20260105T093000\r\n\r\nRRULE:FREQ=DAI\n\tLY;COUNT=2\r\n";
    expect(next(folded)).toEqual(["2026-01-05T08:30:00Z", "2026-01-06T08:30:00Z"]);
  });

  it("reads a bare rule as an RRULE line, parameter names in any case and quoted values", () => {
    expect(next('DTSTART;tzid="Europe/Berlin":20260105T093000\nFREQ=DAILY;COUNT=1')).toEqual([
      "2026-01-05T08:30:00Z",
    ]);
    // A UTC start and a leap second read as the minute's last second.
    expect(next("DTSTART:20260105T093060Z\nRRULE:FREQ=DAILY;COUNT=1")).toEqual([
      "2026-01-05T09:30:59Z",
    ]);
  });

  it("names a line that is not NAME:VALUE and a parameter that is not NAME=VALUE", () => {
    expect(problems(`${START}RRULE:FREQ=DAILY\nTHIS LINE HAS NO COLON`)).toMatch(
      /line 3: expected NAME:VALUE such as RRULE:FREQ=DAILY \(RFC 5545 3\.1\)/,
    );
    expect(problems("DTSTART;TZID:20260105T093000\nRRULE:FREQ=DAILY")).toMatch(
      /line 1: parameter "TZID" must be NAME=VALUE \(RFC 5545 3\.2\)/,
    );
    expect(problems("DTSTART;=x;TZID=UTC:20260105T093000\nRRULE:FREQ=DAILY")).toMatch(
      /parameter "=x" must be NAME=VALUE/,
    );
  });

  it("refuses a date-time that is no calendar date or time", () => {
    for (const value of [
      "20261305T093000", // month 13
      "20260005T093000", // month 0
      "20260100T093000", // day 0
      "20260230T093000", // 30 February
      "20260105T243000", // hour 24
      "20260105T096000", // minute 60
      "20260105T093061", // second 61
      "2026-01-05T09:30:00", // not the basic format
    ]) {
      expect(problems(`DTSTART;TZID=Europe/Berlin:${value}\nRRULE:FREQ=DAILY`), value).toMatch(
        /is not a date-time such as 20260105T093000/,
      );
    }
  });

  it("refuses a DTSTART holding several values, a UTC time with a TZID, and lines it does not know", () => {
    expect(
      problems("DTSTART;TZID=Europe/Berlin:20260105T093000,20260106T093000\nRRULE:FREQ=DAILY"),
    ).toMatch(/DTSTART: holds exactly one date-time/);
    expect(problems("DTSTART;TZID=Europe/Berlin:20260105T093000Z\nRRULE:FREQ=DAILY")).toMatch(
      /a UTC time \(ending in Z\) must not have a TZID/,
    );
    expect(problems(`${START}${START}RRULE:FREQ=DAILY`)).toMatch(
      /DTSTART must occur once, not 2 times/,
    );
    expect(problems(`${START}RRULE:FREQ=DAILY\nSUMMARY:standup`)).toMatch(
      /line 3: SUMMARY is not a recurrence property/,
    );
    expect(problems(`${START}RRULE:FREQ=DAILY\nEXDATE;VALUE=DATE:20260106`)).toMatch(
      /VALUE=DATE is not supported/,
    );
    expect(problems(`${START}RRULE:FREQ=DAILY\nRDATE:2026-01-07`)).toMatch(
      /RDATE: "2026-01-07" is not a date-time/,
    );
  });

  it("adds RDATE and removes EXDATE values, floating ones read in DTSTART's zone", () => {
    const rule = `${START}RRULE:FREQ=DAILY;COUNT=3\nEXDATE:20260106T093000\nRDATE:20260110T120000Z`;
    expect(next(rule, "2026-01-01T00:00:00Z", 5)).toEqual([
      "2026-01-05T08:30:00Z",
      "2026-01-07T08:30:00Z",
      "2026-01-10T12:00:00Z",
    ]);
  });
});
