/**
 * dstWarnings at its edges (issue 36, docs/schedules.md#cron, docs/schedules.md#rrule): seconds in a
 * wall time, several fixed-time fires in one gap, a schedule's bounds, an rrule's gaps of minutes, hours
 * and a day and its repeated hour, a once schedule DST does not touch, and the bound on sentences.
 * Every sentence is worked out by hand from the zones' rules.
 */
import { describe, expect, it } from "vitest";
import { dstWarnings, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const YEAR_MS = 366 * 86_400_000;

function warnings(input: Record<string, unknown>, from: string, horizonMs = YEAR_MS): string[] {
  const spec = parseSchedule(input, { referenceAt: at(from) });
  return dstWarnings(spec, at(from), horizonMs);
}

describe("dstWarnings of cron schedules", () => {
  it("shows the seconds of a fire that has them", () => {
    expect(
      warnings(
        { type: "cron", cron: "30 30 2 * * *", timezone: "America/New_York" },
        "2024-01-01T00:00:00Z",
      ),
    ).toEqual([
      "In America/New_York, on 2024-03-10 clocks jump from 02:00 to 03:00: the fire at 02:30:30 does not exist and runs at 03:00 (2024-03-10T07:00:00Z) instead.",
    ]);
  });

  it("says that several fixed-time fires in one gap run once", () => {
    expect(
      warnings(
        { type: "cron", cron: "0,30 2 * * *", timezone: "America/New_York" },
        "2024-01-01T00:00:00Z",
      ),
    ).toEqual([
      "In America/New_York, on 2024-03-10 clocks jump from 02:00 to 03:00: the 2 fires from 02:00 do not exist and run once at 03:00 (2024-03-10T07:00:00Z) instead.",
    ]);
  });

  it("speaks only of the changes of clock between start_at and end_at", () => {
    const berlin = { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" };
    expect(warnings({ ...berlin, end_at: "2024-06-01T00:00:00Z" }, "2024-01-01T00:00:00Z")).toEqual(
      [
        "In Europe/Berlin, on 2024-03-31 clocks jump from 02:00 to 03:00: the fire at 02:30 does not exist and runs at 03:00 (2024-03-31T01:00:00Z) instead.",
      ],
    );
    expect(
      warnings({ ...berlin, start_at: "2024-06-01T00:00:00Z" }, "2024-01-01T00:00:00Z"),
    ).toEqual([
      "In Europe/Berlin, on 2024-10-27 clocks go back from 03:00 to 02:00: 1 fire in the repeated time runs once, on the first pass.",
    ]);
  });

  it("keeps seven sentences and counts the rest", () => {
    const rules = Array.from({ length: 9 }, (_, i) => `${i} 2 * * *`);
    const said = warnings(
      { type: "cron", cron: rules, timezone: "America/New_York" },
      "2024-01-01T00:00:00Z",
    );
    expect(said).toHaveLength(8);
    expect(said[0]).toBe(
      'In America/New_York, for "0 2 * * *", on 2024-03-10 clocks jump from 02:00 to 03:00: the fire at 02:00 does not exist and runs at 03:00 (2024-03-10T07:00:00Z) instead.',
    );
    expect(said[7]).toBe(
      "2 more changes of clock in the next year move, skip or repeat fires of this schedule: its preview lists them.",
    );
  });
});

describe("dstWarnings of rrule schedules", () => {
  it("says where a gap's only instance runs, and that a repeated one runs once", () => {
    expect(
      warnings(
        {
          type: "rrule",
          rrule: "DTSTART;TZID=America/New_York:20240101T023000\nRRULE:FREQ=DAILY",
          end_at: "2024-06-01T00:00:00Z",
        },
        "2024-01-01T00:00:00Z",
      ),
    ).toEqual([
      "In America/New_York, on 2024-03-10 clocks jump from 02:00 to 03:00: the instance at 02:30 does not exist and runs at 03:30 (2024-03-10T07:30:00Z) instead, read with the offset before the gap (RFC 5545 3.3.5).",
    ]);
    expect(
      warnings(
        {
          type: "rrule",
          rrule: "DTSTART;TZID=America/New_York:20240101T013000\nRRULE:FREQ=DAILY",
          start_at: "2024-06-01T00:00:00Z",
        },
        "2024-01-01T00:00:00Z",
      ),
    ).toEqual([
      "In America/New_York, on 2024-11-03 clocks go back from 02:00 to 01:00: 1 fire in the repeated time runs once, on the first pass (RFC 5545 3.3.5).",
    ]);
  });

  it.each([
    [
      "Australia/Lord_Howe",
      "20240101T020000\nRRULE:FREQ=MINUTELY;INTERVAL=10;BYHOUR=2",
      "2024-01-01T00:00:00Z",
      "In Australia/Lord_Howe, on 2024-10-06 clocks jump from 02:00 to 02:30: 3 fires from 02:00 do not exist and run 30 minutes later",
    ],
    [
      "Antarctica/Troll",
      "20240101T010000\nRRULE:FREQ=DAILY;BYHOUR=1,2",
      "2024-01-01T00:00:00Z",
      "In Antarctica/Troll, on 2024-03-31 clocks jump from 01:00 to 03:00: 2 fires from 01:00 do not exist and run 2 hours later",
    ],
    [
      "Pacific/Apia",
      "20111201T060000\nRRULE:FREQ=DAILY;BYHOUR=6,12",
      "2011-12-01T00:00:00Z",
      "In Pacific/Apia, clocks jump from 2011-12-30 00:00 to 2011-12-31 00:00: 2 fires from 06:00 do not exist and run 1 day later",
    ],
  ])("names the length of a gap in %s", (zone, rule, from, sentence) => {
    const said = warnings(
      { type: "rrule", rrule: `DTSTART;TZID=${zone}:${rule}` },
      from,
      zone === "Pacific/Apia" ? 30 * 86_400_000 : YEAR_MS,
    );
    expect(said[0]).toBe(
      `${sentence}, read with the offset before the gap (RFC 5545 3.3.5); one that meets another instance runs once.`,
    );
  });
});

describe("dstWarnings of once schedules", () => {
  it("says nothing of a local run_at that exists once", () => {
    expect(
      warnings(
        { type: "once", run_at: "2024-07-01T09:00:00", timezone: "Europe/Berlin" },
        "2024-01-01T00:00:00Z",
      ),
    ).toEqual([]);
  });
});
