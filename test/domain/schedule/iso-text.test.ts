/**
 * ISO-8601 texts of schedules: instants, local wall times and fixed-length durations (docs/schedules.md#once, docs/schedules.md#interval, docs/schedules.md#bounds-and-jitter).
 */
import { describe, expect, it } from "vitest";
import {
  formatDuration,
  parseDateTime,
  parseDuration,
  parseInstantText,
} from "../../../src/domain/schedule/iso-text.js";

const utc = (text: string): number => Date.parse(text);

describe("parseInstantText", () => {
  it.each([
    ["2026-12-01T09:00:00Z", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01T09:00:00+01:00", "2026-12-01T08:00:00.000Z"],
    ["2026-12-01T09:00:00-05:30", "2026-12-01T14:30:00.000Z"],
    ["2026-12-01T09:00:00+0100", "2026-12-01T08:00:00.000Z"],
    ["2026-12-01T09:00Z", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01t09:00:00z", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01T09:00:00.250Z", "2026-12-01T09:00:00.250Z"],
    ["2024-02-29T23:59:59Z", "2024-02-29T23:59:59.000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseInstantText(text)).toEqual({ ok: true, value: utc(iso) });
  });

  it.each([
    ["2026-12-01T09:00:00", /has no offset/],
    ["2026-12-01", /a date without a time/],
    ["2026-13-01T09:00:00Z", /month 13, out of range/],
    ["2026-02-30T09:00:00Z", /day 30, which does not exist in 2026-02/],
    ["2025-02-29T09:00:00Z", /day 29/],
    ["2026-12-01T24:00:00Z", /time of day out of range/],
    ["2026-12-01T09:60:00Z", /time of day out of range/],
    ["2026-12-01T09:00:60Z", /time of day out of range/],
    ["2026-12-01T09:00:00+25:00", /invalid offset/],
    ["0000-01-01T00:00:00Z", /year 0000/],
    ["tomorrow", /not an ISO-8601 date and time/],
    ["2026-12-01 09:00:00Z", /not an ISO-8601/],
    ["2026-12-1T09:00:00Z", /not an ISO-8601/],
  ])("rejects %s", (text, message) => {
    const parsed = parseInstantText(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(message);
  });
});

describe("parseDateTime", () => {
  it("reads a local wall time without offset, seconds optional", () => {
    expect(parseDateTime("2026-12-01T09:00")).toEqual({
      ok: true,
      value: { wall: utc("2026-12-01T09:00:00Z"), hasFraction: false, offsetMs: null },
    });
  });

  it("notes a non-zero fraction", () => {
    const parsed = parseDateTime("2026-12-01T09:00:00.5");
    expect(parsed.ok && parsed.value.hasFraction).toBe(true);
  });
});

describe("parseDuration", () => {
  it.each([
    ["PT5M", 300],
    ["PT1S", 1],
    ["P1D", 86_400],
    ["P1W", 604_800],
    ["P1DT2H", 93_600],
    ["PT1H30M", 5400],
    ["P1W2D", 777_600],
    ["PT0.5H", 1800],
    ["PT1.5M", 90],
    ["pt10m", 600],
    [90, 90],
    ["90", 90],
    ["5m", 300],
    ["90s", 90],
    ["1h30m", 5400],
    ["2d", 172_800],
    ["1w2d3h4m5s", 788_645],
    ["1500ms", null],
    ["2000ms", 2],
  ])("reads %j as %i seconds", (value, seconds) => {
    expect(parseDuration(value, 1000)).toEqual(
      seconds === null
        ? { ok: false, problem: `"${value}" is not a whole number of seconds` }
        : { ok: true, value: seconds * 1000 },
    );
  });

  it("reads milliseconds where whole seconds are not required (the CLI's tuning flags)", () => {
    expect(parseDuration("500ms", 100, { wholeSeconds: false })).toEqual({ ok: true, value: 500 });
    expect(parseDuration("PT0.5S", 100, { wholeSeconds: false })).toEqual({ ok: true, value: 500 });
    expect(parseDuration("1s500ms", 100, { wholeSeconds: false })).toEqual({
      ok: true,
      value: 1500,
    });
  });

  it.each([
    ["P1M", /months and years have no fixed length; use a cron schedule/],
    ["P1Y", /months and years have no fixed length/],
    ["P1Y2D", /months and years/],
    ["PT0S", /at least 1 second/],
    [0, /at least 1 second/],
    [-5, /at least 1 second/],
    [1.5, /not a whole number of seconds/],
    ["PT0.5S", /not a whole number of seconds/],
    ["PT1.5H30M", /only the last component may have a fraction/],
    ["P", /not a duration such as 5m, 1h30m, 2d, PT5M/],
    ["PT", /not a duration/],
    ["P1DT", /not a duration/],
    ["5 minutes", /not a duration/],
    ["-PT5M", /not a duration/],
    ["5M", /not a duration/],
    ["30m1h", /not a duration/],
    ["1.5h", /not a duration/],
    ["", /not a duration/],
    ["P40000D", /at most 100 years/],
    [true, /a duration \(such as 5m or PT5M\) or a number of seconds/],
  ])("rejects %j", (value, message) => {
    const parsed = parseDuration(value, 1000);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(message);
  });

  it("accepts zero when the minimum is zero (jitter)", () => {
    expect(parseDuration("PT0S", 0)).toEqual({ ok: true, value: 0 });
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "PT0S"],
    [300, "PT5M"],
    [86_400, "P1D"],
    [604_800, "P7D"],
    [93_661, "P1DT2H1M1S"],
  ])("writes %i seconds as %s", (seconds, text) => {
    expect(formatDuration(seconds * 1000)).toBe(text);
  });
});
