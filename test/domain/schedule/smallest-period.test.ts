/** The least gap between fires that the `min_period` quota checks (docs/security.md#quotas). */
import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../../src/domain/schedule/parse-schedule.js";
import { gapBelow } from "../../../src/domain/schedule/smallest-period.js";
import { instant } from "../../../src/domain/time.js";

const NOW = instant(Date.UTC(2026, 0, 5, 12, 0, 0));
const spec = (input: unknown) => parseSchedule(input, { referenceAt: NOW });
const HOUR = 3_600_000;
const cron = (rules: string | string[], timezone = "UTC") =>
  spec({ type: "cron", cron: rules, timezone });

describe("gapBelow", () => {
  it.each([
    ["* * * * * *", 2_000, 1_000],
    ["0,1 * * * * *", 2_000, 1_000],
    ["*/15 * * * *", HOUR, 900_000],
    ["0 0,23 * * *", 2 * HOUR, HOUR],
    ["0 9 * * 1-5", 2 * 86_400_000, 86_400_000],
  ])("finds the least gap of %s below %i ms: %i ms", (rules, min, expected) => {
    expect(gapBelow(cron(rules, "Europe/Berlin"), NOW, min)?.ms).toBe(expected);
  });

  it("answers null when no two fires are closer than the minimum", () => {
    expect(gapBelow(cron("*/15 * * * *"), NOW, 900_000)).toBeNull();
    expect(gapBelow(cron("0 9 * * 1"), NOW, 6 * 86_400_000)).toBeNull();
    expect(gapBelow(spec({ type: "interval", every: "PT2M" }), NOW, 120_000)).toBeNull();
    expect(gapBelow(spec({ type: "interval", every: "PT2M" }), NOW, 120_001)?.ms).toBe(120_000);
    expect(gapBelow(spec({ type: "once", run_at: "2026-02-01T00:00:00Z" }), NOW, HOUR)).toBeNull();
  });

  it("finds a dense rule of one day a year in a union, wherever the samples would stop", () => {
    // Issue 35: the 120 sampled fires of the daily rule never reached 24 June.
    const gap = gapBelow(cron(["0 9 * * *", "* * * 24 6 *"]), NOW, HOUR);
    expect(gap).toMatchObject({ ms: 1_000 });
    expect(gap!.between).toContain('"* * * 24 6 *"');
  });

  it("compares two rules' times only on days both match, and names the pair", () => {
    // Weekdays at 09:00, weekends at 10:00: never one hour apart on one day.
    expect(gapBelow(cron(["0 9 * * 1-5", "0 10 * * 0,6"]), NOW, 2 * HOUR)).toBeNull();
    const gap = gapBelow(cron(["0 9 * * 1-5", "30 9 * * 5"]), NOW, HOUR);
    expect(gap).toEqual({
      ms: 30 * 60_000,
      between: '"0 9 * * 1-5" at 09:00:00 and "30 9 * * 5" at 09:30:00 on one day',
    });
    // Quartz items: the last day of a month and the first of the next are one day apart.
    expect(gapBelow(cron(["0 23 L * *", "0 1 1 * *"]), NOW, 3 * HOUR)).toEqual({
      ms: 2 * HOUR,
      between: '"0 23 L * *" at 23:00:00 and "0 1 1 * *" at 01:00:00 1 day later',
    });
  });

  it("counts the real time between fires across a DST transition", () => {
    // 01:59 CET and 02:30 (in the gap: fired at 03:00 CEST) are one minute apart on 29 March 2026.
    const gap = gapBelow(cron(["59 1 * * *", "30 2 * * *"], "Europe/Berlin"), NOW, 10 * 60_000);
    expect(gap).toMatchObject({ ms: 60_000 });
    expect(gap!.between).toContain("across a DST transition");
    expect(gapBelow(cron("0 * * * *", "Europe/Berlin"), NOW, HOUR)).toBeNull();
  });

  it("answers the densest union the rules allow within the work budget", () => {
    // 30 expressions of one second a minute each: 43,200 times of day, 30 day scans.
    const rules = Array.from({ length: 30 }, (_, i) => `${i * 2} * * * * 1-5`);
    expect(gapBelow(cron(rules), NOW, 2_001)).toMatchObject({ ms: 2_000 });
    expect(gapBelow(cron(rules), NOW, 2_000)).toBeNull();
  });

  describe("edges (issue 36)", () => {
    const DAY = 86_400_000;

    it("names a gap between two rules that spans days", () => {
      expect(gapBelow(cron(["59 23 * * 1", "0 0 * * 3"]), NOW, 3 * DAY)).toEqual({
        ms: DAY + 60_000,
        between: '"59 23 * * 1" at 23:59:00 and "0 0 * * 3" at 00:00:00 2 days later',
      });
    });

    it("reads a shortcut's days, and passes over two rules firing at the same time", () => {
      expect(gapBelow(cron(["@daily", "0 12 * * *"]), NOW, 13 * HOUR)).toEqual({
        ms: 12 * HOUR,
        between: '"@daily" at 00:00:00 and "0 12 * * *" at 12:00:00 on one day',
      });
      // Same time on different days: one fire a day, a day apart.
      expect(gapBelow(cron(["0 9 * * 1-3", "0 9 * * 3-5"]), NOW, 2 * DAY)).toMatchObject({
        ms: DAY,
      });
    });

    it("stops at the schedule's end when it looks across a DST transition", () => {
      const bounded = spec({
        type: "cron",
        cron: "30 1 * * *",
        timezone: "America/New_York",
        end_at: "2026-11-01T07:00:00Z",
      });
      expect(gapBelow(bounded, instant(Date.UTC(2026, 9, 30)), 2 * HOUR)).toBeNull();
    });
  });

  describe("moved occurrences (on_excluded)", () => {
    const DAY = 86_400_000;
    const moved = (input: Record<string, unknown>) =>
      spec({ exclude: [{ days: "* * sat,sun" }], on_excluded: "previous", ...input });

    it("judges a cron schedule whose occurrences may move as if it fired on any date", () => {
      // Weekly: 7 days apart as written, but an occurrence moved to the previous free date can land
      // one day after the occurrence before it, whatever the calendar excludes.
      expect(gapBelow(cron("0 9 * * 1"), NOW, 7 * DAY)).toBeNull();
      const weekly = moved({ type: "cron", cron: "0 9 * * 1", timezone: "UTC" });
      expect(gapBelow(weekly, NOW, 7 * DAY)).toEqual({
        ms: DAY,
        between:
          "two fires at 09:00:00 on different dates (an excluded occurrence moves to another date at the same wall time)",
      });
      expect(gapBelow(weekly, NOW, DAY)).toBeNull();
      // Two rules never on one day as written, yet a moved one can land on the other's day.
      const pair = moved({ type: "cron", cron: ["0 9 * * 1-5", "0 10 * * 0,6"], timezone: "UTC" });
      expect(gapBelow(pair, NOW, 2 * HOUR)).toMatchObject({ ms: HOUR });
      expect(gapBelow(pair, NOW, HOUR)).toBeNull();
    });

    it("counts a forward DST transition between two moved fires", () => {
      const weekly = moved({ type: "cron", cron: "0 9 * * 1", timezone: "Europe/Berlin" });
      expect(gapBelow(weekly, NOW, DAY)).toMatchObject({ ms: DAY - HOUR });
      expect(gapBelow(weekly, NOW, DAY - HOUR)).toBeNull();
    });

    it("judges an interval whose occurrences may move", () => {
      const every = (text: string, extra: Record<string, unknown> = {}) =>
        spec({ type: "interval", every: text, timezone: "UTC", ...extra });
      expect(gapBelow(every("P3D"), NOW, 2 * DAY)).toBeNull();
      // Moved two days earlier, a fire lands one day after the fire before it.
      expect(
        gapBelow(moved({ type: "interval", every: "P3D", timezone: "UTC" }), NOW, 2 * DAY),
      ).toMatchObject({
        ms: DAY,
      });
      // Every 36 hours: moved a day, a fire is 12 hours from a neighbour.
      expect(
        gapBelow(moved({ type: "interval", every: "PT36H", timezone: "UTC" }), NOW, DAY),
      ).toMatchObject({
        ms: 12 * HOUR,
      });
      // Shorter than a day: no other date lies between two fires, nothing moves.
      expect(
        gapBelow(moved({ type: "interval", every: "PT20H", timezone: "UTC" }), NOW, 20 * HOUR),
      ).toBeNull();
    });
  });
});
