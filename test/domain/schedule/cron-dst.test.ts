/**
 * docs/schedules.md#cron DST rule, situation by situation and zone by zone. Every expected instant was worked out by
 * hand from the zone's tz rules (noted per block) and is written as a literal.
 */
import { describe, expect, it } from "vitest";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";

interface Case {
  readonly cron: string;
  readonly after: string;
  readonly expected: readonly string[];
  readonly why: string;
}

function fires(cron: string, timezone: string, after: string, count: number): string[] {
  return nextOccurrences({ type: "cron", cron, timezone }, { after: new Date(after), count }).map(
    (d) => d.toISOString().replace(".000Z", "Z"),
  );
}

function table(zone: string, cases: readonly Case[]): void {
  describe(zone, () => {
    it.each(cases)("$why: $cron after $after", ({ cron, after, expected }) => {
      expect(fires(cron, zone, after, expected.length)).toEqual(expected);
    });
  });
}

describe("the DST rule of docs/schedules.md#cron", () => {
  // America/New_York: EST -05:00, EDT -04:00. 2024: forward Mar 10 02:00 EST (07:00Z), back Nov 3
  // 02:00 EDT (06:00Z). 2026: forward Mar 8 (07:00Z), back Nov 1 (06:00Z).
  table("America/New_York", [
    {
      why: "a fixed-time job in the gap fires at the transition instant (the issue's example)",
      cron: "30 2 * * *",
      after: "2024-03-09T00:00:00Z",
      expected: ["2024-03-09T07:30:00Z", "2024-03-10T07:00:00Z", "2024-03-11T06:30:00Z"],
    },
    {
      why: "a fixed-time job on the hour that vanishes fires at 03:00 EDT",
      cron: "0 2 * * *",
      after: "2024-03-09T12:00:00Z",
      expected: ["2024-03-10T07:00:00Z", "2024-03-11T06:00:00Z"],
    },
    {
      why: "a fixed-time job whose wall time exists on the day fires normally",
      cron: "0 3 * * *",
      after: "2024-03-09T12:00:00Z",
      expected: ["2024-03-10T07:00:00Z", "2024-03-11T07:00:00Z"],
    },
    {
      why: "a wildcard job skips the wall times of the gap",
      cron: "*/15 2 * * *",
      after: "2024-03-09T12:00:00Z",
      expected: ["2024-03-11T06:00:00Z", "2024-03-11T06:15:00Z"],
    },
    {
      why: "a 6-field job with a wildcard second is a wildcard job",
      cron: "*/30 0 2 * * *",
      after: "2024-03-09T12:00:00Z",
      expected: ["2024-03-11T06:00:00Z", "2024-03-11T06:00:30Z"],
    },
    {
      why: "a fixed-time job in the overlap fires once, on the first pass",
      cron: "30 1 * * *",
      after: "2026-10-31T12:00:00Z",
      expected: ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"],
    },
    {
      why: "a wildcard job in the overlap fires on both passes",
      cron: "*/30 1 * * *",
      after: "2026-10-31T12:00:00Z",
      expected: [
        "2026-11-01T05:00:00Z",
        "2026-11-01T05:30:00Z",
        "2026-11-01T06:00:00Z",
        "2026-11-01T06:30:00Z",
        "2026-11-02T06:00:00Z",
      ],
    },
    {
      why: "an hourly job fires every real hour across the overlap",
      cron: "@hourly",
      after: "2024-11-03T04:30:00Z",
      expected: ["2024-11-03T05:00:00Z", "2024-11-03T06:00:00Z", "2024-11-03T07:00:00Z"],
    },
    {
      why: "a job started on the second pass does not fire the repeated wall time again",
      cron: "30 1 * * *",
      after: "2024-11-03T06:10:00Z",
      expected: ["2024-11-04T06:30:00Z"],
    },
    {
      why: "a job started between the passes waits for the next day",
      cron: "30 1 * * *",
      after: "2024-11-03T05:45:00Z",
      expected: ["2024-11-04T06:30:00Z"],
    },
  ]);

  // Europe/Berlin: CET +01:00, CEST +02:00; 2024 forward Mar 31 01:00Z, back Oct 27 01:00Z.
  table("Europe/Berlin", [
    {
      why: "a fixed-time job in the gap fires at 03:00 CEST",
      cron: "30 2 * * *",
      after: "2024-03-30T00:00:00Z",
      expected: ["2024-03-30T01:30:00Z", "2024-03-31T01:00:00Z", "2024-04-01T00:30:00Z"],
    },
    {
      why: "all matches in one gap collapse into one fire",
      cron: "0,30 2 * * *",
      after: "2024-03-30T12:00:00Z",
      expected: ["2024-03-31T01:00:00Z", "2024-04-01T00:00:00Z", "2024-04-01T00:30:00Z"],
    },
    {
      why: "a gap fire and a match at the transition's own wall time are one fire",
      cron: "0 2,3 * * *",
      after: "2024-03-30T12:00:00Z",
      expected: ["2024-03-31T01:00:00Z", "2024-04-01T00:00:00Z", "2024-04-01T01:00:00Z"],
    },
    {
      why: "a fixed-time job started exactly at the gap fire does not fire again",
      cron: "30 2 * * *",
      after: "2024-03-31T01:00:00Z",
      expected: ["2024-04-01T00:30:00Z"],
    },
    {
      why: "a wildcard job skips the gap",
      cron: "*/30 2 * * *",
      after: "2024-03-30T12:00:00Z",
      expected: ["2024-04-01T00:00:00Z", "2024-04-01T00:30:00Z"],
    },
    {
      why: "a per-second job goes from 01:59:59 CET straight to 03:00:00 CEST",
      cron: "* * * * * *",
      after: "2024-03-31T00:59:58Z",
      expected: ["2024-03-31T00:59:59Z", "2024-03-31T01:00:00Z", "2024-03-31T01:00:01Z"],
    },
    {
      why: "a fixed-time job in the overlap fires on the first pass only",
      cron: "30 2 * * *",
      after: "2024-10-26T12:00:00Z",
      expected: ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z"],
    },
    {
      why: "a fixed-time range skips only the repeated hour's second pass",
      cron: "0 1-3 * * *",
      after: "2024-10-26T12:00:00Z",
      expected: ["2024-10-26T23:00:00Z", "2024-10-27T00:00:00Z", "2024-10-27T02:00:00Z"],
    },
    {
      why: "a wildcard job in the overlap fires on both passes",
      cron: "*/30 2 * * *",
      after: "2024-10-26T12:00:00Z",
      expected: [
        "2024-10-27T00:00:00Z",
        "2024-10-27T00:30:00Z",
        "2024-10-27T01:00:00Z",
        "2024-10-27T01:30:00Z",
        "2024-10-28T01:00:00Z",
      ],
    },
  ]);

  // Australia/Lord_Howe: +10:30 standard, +11:00 summer (a 30-minute shift). 2024: back Apr 7 02:00
  // +11 -> 01:30 (Apr 6 15:00Z); forward Oct 6 02:00 +10:30 -> 02:30 (Oct 5 15:30Z).
  table("Australia/Lord_Howe", [
    {
      why: "a fixed-time job in the 30-minute gap fires at the transition",
      cron: "15 2 * * *",
      after: "2024-10-05T00:00:00Z",
      expected: ["2024-10-05T15:30:00Z", "2024-10-06T15:15:00Z"],
    },
    {
      why: "a wildcard job skips 02:00-02:29 and fires from 02:30",
      cron: "*/10 2 * * *",
      after: "2024-10-05T12:00:00Z",
      expected: ["2024-10-05T15:30:00Z", "2024-10-05T15:40:00Z", "2024-10-05T15:50:00Z"],
    },
    {
      why: "a fixed-time job in the 30-minute overlap fires once",
      cron: "45 1 * * *",
      after: "2024-04-06T00:00:00Z",
      expected: ["2024-04-06T14:45:00Z", "2024-04-07T15:15:00Z"],
    },
    {
      why: "a wildcard job fires 01:30 and 01:45 twice",
      cron: "*/15 1 * * *",
      after: "2024-04-06T12:00:00Z",
      expected: [
        "2024-04-06T14:00:00Z",
        "2024-04-06T14:15:00Z",
        "2024-04-06T14:30:00Z",
        "2024-04-06T14:45:00Z",
        "2024-04-06T15:00:00Z",
        "2024-04-06T15:15:00Z",
        "2024-04-07T14:30:00Z",
      ],
    },
  ]);

  // Pacific/Chatham: +12:45 standard, +13:45 summer. 2024: back Apr 7 03:45 -> 02:45 (Apr 6 14:00Z);
  // forward Sep 29 02:45 -> 03:45 (Sep 28 14:00Z).
  table("Pacific/Chatham", [
    {
      why: "a fixed-time job in the gap fires at 03:45 CHADT",
      cron: "0 3 * * *",
      after: "2024-09-28T00:00:00Z",
      expected: ["2024-09-28T14:00:00Z", "2024-09-29T13:15:00Z"],
    },
    {
      why: "a wildcard job skips 03:00 and 03:30",
      cron: "*/30 3 * * *",
      after: "2024-09-28T12:00:00Z",
      expected: ["2024-09-29T13:15:00Z", "2024-09-29T13:45:00Z"],
    },
    {
      why: "a fixed-time job in the overlap fires on the first pass",
      cron: "0 3 * * *",
      after: "2024-04-06T00:00:00Z",
      expected: ["2024-04-06T13:15:00Z", "2024-04-07T14:15:00Z"],
    },
    {
      why: "an hourly job fires 03:00 twice",
      cron: "0 * * * *",
      after: "2024-04-06T12:00:00Z",
      expected: [
        "2024-04-06T12:15:00Z",
        "2024-04-06T13:15:00Z",
        "2024-04-06T14:15:00Z",
        "2024-04-06T15:15:00Z",
      ],
    },
  ]);

  // Asia/Kathmandu: +05:45 all year (no DST since the 1986 change from +05:30).
  table("Asia/Kathmandu", [
    {
      why: "a daily job fires at the same UTC time every day",
      cron: "0 9 * * *",
      after: "2024-06-01T00:00:00Z",
      expected: ["2024-06-01T03:15:00Z", "2024-06-02T03:15:00Z"],
    },
    {
      why: "a job at 02:30 local has no gap to fall in",
      cron: "30 2 * * *",
      after: "2024-03-30T00:00:00Z",
      expected: ["2024-03-30T20:45:00Z", "2024-03-31T20:45:00Z"],
    },
    {
      why: "quarter-hour offsets shift the hour boundary",
      cron: "0 * * * *",
      after: "2024-06-01T00:00:00Z",
      expected: ["2024-06-01T00:15:00Z", "2024-06-01T01:15:00Z"],
    },
  ]);

  // America/Sao_Paulo: -03:00, summer -02:00 until 2019, switching at midnight. Forward 2018-11-04
  // 00:00 -> 01:00 (03:00Z); back 2019-02-17 00:00 -> 2019-02-16 23:00 (02:00Z).
  table("America/Sao_Paulo", [
    {
      why: "midnight does not exist on the spring-forward day: fires at 01:00 local",
      cron: "0 0 * * *",
      after: "2018-11-03T12:00:00Z",
      expected: ["2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"],
    },
    {
      why: "a wildcard job skips the missing midnight hour",
      cron: "*/30 0 * * *",
      after: "2018-11-03T12:00:00Z",
      expected: ["2018-11-05T02:00:00Z", "2018-11-05T02:30:00Z"],
    },
    {
      why: "23:30 is repeated on the fall-back evening: a fixed-time job fires once",
      cron: "30 23 * * *",
      after: "2019-02-16T12:00:00Z",
      expected: ["2019-02-17T01:30:00Z", "2019-02-18T02:30:00Z"],
    },
    {
      why: "a wildcard job fires the repeated 23:00 hour twice",
      cron: "*/30 23 * * *",
      after: "2019-02-16T12:00:00Z",
      expected: [
        "2019-02-17T01:00:00Z",
        "2019-02-17T01:30:00Z",
        "2019-02-17T02:00:00Z",
        "2019-02-17T02:30:00Z",
      ],
    },
    {
      why: "midnight after the fall-back exists once",
      cron: "0 0 * * *",
      after: "2019-02-16T12:00:00Z",
      expected: ["2019-02-17T03:00:00Z", "2019-02-18T03:00:00Z"],
    },
    {
      why: "no DST after 2019",
      cron: "0 0 * * *",
      after: "2019-11-02T12:00:00Z",
      expected: ["2019-11-03T03:00:00Z", "2019-11-04T03:00:00Z"],
    },
  ]);

  // Pacific/Apia skipped 2011-12-30: 2011-12-29 23:59:59 -10:00 was followed by 2011-12-31 00:00 +14:00
  // (2011-12-30T10:00:00Z). Then a normal DST end on 2012-04-01 04:00 +14 -> 03:00 +13 (Mar 31 14:00Z).
  table("Pacific/Apia", [
    {
      why: "a fixed-time job's wall time on the skipped day does not fire and is not caught up",
      cron: "0 12 * * *",
      after: "2011-12-28T12:00:00Z",
      expected: ["2011-12-28T22:00:00Z", "2011-12-29T22:00:00Z", "2011-12-30T22:00:00Z"],
    },
    {
      why: "a jump of 24 hours is not a gap: no fire at the transition for 06:00",
      cron: "0 6 * * *",
      after: "2011-12-29T17:00:00Z",
      expected: ["2011-12-30T16:00:00Z"],
    },
    {
      why: "midnight of Dec 31 is the transition instant and fires normally",
      cron: "0 0 * * *",
      after: "2011-12-29T12:00:00Z",
      expected: ["2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z"],
    },
    {
      why: "a wildcard job fires every real hour across the jump",
      cron: "0 * * * *",
      after: "2011-12-30T08:30:00Z",
      expected: ["2011-12-30T09:00:00Z", "2011-12-30T10:00:00Z", "2011-12-30T11:00:00Z"],
    },
    {
      why: "December 30 next exists in 2012 (+14:00)",
      cron: "0 0 30 12 *",
      after: "2011-12-01T00:00:00Z",
      expected: ["2012-12-29T10:00:00Z"],
    },
    {
      why: "the ordinary 1-hour overlap of 2012 follows the DST rule",
      cron: "30 3 * * *",
      after: "2012-03-31T00:00:00Z",
      expected: ["2012-03-31T13:30:00Z", "2012-04-01T14:30:00Z"],
    },
  ]);

  // Pacific/Fakaofo (Tokelau) also skipped 2011-12-30: -11:00 until 2011-12-30 00:00, then +13:00.
  table("Pacific/Fakaofo", [
    {
      why: "noon of the skipped day does not fire",
      cron: "0 12 * * *",
      after: "2011-12-29T00:00:00Z",
      expected: ["2011-12-29T23:00:00Z", "2011-12-30T23:00:00Z"],
    },
  ]);

  // Pacific/Kwajalein went from +11:00 to -12:00 on 1969-10-01 00:00 (1969-09-30T13:00:00Z): a day
  // repeated, a change of clock of 23 hours rather than DST.
  table("Pacific/Kwajalein", [
    {
      why: "across a backward jump of more than 3 hours a fixed-time job fires on both passes",
      cron: "0 12 * * *",
      after: "1969-09-29T12:00:00Z",
      expected: ["1969-09-30T01:00:00Z", "1969-10-01T00:00:00Z", "1969-10-02T00:00:00Z"],
    },
  ]);
});
