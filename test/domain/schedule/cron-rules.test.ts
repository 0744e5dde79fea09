/**
 * Several cron expressions in one schedule (issue 22): the fires are the union, strictly increasing and
 * duplicate-free; each rule keeps its own DST class; previews and warnings name the rule; each faulty
 * expression is named by its index. Expected instants are worked out by hand from the zones' rules.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { decodeSchedule, encodeSchedule } from "../../../src/domain/schedule-codec.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import {
  describeOccurrences,
  dstWarnings,
  parseSchedule,
  scheduleToInput,
} from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";

const iso = (d: Date | number): string => new Date(d).toISOString().replace(".000Z", "Z");

function fires(cron: readonly string[], timezone: string, after: string, count: number): string[] {
  return nextOccurrences(
    { type: "cron", cron: [...cron], timezone },
    { after: new Date(after), count },
  ).map(iso);
}

function spec(cron: string | readonly string[], timezone = "UTC") {
  return parseSchedule(
    { type: "cron", cron, timezone },
    { referenceAt: instant(Date.parse("2024-01-01T00:00:00Z")) },
  );
}

function errorsOf(cron: unknown): readonly { field: string; message: string }[] {
  try {
    parseSchedule(
      { type: "cron", cron, timezone: "UTC" },
      { referenceAt: instant(Date.parse("2026-01-01T00:00:00Z")) },
    );
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("several rules per schedule", () => {
  it("fires on the union: every weekday at 09:00 and Saturdays at 10:00 (Berlin)", () => {
    // 2024-03-29 is a Friday; Berlin springs forward on Sunday 2024-03-31.
    expect(
      fires(["0 9 * * 1-5", "0 10 * * 6"], "Europe/Berlin", "2024-03-28T12:00:00Z", 4),
    ).toEqual([
      "2024-03-29T08:00:00Z",
      "2024-03-30T09:00:00Z",
      "2024-04-01T07:00:00Z",
      "2024-04-02T07:00:00Z",
    ]);
  });

  it("fires once where two rules meet, naming the first rule in the order written", () => {
    const described = describeOccurrences(
      spec(["0 9 * * 1", "0 9 1 * *", "0 12 * * *"]),
      instant(Date.parse("2024-04-01T00:00:00Z")),
      3,
    );
    expect(described.map((o) => [iso(o.at), o.rule])).toEqual([
      ["2024-04-01T09:00:00Z", "0 9 * * 1"],
      ["2024-04-01T12:00:00Z", "0 12 * * *"],
      ["2024-04-02T12:00:00Z", "0 12 * * *"],
    ]);
  });

  it("keeps each rule's DST class: in a gap the fixed-time rule moves, the wildcard one skips", () => {
    // New York sprang forward on 2024-03-10 at 02:00 EST (07:00Z).
    expect(
      fires(["30 2 * * *", "15 */1 * * *"], "America/New_York", "2024-03-10T05:00:00Z", 4),
    ).toEqual([
      "2024-03-10T05:15:00Z",
      "2024-03-10T06:15:00Z",
      "2024-03-10T07:00:00Z",
      "2024-03-10T07:15:00Z",
    ]);
  });

  it("keeps each rule's DST class: in an overlap a fixed rule fires on the first pass only", () => {
    // New York fell back on 2026-11-01 at 02:00 EDT (06:00Z).
    const schedule = spec(["30 1 * * *", "0 */1 * * *"], "America/New_York");
    const described = describeOccurrences(schedule, instant(Date.parse("2026-11-01T04:30:00Z")), 4);
    expect(described.map((o) => [iso(o.at), o.rule, o.suppressedBefore.length])).toEqual([
      ["2026-11-01T05:00:00Z", "0 */1 * * *", 0],
      ["2026-11-01T05:30:00Z", "30 1 * * *", 0],
      ["2026-11-01T06:00:00Z", "0 */1 * * *", 0],
      ["2026-11-01T07:00:00Z", "0 */1 * * *", 1],
    ]);
    expect(described[3]?.suppressedBefore[0]).toMatchObject({
      kind: "overlap_repeat",
      wall: "2026-11-01T01:30:00",
    });
  });

  it("does not call a repeated wall time suppressed when a wildcard rule fires it", () => {
    const schedule = spec(["30 1 * * *", "*/30 1 * * *"], "America/New_York");
    const described = describeOccurrences(schedule, instant(Date.parse("2026-11-01T04:30:00Z")), 4);
    expect(described.map((o) => [iso(o.at), o.rule, o.suppressedBefore.length])).toEqual([
      ["2026-11-01T05:00:00Z", "*/30 1 * * *", 0],
      ["2026-11-01T05:30:00Z", "30 1 * * *", 0],
      ["2026-11-01T06:00:00Z", "*/30 1 * * *", 0],
      ["2026-11-01T06:30:00Z", "*/30 1 * * *", 0],
    ]);
  });

  it("collapses every fixed rule's matches inside one gap into one fire", () => {
    const [first] = describeOccurrences(
      spec(["30 2 * * *", "10 2 * * *"], "Europe/Berlin"),
      instant(Date.parse("2024-03-30T12:00:00Z")),
      1,
    );
    expect([first && iso(first.at), first?.note]).toEqual([
      "2024-03-31T01:00:00Z",
      { kind: "gap_shifted", nominalWall: "2024-03-31T02:10:00", collapsed: 1 },
    ]);
  });

  it("names the rule in each DST warning when there are several", () => {
    const warnings = dstWarnings(
      spec(["30 2 * * *", "0 12 * * *"], "America/New_York"),
      instant(Date.parse("2024-03-01T00:00:00Z")),
      20 * 86_400_000,
    );
    expect(warnings).toEqual([
      'In America/New_York, for "30 2 * * *", on 2024-03-10 clocks jump from 02:00 to 03:00: the fire at 02:30 does not exist and runs at 03:00 (2024-03-10T07:00:00Z) instead.',
    ]);
  });

  it("writes a list back as a list and one expression as a string", () => {
    expect(scheduleToInput(spec(["0 9 * * 1-5", "0 10 * * sat"]))).toHaveProperty("cron", [
      "0 9 * * 1-5",
      "0 10 * * sat",
    ]);
    expect(scheduleToInput(spec(["0 9 * * *"]))).toHaveProperty("cron", "0 9 * * *");
  });

  it("decodes a schedule stored before lists and day items existed", () => {
    const stored = JSON.parse(JSON.stringify(encodeSchedule(spec("0 9 * * *")))) as Record<
      string,
      unknown
    >;
    const { rules, ...rest } = stored;
    expect(rules).toEqual(["0 9 * * *"]);
    // Earlier versions stored the parsed expression, and before day items, without them.
    const parsed = spec("0 9 * * *");
    const old: Record<string, unknown> = { ...(parsed.type === "cron" ? parsed.rules[0] : {}) };
    delete old["dayItems"];
    expect(decodeSchedule({ ...rest, cron: old })).toEqual(spec("0 9 * * *"));
    expect(decodeSchedule({ ...rest, rules: [old] })).toEqual(spec("0 9 * * *"));
  });

  it.each([
    [[], [["schedule.cron", "must hold 1 to 32 expressions"]]],
    [
      Array.from({ length: 33 }, () => "0 9 * * *"),
      [["schedule.cron", "must hold 1 to 32 expressions"]],
    ],
    [[9], [["schedule.cron.0", 'must be a cron expression such as "0 9 * * 1-5"']]],
    [["0 9 * * *", "60 * * * *"], [["schedule.cron.1", "minute field: 60 is out of range 0-59"]]],
    [
      ["0 0 31 2 *", "0 9 * * *", "0 0 31W 4 *"],
      [
        [
          "schedule.cron.0",
          "the day-of-month, month and day-of-week fields never match a real date within 30 years",
        ],
        [
          "schedule.cron.2",
          "the day-of-month, month and day-of-week fields never match a real date within 30 years",
        ],
      ],
    ],
    [{ rule: "0 9 * * *" }, [["schedule.cron", expect.stringMatching(/^is required/)]]],
  ])("refuses %j naming each faulty expression", (cron, expected) => {
    expect(errorsOf(cron).map((e) => [e.field, e.message])).toEqual(expected);
  });
});
