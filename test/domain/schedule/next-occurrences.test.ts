/**
 * nextOccurrences, the package's public pure preview (docs/library.md): shapes, validation and the examples of
 * the issue.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import type { NextOccurrencesSchedule } from "../../../src/domain/schedule/next-occurrences.js";
import * as publicApi from "../../../src/index.js";

const isoList = (dates: readonly Date[]): string[] =>
  dates.map((d) => d.toISOString().replace(".000Z", "Z"));

function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => e.field);
    throw error;
  }
  throw new Error("expected a ValidationError");
}

describe("nextOccurrences", () => {
  it("is exported from the package root", () => {
    expect(publicApi.nextOccurrences).toBe(nextOccurrences);
  });

  it("gives the issue's example: 30 2 * * * in New York over the 2024 spring-forward", () => {
    const fires = nextOccurrences(
      { type: "cron", cron: "30 2 * * *", timezone: "America/New_York" },
      { after: new Date("2024-03-09T00:00:00Z"), count: 3 },
    );
    expect(isoList(fires)).toEqual([
      "2024-03-09T07:30:00Z",
      "2024-03-10T07:00:00Z",
      "2024-03-11T06:30:00Z",
    ]);
  });

  it("returns Date objects on whole seconds, strictly after a fractional after", () => {
    const fires = nextOccurrences(
      { type: "cron", cron: "* * * * * *" },
      { after: new Date("2024-01-01T00:00:00.400Z"), count: 2 },
    );
    expect(fires.every((d) => d instanceof Date && d.getTime() % 1000 === 0)).toBe(true);
    expect(isoList(fires)).toEqual(["2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z"]);
  });

  it("returns the single fire of a once schedule, or none once it has passed", () => {
    const once: NextOccurrencesSchedule = {
      type: "once",
      run_at: "2026-12-01T09:00:00",
      timezone: "Europe/Berlin",
    };
    expect(
      isoList(nextOccurrences(once, { after: new Date("2026-01-01T00:00:00Z"), count: 5 })),
    ).toEqual(["2026-12-01T08:00:00Z"]);
    expect(nextOccurrences(once, { after: new Date("2026-12-01T08:00:00Z"), count: 5 })).toEqual(
      [],
    );
  });

  it("anchors an interval without start_at at after (on its whole second)", () => {
    const fires = nextOccurrences(
      { type: "interval", every: "PT5M" },
      { after: new Date("2024-01-01T00:00:00.500Z"), count: 3 },
    );
    expect(isoList(fires)).toEqual([
      "2024-01-01T00:05:00Z",
      "2024-01-01T00:10:00Z",
      "2024-01-01T00:15:00Z",
    ]);
  });

  it("anchors an interval at start_at, which fires too", () => {
    const fires = nextOccurrences(
      { type: "interval", every: 3600, start_at: "2024-01-01T12:00:00Z" },
      { after: new Date("2024-01-01T00:00:00Z"), count: 2 },
    );
    expect(isoList(fires)).toEqual(["2024-01-01T12:00:00Z", "2024-01-01T13:00:00Z"]);
  });

  it("serves 1000 per-second fires quickly and in order", () => {
    const fires = nextOccurrences(
      { type: "cron", cron: "* * * * * *", timezone: "Europe/Berlin" },
      { after: new Date("2024-03-31T00:50:00Z"), count: 1000 },
    );
    expect(fires).toHaveLength(1000);
    expect(isoList(fires).slice(599, 601)).toEqual([
      "2024-03-31T01:00:00Z",
      "2024-03-31T01:00:01Z",
    ]);
  });

  it.each([
    [{ after: new Date("2024-01-01T00:00:00Z"), count: 0 }, ["count"]],
    [{ after: new Date("2024-01-01T00:00:00Z"), count: 1001 }, ["count"]],
    [{ after: new Date("2024-01-01T00:00:00Z"), count: 2.5 }, ["count"]],
    [{ after: new Date("nonsense"), count: 1 }, ["after"]],
    [{ after: "2024-01-01T00:00:00Z", count: 1 }, ["after"]],
  ])("validates the options %j", (options, fields) => {
    expect(
      fieldsOf(() =>
        nextOccurrences(
          { type: "cron", cron: "0 9 * * *" },
          options as { after: Date; count: number },
        ),
      ),
    ).toEqual(fields);
  });

  it("reports the schedule's problems together with those of the options", () => {
    expect(
      fieldsOf(() =>
        nextOccurrences(
          { type: "cron", cron: "60 * * * *", timezone: "europe/berlin" },
          { after: new Date("2024-01-01T00:00:00Z"), count: 0 },
        ),
      ),
    ).toEqual(["schedule.cron", "schedule.timezone", "count"]);
  });

  it.each([
    [{ type: "cron", cron: "0 0 31 2 *" }, "schedule.cron"],
    [{ type: "cron", cron: "@reboot" }, "schedule.cron"],
    [{ type: "cron", cron: "0 9 * * *", timezone: "" }, "schedule.timezone"],
    [{ type: "once", run_at: "2024-02-30T09:00:00Z" }, "schedule.run_at"],
    [{ type: "interval", every: "P1M" }, "schedule.every"],
    [{ type: "daily" }, "schedule.type"],
  ])("throws a ValidationError for %j", (schedule, field) => {
    expect(
      fieldsOf(() =>
        nextOccurrences(schedule as NextOccurrencesSchedule, {
          after: new Date("2024-01-01T00:00:00Z"),
          count: 1,
        }),
      ),
    ).toEqual([field]);
  });
});
