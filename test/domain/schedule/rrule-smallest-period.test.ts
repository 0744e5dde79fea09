/**
 * The `min_period` check of a recurrence (docs/security.md#quotas), computed from the rules' structure,
 * every RDATE and every DST transition, not sampled: fixed cases, and a property against brute force
 * (the least gap between a generated schedule's first fires, enumerated one by one).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextFireAfter } from "../../../src/domain/schedule/next-fire.js";
import { parseSchedule } from "../../../src/domain/schedule/parse-schedule.js";
import { gapBelow } from "../../../src/domain/schedule/smallest-period.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const NOW = instant(Date.UTC(2026, 0, 5, 12, 0, 0));
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const rrule = (text: string, extra: Record<string, unknown> = {}) =>
  parseSchedule({ type: "rrule", rrule: text, ...extra }, { referenceAt: NOW });

const BERLIN = "DTSTART;TZID=Europe/Berlin:20260105T090000";

describe("gapBelow of a recurrence", () => {
  it.each([
    ["RRULE:FREQ=DAILY", DAY],
    ["RRULE:FREQ=DAILY;INTERVAL=3", 3 * DAY],
    ["RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", 14 * DAY],
    ["RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR", 2 * DAY],
    ["RRULE:FREQ=HOURLY;INTERVAL=3;BYMINUTE=0,30", 30 * MINUTE],
    ["RRULE:FREQ=HOURLY;INTERVAL=5", 5 * HOUR],
    ["RRULE:FREQ=MINUTELY;INTERVAL=90", 90 * MINUTE],
    ["RRULE:FREQ=MONTHLY;BYDAY=2TU", 28 * DAY],
    ["RRULE:FREQ=DAILY;BYHOUR=9,17", 8 * HOUR],
  ])("bounds %s by its structure: %i ms", (rule, least) => {
    // In UTC: no DST transition shortens a gap in real time.
    const spec = rrule(`DTSTART:20260105T090000Z\n${rule}`);
    expect(gapBelow(spec, NOW, least)).toBeNull();
    expect(gapBelow(spec, NOW, least + 1)?.ms).toBe(least);
  });

  it("refuses a rule dense on one day a year, past any number of sampled fires", () => {
    // The union issue 35 found for cron, as two rules: daily at 09:00, and every minute on 24 June.
    const gap = gapBelow(
      rrule(
        `${BERLIN}\nRRULE:FREQ=DAILY\nRRULE:FREQ=YEARLY;BYMONTH=6;BYMONTHDAY=24;BYHOUR=9;BYMINUTE=0,1`,
      ),
      NOW,
      HOUR,
    );
    expect(gap).toMatchObject({ ms: MINUTE });
    expect(gap!.between).toContain("BYMINUTE=0,1");
  });

  it("refuses RDATEs dense far past the first 120 fires, and an RDATE near a fire", () => {
    const dense = `${BERLIN}\nRRULE:FREQ=DAILY\nRDATE;TZID=Europe/Berlin:20280301T120000,20280301T120001`;
    expect(gapBelow(rrule(dense), NOW, HOUR)).toMatchObject({ ms: 1000 });
    const near = `${BERLIN}\nRRULE:FREQ=DAILY\nRDATE;TZID=Europe/Berlin:20290704T091000`;
    expect(gapBelow(rrule(near), NOW, HOUR)).toMatchObject({ ms: 10 * MINUTE });
    const apart = `${BERLIN}\nRRULE:FREQ=DAILY\nRDATE;TZID=Europe/Berlin:20290704T150000`;
    expect(gapBelow(rrule(apart), NOW, HOUR)).toBeNull();
  });

  it("leaves out an RDATE before the instant judged, and one past the rule's last fire has no fire after it", () => {
    const past = "DTSTART:20260105T090000Z\nRRULE:FREQ=DAILY\nRDATE:20250101T000000Z";
    expect(gapBelow(rrule(past), NOW, HOUR)).toBeNull();
    const pastEnd = "DTSTART:20260105T090000Z\nRRULE:FREQ=DAILY;COUNT=3\nRDATE:20300101T000000Z";
    expect(gapBelow(rrule(pastEnd), NOW, HOUR)).toBeNull();
    // The same RDATE 30 minutes after a fire of the rule is judged against it.
    const near = "DTSTART:20260105T090000Z\nRRULE:FREQ=DAILY\nRDATE:20300101T093000Z";
    expect(gapBelow(rrule(near), NOW, HOUR)).toMatchObject({ ms: 30 * MINUTE });
  });

  it("counts real time across a DST transition", () => {
    // Daily at 09:00 in Berlin: 23 hours of real time on 29 March 2026.
    expect(gapBelow(rrule(`${BERLIN}\nRRULE:FREQ=DAILY`), NOW, DAY)).toMatchObject({
      ms: 23 * HOUR,
    });
    // 01:59 and 02:30 on 29 March 2026 in Berlin: 02:30 does not exist, read at 01:30 UTC (RFC 5545
    // 3.3.5), 31 minutes after 01:59 CET (00:59 UTC). On the wall clock they are 31 minutes apart too;
    // 02:59 (01:59 UTC) and 03:00 CEST (01:00 UTC) swap order: 59 minutes of real time, then 01:30.
    const spec = rrule(
      "DTSTART;TZID=Europe/Berlin:20260105T015900\nRRULE:FREQ=DAILY;BYHOUR=1,2,3;BYMINUTE=0,59",
    );
    const gap = gapBelow(spec, NOW, 10 * MINUTE);
    expect(gap).not.toBeNull();
    expect(gap!.ms).toBeLessThan(10 * MINUTE);
  });

  it("judges a rule against every kind of transition of its zone, whatever year its day meets one", () => {
    // Shrunk from the property: the 25th at 00:00 and 03:00 in Berlin is 2 hours of real time on
    // Sunday 25 March 2029, years past the first fires and the next 366 days.
    const spec = rrule(
      "DTSTART;TZID=Europe/Berlin:20260101T000000\nRRULE:FREQ=YEARLY;BYMONTHDAY=25;BYHOUR=3,0",
    );
    expect(gapBelow(spec, NOW, 2 * HOUR + 1)).toMatchObject({ ms: 2 * HOUR });
    expect(gapBelow(spec, NOW, 2 * HOUR)).toBeNull();
  });

  it("is conservative for a rule choosing several days of a month (documented)", () => {
    // The 1st and the 15th are 14 days apart, but two days of a month are judged as if consecutive.
    const spec = rrule(`${BERLIN}\nRRULE:FREQ=MONTHLY;BYMONTHDAY=1,15`);
    expect(gapBelow(spec, NOW, 2 * DAY)).toMatchObject({ ms: DAY });
  });

  it("never accepts a schedule whose first fires are closer than the minimum (property)", () => {
    fc.assert(
      fc.property(scheduleArbitrary, fc.integer({ min: 1, max: 40 * DAY }), (text, asked) => {
        let spec;
        try {
          spec = rrule(text);
        } catch {
          // A rule with no instance within 30 years is refused before any quota.
          return;
        }
        const fires: Instant[] = [];
        let at: Instant | null = NOW;
        while (fires.length < 200 && at !== null) {
          at = nextFireAfter(spec, at);
          if (at !== null) fires.push(at);
        }
        let least = Number.POSITIVE_INFINITY;
        for (let i = 1; i < fires.length; i++) {
          least = Math.min(least, fires[i]! - fires[i - 1]!);
        }
        // Asked at random, and just above the least gap brute force found: accepted only when sound.
        for (const minMs of [asked, least + 1]) {
          if (!Number.isFinite(minMs)) continue;
          if (gapBelow(spec, NOW, minMs) === null) expect(least).toBeGreaterThanOrEqual(minMs);
        }
      }),
      { numRuns: 300 },
    );
  });
});

const FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"] as const;
const DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const;
const ZONES = ["UTC", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago"] as const;

const list = (max: number, size: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: size });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** A DTSTART near the DST transitions of 2026, one or two RRULE lines, and a few RDATEs. */
const scheduleArbitrary = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    startDay: fc.integer({ min: 0, max: 330 }),
    startSecond: fc.integer({ min: 0, max: 86_399 }),
    rules: fc.array(
      fc.record({
        freq: fc.constantFrom(...FREQS),
        interval: fc.integer({ min: 1, max: 4 }),
        byHour: maybe(list(23, 3)),
        byMinute: maybe(list(59, 3)),
        bySecond: maybe(list(59, 2)),
        byDay: maybe(fc.uniqueArray(fc.constantFrom(...DAYS), { minLength: 1, maxLength: 3 })),
        byMonthDay: maybe(list(27, 2).map((days) => days.map((d) => d + 1))),
      }),
      { minLength: 1, maxLength: 2 },
    ),
    rdates: fc.array(fc.integer({ min: 0, max: 200 * 86_400 }), { maxLength: 3 }),
  })
  .map(({ zone, startDay, startSecond, rules, rdates }) => {
    const wall = (ms: number): string => {
      const d = new Date(ms);
      return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
    };
    const start = Date.UTC(2026, 0, 1) + startDay * DAY + startSecond * 1000;
    const lines = [`DTSTART;TZID=${zone}:${wall(start)}`];
    for (const rule of rules) {
      const parts = [`FREQ=${rule.freq}`, `INTERVAL=${rule.interval}`];
      // Sub-daily rules with BYMONTHDAY or BYDAY are valid but not what this property probes.
      const daily = FREQS.indexOf(rule.freq) <= 3;
      if (rule.byHour !== undefined) parts.push(`BYHOUR=${rule.byHour.join(",")}`);
      if (rule.byMinute !== undefined) parts.push(`BYMINUTE=${rule.byMinute.join(",")}`);
      if (rule.bySecond !== undefined) parts.push(`BYSECOND=${rule.bySecond.join(",")}`);
      if (daily && rule.byDay !== undefined) parts.push(`BYDAY=${rule.byDay.join(",")}`);
      if (daily && rule.freq !== "WEEKLY" && rule.byMonthDay !== undefined) {
        parts.push(`BYMONTHDAY=${rule.byMonthDay.join(",")}`);
      }
      lines.push(`RRULE:${parts.join(";")}`);
    }
    if (rdates.length > 0) {
      lines.push(`RDATE;TZID=${zone}:${rdates.map((s) => wall(start + s * 1000)).join(",")}`);
    }
    return lines.join("\n");
  });
