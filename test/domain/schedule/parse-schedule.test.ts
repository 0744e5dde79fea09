/**
 * parseSchedule and scheduleToInput: the reference's TestScheduleSpecInvariants, TestFromPrimitives and
 * TestScheduleSpecEquality (section 6.1) ported to docs/schedules.md, plus bounds, once and interval parsing.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import type { FieldError } from "../../../src/domain/errors.js";
import { parseSchedule, scheduleToInput } from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";
import type { Instant } from "../../../src/domain/time.js";

const at = (text: string): Instant => instant(Date.parse(text));
const NOW = at("2026-06-01T12:00:00Z");

function parse(input: unknown, referenceAt: Instant = NOW): ScheduleSpec {
  return parseSchedule(input, { referenceAt });
}

function errorsOf(input: unknown, referenceAt: Instant = NOW): readonly FieldError[] {
  try {
    parseSchedule(input, { referenceAt });
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error("expected a ValidationError");
}

/** Asserts the error's fields in order, and that each message matches. */
function expectProblems(
  errors: readonly FieldError[],
  expected: readonly (readonly [string, RegExp])[],
): void {
  expect(errors.map((e) => e.field)).toEqual(expected.map(([field]) => field));
  expected.forEach(([, message], i) => {
    expect(errors[i]?.message).toMatch(message);
  });
}

describe("parseSchedule", () => {
  describe("invariants (reference TestScheduleSpecInvariants)", () => {
    it("rejects an unknown timezone", () => {
      expectProblems(errorsOf({ type: "cron", cron: "0 9 * * *", timezone: "Mars/Base" }), [
        ["schedule.timezone", /not a known IANA time zone/],
      ]);
    });

    it("rejects a cron schedule without an expression", () => {
      expectProblems(errorsOf({ type: "cron" }), [["schedule.cron", /is required/]]);
    });

    it.each(["0 9 * *", "0", "0 9 * * * * *"])("rejects %j: not 5 or 6 fields", (cron) => {
      expect(errorsOf({ type: "cron", cron })[0]?.message).toMatch(/expected 5 fields/);
    });

    it("accepts 6 fields as a leading second (the reference rejected them)", () => {
      const spec = parse({ type: "cron", cron: "0 9 * * * *" });
      expect(spec.type === "cron" && spec.rules[0]?.minutes).toEqual([9]);
    });

    it("rejects a once schedule without run_at", () => {
      expectProblems(errorsOf({ type: "once" }), [["schedule.run_at", /is required/]]);
    });

    it("cannot be bypassed: a spec-shaped object is validated like any input", () => {
      const spec = parse({ type: "cron", cron: "0 9 * * *" });
      expect(() => parseSchedule({ ...spec }, { referenceAt: NOW })).toThrow(ValidationError);
    });

    it("normalises the cron's whitespace", () => {
      expect(scheduleToInput(parse({ type: "cron", cron: "  0   9 * *\t1-5 " }))).toMatchObject({
        cron: "0 9 * * 1-5",
      });
    });

    it("writes an rrule schedule back as its text, bounds and exclusions, which parse to the same spec", () => {
      const spec = parse({
        type: "rrule",
        rrule: "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;BYDAY=MO",
        end_at: "2026-12-31T00:00:00Z",
        exclude: ["2026-06-08"],
        on_excluded: "next",
      });
      const input = scheduleToInput(spec);
      expect(input).toEqual({
        type: "rrule",
        rrule: "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;BYDAY=MO",
        end_at: "2026-12-31T00:00:00Z",
        exclude: ["2026-06-08"],
        on_excluded: "next",
      });
      expect(parse(input)).toEqual(spec);
    });

    it.each(["x x x x x", "60 * * * *", "* * * * 99"])("rejects %j", (cron) => {
      expect(errorsOf({ type: "cron", cron })[0]?.field).toBe("schedule.cron");
    });

    it.each(["*/5 * * * *", "0 9 * * mon-fri", "0 0 1,15 * *"])("accepts %j", (cron) => {
      expect(parse({ type: "cron", cron }).type).toBe("cron");
    });

    it("resolves a run_at without offset in the schedule's zone", () => {
      const spec = parse({
        type: "once",
        run_at: "2026-12-01T09:00:00",
        timezone: "Europe/Berlin",
      });
      expect(spec.type === "once" && spec.runAt).toBe(at("2026-12-01T08:00:00Z"));
    });

    it("keeps the instant of a run_at with an offset, whatever the zone", () => {
      const spec = parse({
        type: "once",
        run_at: "2026-12-01T09:00:00+05:00",
        timezone: "Europe/Berlin",
      });
      expect(spec.type === "once" && spec.runAt).toBe(at("2026-12-01T04:00:00Z"));
    });
  });

  describe("from primitives (reference TestFromPrimitives)", () => {
    it("builds a cron schedule with UTC as the default zone", () => {
      expect(scheduleToInput(parse({ type: "cron", cron: "0 9 * * *" }))).toEqual({
        type: "cron",
        cron: "0 9 * * *",
        timezone: "UTC",
      });
    });

    it("builds a once schedule from an ISO string, a trailing Z being the same instant", () => {
      const z = parse({ type: "once", run_at: "2026-08-01T09:00:00Z" });
      const offset = parse({ type: "once", run_at: "2026-08-01T09:00:00+00:00" });
      expect(z).toEqual(offset);
      expect(z.type === "once" && z.runAt).toBe(at("2026-08-01T09:00:00Z"));
    });

    it.each([{ type: "weekly" }, { type: 5 }, { cron: "0 9 * * *" }])(
      "rejects the type of %j",
      (input) => {
        expectProblems(errorsOf(input), [["schedule.type", /cron, once, interval or rrule/]]);
      },
    );

    it.each([null, 5, "", []])("rejects the cron %j", (cron) => {
      expect(errorsOf({ type: "cron", cron })[0]?.field).toBe("schedule.cron");
    });

    it.each([null, 5, "next tuesday", "2026-08-01"])("rejects the run_at %j", (runAt) => {
      expect(errorsOf({ type: "once", run_at: runAt })[0]?.field).toBe("schedule.run_at");
    });

    it("rejects a field of another schedule type, naming it (the reference ignored it)", () => {
      expect(errorsOf({ type: "cron", cron: "0 9 * * *", run_at: "2026-08-01T09:00:00Z" })).toEqual(
        [{ field: "schedule.run_at", message: "is not a field of a cron schedule" }],
      );
    });

    it("rejects what is not an object", () => {
      expectProblems(errorsOf("0 9 * * *"), [["schedule", /must be an object/]]);
    });

    it("collects every faulty field into one error", () => {
      const errors = errorsOf({
        type: "cron",
        cron: "60 * * * *",
        timezone: "+01:00",
        max_runs: 0,
        jitter: "P1M",
      });
      expect(errors.map((e) => e.field)).toEqual([
        "schedule.cron",
        "schedule.timezone",
        "schedule.max_runs",
        "schedule.jitter",
      ]);
    });

    it("prefixes field names as asked", () => {
      const input = { type: "cron", cron: "60 * * * *" };
      expect(() => parseSchedule(input, { referenceAt: NOW, field: "" })).toThrow(
        "cron: minute field: 60 is out of range 0-59",
      );
    });
  });

  describe("equality (reference TestScheduleSpecEquality)", () => {
    it("makes equivalent cron inputs converge", () => {
      expect(parse({ type: "cron", cron: "0  9 * *  *" })).toEqual(
        parse({ type: "cron", cron: "0 9 * * *", timezone: "UTC" }),
      );
    });

    it("keeps the zone part of the identity", () => {
      expect(parse({ type: "cron", cron: "0 9 * * *", timezone: "Europe/Berlin" })).not.toEqual(
        parse({ type: "cron", cron: "0 9 * * *", timezone: "Europe/Paris" }),
      );
    });
  });

  describe("once", () => {
    it("moves a wall time in a DST gap to the transition instant", () => {
      const spec = parse({
        type: "once",
        run_at: "2026-03-08T02:30",
        timezone: "America/New_York",
      });
      expect(spec.type === "once" && spec.runAt).toBe(at("2026-03-08T07:00:00Z"));
    });

    it("resolves a wall time in an overlap to its first occurrence", () => {
      const spec = parse({
        type: "once",
        run_at: "2026-11-01T01:30:00",
        timezone: "America/New_York",
      });
      expect(spec.type === "once" && spec.runAt).toBe(at("2026-11-01T05:30:00Z"));
    });

    it("rejects a wall time inside a jump of more than 3 hours", () => {
      expectProblems(
        errorsOf(
          { type: "once", run_at: "2011-12-30T12:00:00", timezone: "Pacific/Apia" },
          at("2011-01-01T00:00:00Z"),
        ),
        [["schedule.run_at", /does not exist in Pacific\/Apia/]],
      );
    });

    it.each([
      ["2026-13-01T09:00:00", /month 13/],
      ["2026-02-30T09:00:00", /day 30/],
      ["2026-12-01", /date without a time/],
    ])("rejects the run_at %s", (runAt, message) => {
      expect(errorsOf({ type: "once", run_at: runAt })[0]?.message).toMatch(message);
    });

    it.each([
      ["2026-12-01T09:00:00.5Z", "UTC", "2026-12-01T09:00:01Z", null],
      ["2026-12-01T09:00:00.001+01:00", "UTC", "2026-12-01T08:00:01Z", null],
      ["2026-12-01T09:00:59.999Z", "UTC", "2026-12-01T09:01:00Z", null],
      ["2026-12-01T09:00:00.000Z", "UTC", "2026-12-01T09:00:00Z", null],
      ["2026-12-01T09:00:00.250", "Europe/Berlin", "2026-12-01T08:00:01Z", "2026-12-01T09:00:01"],
    ])("rounds the run_at %s up to the next whole second", (runAt, timezone, expected, local) => {
      const spec = parse({ type: "once", run_at: runAt, timezone });
      expect(spec.type === "once" && spec.runAt).toBe(at(expected));
      expect(spec.type === "once" && spec.localRunAt).toBe(local);
    });

    it("does not itself require run_at to be in the future (the task layer does)", () => {
      expect(parse({ type: "once", run_at: "2020-01-01T00:00:00Z" }).type).toBe("once");
    });

    it.each(["start_at", "end_at", "max_runs"])("has no %s", (key) => {
      expect(errorsOf({ type: "once", run_at: "2027-01-01T00:00:00Z", [key]: 1 })).toEqual([
        { field: `schedule.${key}`, message: "is not a field of a once schedule" },
      ]);
    });
  });

  describe("interval", () => {
    it("anchors at the given anchor, else at the reference instant, on a whole second", () => {
      const spec = parseSchedule(
        { type: "interval", every: "PT5M" },
        { referenceAt: instant(NOW + 999), anchorAt: instant(NOW + 500) },
      );
      expect(spec.type === "interval" && [spec.anchorAt, spec.everyMs, spec.startAt]).toEqual([
        NOW,
        300_000,
        null,
      ]);
    });

    it("anchors at start_at when given", () => {
      const spec = parse({ type: "interval", every: 60, start_at: "2026-07-01T00:00:00Z" });
      expect(spec.type === "interval" && spec.anchorAt).toBe(at("2026-07-01T00:00:00Z"));
    });

    it.each([
      ["P1M", /months and years have no fixed length/],
      ["P1Y", /months and years/],
      [0, /at least 1 second/],
      ["PT0.5S", /whole number of seconds/],
    ])("rejects every = %j", (every, message) => {
      expectProblems(errorsOf({ type: "interval", every }), [["schedule.every", message]]);
    });

    it("requires every", () => {
      expect(errorsOf({ type: "interval" })[0]?.field).toBe("schedule.every");
    });
  });

  describe("bounds and jitter", () => {
    const cron = { type: "cron", cron: "0 9 * * *", timezone: "UTC" } as const;

    it("reads start_at, end_at, max_runs and jitter", () => {
      const spec = parse({
        ...cron,
        start_at: "2026-07-01T00:00:00+02:00",
        end_at: "2026-08-01T00:00:00Z",
        max_runs: 3,
        jitter: "PT30S",
      });
      expect([spec.startAt, spec.endAt, spec.maxRuns, spec.jitterMs]).toEqual([
        at("2026-06-30T22:00:00Z"),
        at("2026-08-01T00:00:00Z"),
        3,
        30_000,
      ]);
    });

    it("reads null as absent", () => {
      const spec = parse({ ...cron, start_at: null, end_at: null, max_runs: null, jitter: null });
      expect([spec.startAt, spec.endAt, spec.maxRuns, spec.jitterMs]).toEqual([
        null,
        null,
        null,
        0,
      ]);
    });

    it("rejects end_at not after start_at", () => {
      expect(
        errorsOf({ ...cron, start_at: "2026-07-01T00:00:00Z", end_at: "2026-07-01T00:00:00Z" }),
      ).toContainEqual({ field: "schedule.end_at", message: "must be after start_at" });
    });

    it("rejects a schedule with no occurrence before end_at", () => {
      expect(
        errorsOf({ ...cron, start_at: "2026-07-01T10:00:00Z", end_at: "2026-07-02T08:00:00Z" }),
      ).toEqual([
        {
          field: "schedule.end_at",
          message: "the schedule has no occurrence between start_at and end_at",
        },
      ]);
      expect(errorsOf({ ...cron, end_at: "2026-06-01T13:00:00Z" })).toEqual([
        {
          field: "schedule.end_at",
          message: "the schedule has no occurrence between now and end_at",
        },
      ]);
    });

    it("accepts an end_at equal to the only occurrence", () => {
      expect(parse({ ...cron, end_at: "2026-06-02T09:00:00Z" }).endAt).toBe(
        at("2026-06-02T09:00:00Z"),
      );
    });

    it("rounds start_at up to the next whole second and keeps end_at to the millisecond", () => {
      const spec = parse({
        ...cron,
        start_at: "2026-07-01T00:00:00.5Z",
        end_at: "2027-07-01T00:00:00.25Z",
      });
      expect(spec.startAt).toBe(at("2026-07-01T00:00:01Z"));
      expect(spec.endAt).toBe(at("2027-07-01T00:00:00.250Z"));
    });

    it("can reload a stored schedule whose end has passed", () => {
      const input = { ...cron, end_at: "2026-01-01T00:00:00Z" };
      expect(parseSchedule(input, { referenceAt: NOW, checkReachable: false }).endAt).toBe(
        at("2026-01-01T00:00:00Z"),
      );
    });

    it.each([
      ["start_at", "2026-07-01T00:00:00", /has no offset/],
      ["end_at", 5, /must be an ISO-8601 instant/],
      ["max_runs", 1.5, /whole number of at least 1/],
      ["max_runs", "3", /whole number of at least 1/],
      ["jitter", -1, /must not be negative/],
    ])("rejects %s = %j", (key, value, message) => {
      expectProblems(errorsOf({ ...cron, [key]: value }), [[`schedule.${key}`, message]]);
    });
  });

  describe("the 30-year rule", () => {
    it.each(["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"])("rejects %j", (cron) => {
      expectProblems(errorsOf({ type: "cron", cron }), [
        ["schedule.cron", /never match a real date/],
      ]);
    });

    it("accepts February 29, which comes every 4 years", () => {
      expect(parse({ type: "cron", cron: "0 0 29 2 *" }).type).toBe("cron");
    });

    it("accepts February 31 when the weekday may match instead (Vixie day rule)", () => {
      expect(parse({ type: "cron", cron: "0 0 31 2 mon" }).type).toBe("cron");
    });

    it("measures from start_at when it is later", () => {
      const spec = parse({ type: "cron", cron: "0 0 29 2 *", start_at: "2090-03-01T00:00:00Z" });
      expect(spec.startAt).toBe(at("2090-03-01T00:00:00Z"));
    });
  });
});

describe("scheduleToInput", () => {
  it.each([
    { type: "cron", cron: "@daily", timezone: "Europe/Berlin" },
    {
      type: "cron",
      cron: "*/15 9-17 * * mon-fri",
      timezone: "America/New_York",
      start_at: "2026-07-01T00:00:00Z",
      end_at: "2027-07-01T00:00:00.500Z",
      max_runs: 10,
      jitter: "PT1M30S",
    },
    { type: "once", run_at: "2026-12-01T09:00:00", timezone: "Europe/Berlin" },
    { type: "once", run_at: "2026-12-01T09:00:00Z", timezone: "UTC", jitter: "PT5S" },
    { type: "interval", every: "P1DT2H", start_at: "2026-07-01T00:00:00Z", max_runs: 2 },
  ])("writes a normalised shape that parses back to the same spec: %j", (input) => {
    const spec = parse(input);
    const written = scheduleToInput(spec);
    expect(written).toEqual(input);
    expect(parse(written)).toEqual(spec);
  });

  it("normalises durations, zones and instants", () => {
    expect(
      scheduleToInput(
        parse({
          type: "interval",
          every: 604_800,
          start_at: "2026-07-01T02:00:00+02:00",
          jitter: 60,
        }),
      ),
    ).toEqual({ type: "interval", every: "P7D", start_at: "2026-07-01T00:00:00Z", jitter: "PT1M" });
  });

  it("round-trips an interval without start_at given the same anchor", () => {
    const ctx = { referenceAt: NOW, anchorAt: at("2026-05-01T00:00:00Z") };
    const spec = parseSchedule({ type: "interval", every: "PT5M" }, ctx);
    expect(parseSchedule(scheduleToInput(spec), ctx)).toEqual(spec);
  });
});
