/**
 * describeOccurrences beyond cron (issue 36, docs/schedules.md): a once schedule already past, an
 * rrule's instances in a gap and a fold and its RDATEs, an interval to its end, moved occurrences
 * (carried past `after`, or moved before it), and an excluded stretch longer than the suppressed list.
 * Expected instants are worked out by hand from the zones' rules.
 */
import { describe, expect, it } from "vitest";
import {
  describeOccurrences,
  MAX_SUPPRESSED_LISTED,
} from "../../../src/domain/schedule/describe-occurrences.js";
import { parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const iso = (t: number): string => new Date(t).toISOString().replace(".000Z", "Z");

function spec(input: Record<string, unknown>, reference = "2024-01-01T00:00:00Z"): ScheduleSpec {
  return parseSchedule(input, { referenceAt: at(reference) });
}

function list(s: ScheduleSpec, after: string, count: number) {
  return describeOccurrences(s, at(after), count).map((o) => ({
    at: iso(o.at),
    wall: o.wall,
    note: o.note,
    ...(o.movedFrom === undefined
      ? {}
      : { movedFrom: { at: iso(o.movedFrom.at), wall: o.movedFrom.wall } }),
    suppressed: o.suppressedBefore.length,
  }));
}

describe("describeOccurrences", () => {
  it("lists nothing for a once schedule whose time has passed", () => {
    const once = spec({ type: "once", run_at: "2024-03-01T09:00:00Z" });
    expect(list(once, "2024-02-01T00:00:00Z", 3).map((o) => o.at)).toEqual([
      "2024-03-01T09:00:00Z",
    ]);
    expect(list(once, "2024-03-01T09:00:00Z", 3)).toEqual([]);
  });

  it("notes an rrule instance read across a gap, one in a fold, and none on an RDATE", () => {
    const daily = spec({
      type: "rrule",
      rrule: "DTSTART;TZID=America/New_York:20240101T023000\nRRULE:FREQ=DAILY",
    });
    expect(list(daily, "2024-03-09T12:00:00Z", 1)).toEqual([
      {
        at: "2024-03-10T07:30:00Z",
        wall: "2024-03-10T03:30:00",
        note: { kind: "gap_shifted", nominalWall: "2024-03-10T02:30:00", collapsed: 0 },
        suppressed: 0,
      },
    ]);
    const early = spec({
      type: "rrule",
      rrule: "DTSTART;TZID=America/New_York:20240101T013000\nRRULE:FREQ=DAILY",
    });
    expect(list(early, "2024-11-02T12:00:00Z", 1)[0]).toMatchObject({
      at: "2024-11-03T05:30:00Z",
      wall: "2024-11-03T01:30:00",
      note: { kind: "overlap_first" },
    });
    const extra = spec({
      type: "rrule",
      rrule:
        "DTSTART;TZID=Europe/Berlin:20240105T090000\nRRULE:FREQ=WEEKLY;COUNT=1\nRDATE;TZID=Europe/Berlin:20240110T120000",
    });
    expect(list(extra, "2024-01-06T00:00:00Z", 3)).toEqual([
      { at: "2024-01-10T11:00:00Z", wall: "2024-01-10T12:00:00", note: null, suppressed: 0 },
    ]);
  });

  it("lists an interval's fires up to its end", () => {
    const hourly = spec({
      type: "interval",
      every: "PT1H",
      start_at: "2024-01-01T00:00:00Z",
      end_at: "2024-01-01T02:00:00Z",
    });
    expect(list(hourly, "2024-01-01T00:30:00Z", 5).map((o) => [o.at, o.wall])).toEqual([
      ["2024-01-01T01:00:00Z", "2024-01-01T01:00:00"],
      ["2024-01-01T02:00:00Z", "2024-01-01T02:00:00"],
    ]);
  });

  describe("with moved occurrences", () => {
    const monthly = (onExcluded: "previous" | "next") =>
      spec(
        {
          type: "cron",
          cron: "0 9 10 * *",
          timezone: "UTC",
          exclude: ["2024-03-10"],
          on_excluded: onExcluded,
        },
        "2024-01-01T00:00:00Z",
      );

    it("lists one at its moved instant, saying where it came from", () => {
      expect(list(monthly("next"), "2024-03-01T00:00:00Z", 2)).toEqual([
        {
          at: "2024-03-11T09:00:00Z",
          wall: "2024-03-11T09:00:00",
          note: null,
          movedFrom: { at: "2024-03-10T09:00:00Z", wall: "2024-03-10T09:00:00" },
          suppressed: 0,
        },
        { at: "2024-04-10T09:00:00Z", wall: "2024-04-10T09:00:00", note: null, suppressed: 0 },
      ]);
    });

    it("lists one moved to the next date first when `after` falls between its nominal time and its move", () => {
      expect(list(monthly("next"), "2024-03-10T12:00:00Z", 1)).toMatchObject([
        { at: "2024-03-11T09:00:00Z", movedFrom: { at: "2024-03-10T09:00:00Z" } },
      ]);
    });

    it("leaves out one moved to the previous date at or before `after`", () => {
      expect(list(monthly("previous"), "2024-03-09T12:00:00Z", 1)).toMatchObject([
        { at: "2024-04-10T09:00:00Z" },
      ]);
      expect(list(monthly("previous"), "2024-03-01T00:00:00Z", 1)).toMatchObject([
        { at: "2024-03-09T09:00:00Z", movedFrom: { at: "2024-03-10T09:00:00Z" } },
      ]);
    });
  });

  it("jumps an excluded stretch longer than the suppressed list, listing the first of it", () => {
    const daily = spec({
      type: "cron",
      cron: "0 9 * * *",
      timezone: "UTC",
      exclude: [{ from: "2024-02-01", to: "2024-07-31" }],
    });
    const [first] = describeOccurrences(daily, at("2024-01-31T12:00:00Z"), 1);
    expect(iso(first!.at)).toBe("2024-08-01T09:00:00Z");
    expect(first!.suppressedBefore).toHaveLength(MAX_SUPPRESSED_LISTED);
    expect(iso(first!.suppressedBefore[0]!.at)).toBe("2024-02-01T09:00:00Z");
  });
});
