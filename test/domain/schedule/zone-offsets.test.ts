/**
 * Offsets, transitions and wall-time resolution, against transition instants known from the tz rules.
 */
import { describe, expect, it } from "vitest";
import { resolveWall, wallOf } from "../../../src/domain/schedule/wall-clock.js";
import {
  offsetAt,
  previousTransition,
  transitionsBetween,
} from "../../../src/domain/schedule/zone-offsets.js";

const at = (text: string): number => Date.parse(text);
const H = 3_600_000;
const M = 60_000;

function transitions(zone: string, from: string, to: string) {
  return transitionsBetween(zone, at(from), at(to)).map((t) => ({
    at: new Date(t.at).toISOString().replace(".000Z", "Z"),
    from: t.offsetBefore / M,
    to: t.offsetAfter / M,
  }));
}

describe("transitionsBetween", () => {
  it.each([
    [
      "America/New_York",
      [
        { at: "2024-03-10T07:00:00Z", from: -300, to: -240 },
        { at: "2024-11-03T06:00:00Z", from: -240, to: -300 },
      ],
    ],
    [
      "Europe/Berlin",
      [
        { at: "2024-03-31T01:00:00Z", from: 60, to: 120 },
        { at: "2024-10-27T01:00:00Z", from: 120, to: 60 },
      ],
    ],
    [
      "Australia/Lord_Howe",
      [
        { at: "2024-04-06T15:00:00Z", from: 660, to: 630 },
        { at: "2024-10-05T15:30:00Z", from: 630, to: 660 },
      ],
    ],
    [
      "Pacific/Chatham",
      [
        { at: "2024-04-06T14:00:00Z", from: 825, to: 765 },
        { at: "2024-09-28T14:00:00Z", from: 765, to: 825 },
      ],
    ],
    ["Asia/Kathmandu", []],
    ["UTC", []],
  ])("finds %s's 2024 transitions to the second", (zone, expected) => {
    expect(transitions(zone, "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z")).toEqual(expected);
  });

  it("finds Apia's skipped day", () => {
    expect(transitions("Pacific/Apia", "2011-12-01T00:00:00Z", "2012-01-01T00:00:00Z")).toEqual([
      { at: "2011-12-30T10:00:00Z", from: -600, to: 840 },
    ]);
  });

  it("finds Sao Paulo's midnight transitions, and none after 2019", () => {
    expect(
      transitions("America/Sao_Paulo", "2018-06-01T00:00:00Z", "2019-06-01T00:00:00Z"),
    ).toEqual([
      { at: "2018-11-04T03:00:00Z", from: -180, to: -120 },
      { at: "2019-02-17T02:00:00Z", from: -120, to: -180 },
    ]);
    expect(
      transitions("America/Sao_Paulo", "2019-06-01T00:00:00Z", "2040-01-01T00:00:00Z"),
    ).toEqual([]);
  });

  it("finds a transition at the turn of a UTC year exactly once", () => {
    // Kathmandu moved from +05:30 to +05:45 at 1986-01-01 00:00 local (1985-12-31T18:30:00Z).
    expect(transitions("Asia/Kathmandu", "1985-01-01T00:00:00Z", "1987-01-01T00:00:00Z")).toEqual([
      { at: "1985-12-31T18:30:00Z", from: 330, to: 345 },
    ]);
  });
});

describe("offsetAt and previousTransition", () => {
  it("switches offset exactly at the transition", () => {
    expect(offsetAt("America/New_York", at("2024-03-10T06:59:59Z"))).toBe(-5 * H);
    expect(offsetAt("America/New_York", at("2024-03-10T07:00:00Z"))).toBe(-4 * H);
  });

  it("looks back across the turn of a year", () => {
    expect(previousTransition("Europe/Berlin", at("2025-01-15T00:00:00Z"))?.at).toBe(
      at("2024-10-27T01:00:00Z"),
    );
  });
});

describe("UTC's names", () => {
  const names = [
    "UTC",
    "Etc/UTC",
    "UCT",
    "GMT",
    "Etc/GMT",
    "GMT0",
    "Etc/GMT+0",
    "GMT-0",
    "Universal",
    "Zulu",
    "Greenwich",
  ];

  it("have the offset Intl gives them, zero, at every instant", () => {
    const instant = at("2026-07-01T12:34:56Z");
    for (const zone of names) {
      const wall = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        hour: "numeric",
        minute: "numeric",
      }).format(instant);
      expect([zone, wall]).toEqual([zone, "12:34"]);
      expect([zone, offsetAt(zone, instant)]).toEqual([zone, 0]);
    }
  });

  it("are computed without Intl, whose first formatter loads ICU's zone data", () => {
    // A formatter made before (the zones' first test) is refused too: its parts are asked of the prototype.
    const formatter = Intl.DateTimeFormat;
    const parts = Object.getOwnPropertyDescriptor(formatter.prototype, "formatToParts");
    const refused = (): never => {
      throw new Error("Intl asked");
    };
    Intl.DateTimeFormat = refused as unknown as typeof Intl.DateTimeFormat;
    Object.defineProperty(formatter.prototype, "formatToParts", {
      value: refused,
      configurable: true,
    });
    try {
      // Years no other test reads: their tables are built here.
      for (const [i, zone] of names.entries()) {
        expect(offsetAt(zone, at(`${2431 + i}-05-01T00:00:00Z`))).toBe(0);
        expect(
          transitionsBetween(
            zone,
            at(`${2451 + i}-01-01T00:00:00Z`),
            at(`${2452 + i}-12-31T00:00:00Z`),
          ),
        ).toEqual([]);
      }
    } finally {
      Intl.DateTimeFormat = formatter;
      if (parts !== undefined) Object.defineProperty(formatter.prototype, "formatToParts", parts);
    }
  });
});

describe("resolveWall", () => {
  it("finds one instant for an ordinary wall time", () => {
    expect(resolveWall("Europe/Berlin", at("2024-06-01T12:00:00Z"))).toEqual({
      instants: [at("2024-06-01T10:00:00Z")],
      gap: null,
    });
  });

  it("finds both instants of a repeated wall time, in order", () => {
    expect(resolveWall("America/New_York", at("2024-11-03T01:30:00Z")).instants).toEqual([
      at("2024-11-03T05:30:00Z"),
      at("2024-11-03T06:30:00Z"),
    ]);
  });

  it("finds no instant and the gap's transition for a skipped wall time", () => {
    const resolved = resolveWall("America/New_York", at("2024-03-10T02:30:00Z"));
    expect(resolved.instants).toEqual([]);
    expect(resolved.gap?.at).toBe(at("2024-03-10T07:00:00Z"));
  });

  it("reads the wall time of an instant", () => {
    expect(wallOf("Pacific/Chatham", at("2024-09-28T14:00:00Z"))).toBe(at("2024-09-29T03:45:00Z"));
  });
});
