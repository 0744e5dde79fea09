/**
 * describeOccurrences and dstWarnings: what a user is shown before DST happens (docs/schedules.md#cron). Expected
 * instants are worked out by hand from the zones' rules.
 */
import { describe, expect, it } from "vitest";
import {
  describeOccurrences,
  dstWarnings,
  parseSchedule,
} from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const YEAR_MS = 366 * 86_400_000;

function cron(expression: string, timezone: string, referenceAt = "2024-01-01T00:00:00Z") {
  return parseSchedule(
    { type: "cron", cron: expression, timezone },
    { referenceAt: at(referenceAt) },
  );
}

function summary(spec: ScheduleSpec, after: string, count: number) {
  return describeOccurrences(spec, at(after), count).map((o) => ({
    at: new Date(o.at).toISOString().replace(".000Z", "Z"),
    wall: `${o.wall}${o.offset}`,
    note: o.note,
    suppressed: o.suppressedBefore.map((s) => ({
      kind: s.kind,
      at: new Date(s.at).toISOString().replace(".000Z", "Z"),
      wall: s.wall,
    })),
  }));
}

describe("describeOccurrences", () => {
  it("marks a gap fire with the wall time that did not exist", () => {
    expect(summary(cron("30 2 * * *", "America/New_York"), "2024-03-09T12:00:00Z", 2)).toEqual([
      {
        at: "2024-03-10T07:00:00Z",
        wall: "2024-03-10T03:00:00-04:00",
        note: { kind: "gap_shifted", nominalWall: "2024-03-10T02:30:00", collapsed: 0 },
        suppressed: [],
      },
      { at: "2024-03-11T06:30:00Z", wall: "2024-03-11T02:30:00-04:00", note: null, suppressed: [] },
    ]);
  });

  it("counts the matches that collapsed into one gap fire", () => {
    const [first] = summary(cron("0,30 2 * * *", "Europe/Berlin"), "2024-03-30T12:00:00Z", 1);
    expect(first?.note).toEqual({
      kind: "gap_shifted",
      nominalWall: "2024-03-31T02:00:00",
      collapsed: 1,
    });
  });

  it("lists a fixed-time job's suppressed second pass in an overlap", () => {
    expect(summary(cron("30 1 * * *", "America/New_York"), "2026-10-31T12:00:00Z", 2)).toEqual([
      {
        at: "2026-11-01T05:30:00Z",
        wall: "2026-11-01T01:30:00-04:00",
        note: { kind: "overlap_first" },
        suppressed: [],
      },
      {
        at: "2026-11-02T06:30:00Z",
        wall: "2026-11-02T01:30:00-05:00",
        note: null,
        suppressed: [
          { kind: "overlap_repeat", at: "2026-11-01T06:30:00Z", wall: "2026-11-01T01:30:00" },
        ],
      },
    ]);
  });

  it("marks a wildcard job's two passes", () => {
    const notes = summary(cron("*/30 1 * * *", "America/New_York"), "2026-10-31T12:00:00Z", 4).map(
      (o) => [o.at, o.note?.kind],
    );
    expect(notes).toEqual([
      ["2026-11-01T05:00:00Z", "overlap_first"],
      ["2026-11-01T05:30:00Z", "overlap_first"],
      ["2026-11-01T06:00:00Z", "overlap_second"],
      ["2026-11-01T06:30:00Z", "overlap_second"],
    ]);
  });

  it("lists a wildcard job's wall times that a gap skipped", () => {
    const [first] = summary(cron("*/30 2 * * *", "Europe/Berlin"), "2024-03-30T12:00:00Z", 1);
    expect(first?.at).toBe("2024-04-01T00:00:00Z");
    expect(first?.suppressed).toEqual([
      { kind: "gap_skipped", at: "2024-03-31T01:00:00Z", wall: "2024-03-31T02:00:00" },
      { kind: "gap_skipped", at: "2024-03-31T01:00:00Z", wall: "2024-03-31T02:30:00" },
    ]);
  });

  it("lists a fixed-time job's fire lost in Apia's skipped day", () => {
    const spec = cron("0 12 * * *", "Pacific/Apia", "2011-12-01T00:00:00Z");
    const [, second] = summary(spec, "2011-12-29T00:00:00Z", 2);
    expect(second).toEqual({
      at: "2011-12-30T22:00:00Z",
      wall: "2011-12-31T12:00:00+14:00",
      note: null,
      suppressed: [
        { kind: "jump_skipped", at: "2011-12-30T10:00:00Z", wall: "2011-12-30T12:00:00" },
      ],
    });
  });

  it("marks the moved wall time of a once schedule", () => {
    const spec = parseSchedule(
      { type: "once", run_at: "2024-10-06T02:10:00", timezone: "Australia/Lord_Howe" },
      { referenceAt: at("2024-01-01T00:00:00Z") },
    );
    expect(summary(spec, "2024-01-01T00:00:00Z", 3)).toEqual([
      {
        at: "2024-10-05T15:30:00Z",
        wall: "2024-10-06T02:30:00+11:00",
        note: { kind: "gap_shifted", nominalWall: "2024-10-06T02:10:00", collapsed: 0 },
        suppressed: [],
      },
    ]);
  });

  it("describes intervals in UTC, without DST notes", () => {
    const spec = parseSchedule(
      { type: "interval", every: "P1D", start_at: "2024-03-30T23:00:00Z" },
      { referenceAt: at("2024-01-01T00:00:00Z") },
    );
    expect(summary(spec, "2024-03-30T00:00:00Z", 2).map((o) => [o.wall, o.note])).toEqual([
      ["2024-03-30T23:00:00+00:00", null],
      ["2024-03-31T23:00:00+00:00", null],
    ]);
  });
});

describe("dstWarnings", () => {
  it("warns that a fixed-time fire moves in a gap", () => {
    expect(
      dstWarnings(cron("30 2 * * *", "America/New_York"), at("2024-01-01T00:00:00Z"), YEAR_MS),
    ).toEqual([
      "In America/New_York, on 2024-03-10 clocks jump from 02:00 to 03:00: the fire at 02:30 does not exist and runs at 03:00 (2024-03-10T07:00:00Z) instead.",
    ]);
  });

  it("warns about both transitions of a year for a job that falls in both", () => {
    const warnings = dstWarnings(
      cron("30 2 * * *", "Europe/Berlin"),
      at("2024-01-01T00:00:00Z"),
      YEAR_MS,
    );
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toBe(
      "In Europe/Berlin, on 2024-10-27 clocks go back from 03:00 to 02:00: 1 fire in the repeated time runs once, on the first pass.",
    );
  });

  it("warns that a wildcard job fires twice in an overlap and skips a gap", () => {
    const warnings = dstWarnings(
      cron("*/30 1 * * *", "America/New_York"),
      at("2026-01-01T00:00:00Z"),
      YEAR_MS,
    );
    expect(warnings).toEqual([
      "In America/New_York, on 2026-11-01 clocks go back from 02:00 to 01:00: 2 fires in the repeated time run twice, once on each pass.",
    ]);
    const skipping = dstWarnings(
      cron("*/30 2 * * *", "America/New_York"),
      at("2026-01-01T00:00:00Z"),
      YEAR_MS,
    );
    expect(skipping[0]).toMatch(/2 fires in the skipped time do not happen/);
  });

  it("says a change of clock over 3 hours is not caught up", () => {
    const warnings = dstWarnings(
      cron("0 12 * * *", "Pacific/Apia", "2011-06-01T00:00:00Z"),
      at("2011-12-01T00:00:00Z"),
      30 * 86_400_000,
    );
    expect(warnings).toEqual([
      "In Pacific/Apia, clocks jump from 2011-12-30 00:00 to 2011-12-31 00:00 (a change of clock, not DST): 1 fire in the skipped time does not happen and is not caught up.",
    ]);
  });

  it("says nothing for a job DST does not touch, or a zone without DST", () => {
    expect(
      dstWarnings(cron("0 9 * * *", "Europe/Berlin"), at("2024-01-01T00:00:00Z"), YEAR_MS),
    ).toEqual([]);
    expect(
      dstWarnings(cron("*/5 * * * *", "Asia/Kathmandu"), at("2024-01-01T00:00:00Z"), YEAR_MS),
    ).toEqual([]);
  });

  it("warns about a once schedule's moved or doubled wall time", () => {
    const ref = { referenceAt: at("2026-01-01T00:00:00Z") };
    const moved = parseSchedule(
      { type: "once", run_at: "2026-03-08T02:30", timezone: "America/New_York" },
      ref,
    );
    const doubled = parseSchedule(
      { type: "once", run_at: "2026-11-01T01:30", timezone: "America/New_York" },
      ref,
    );
    expect(dstWarnings(moved, ref.referenceAt, YEAR_MS)[0]).toMatch(
      /does not exist .* runs at 2026-03-08 03:00/,
    );
    expect(dstWarnings(doubled, ref.referenceAt, YEAR_MS)[0]).toMatch(
      /happens twice .*\(2026-11-01T05:30:00Z\)/,
    );
  });

  it("says nothing for intervals", () => {
    const spec = parseSchedule(
      { type: "interval", every: "P1D" },
      { referenceAt: at("2024-01-01T00:00:00Z") },
    );
    expect(dstWarnings(spec, at("2024-01-01T00:00:00Z"), YEAR_MS)).toEqual([]);
  });
});
