/**
 * Moved occurrences (issue 34, docs/schedules.md#moved-occurrences): with `on_excluded` `previous` or
 * `next`, an occurrence on an excluded date fires on the nearest date not excluded at the same wall
 * time, keeps its nominal time as its identity, never passes a neighbouring occurrence, and is skipped
 * as before when no move fits. Every instant here is given: no clock is read.
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../../src/domain/admission.js";
import type { Decision } from "../../../src/domain/admission.js";
import { ValidationError } from "../../../src/domain/errors.js";
import { decodeSchedule, encodeSchedule } from "../../../src/domain/schedule-codec.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import {
  MAX_MOVE_DAYS,
  nextDueAfter,
  nextOccurrenceAfter,
  parseSchedule,
  scheduleToInput,
} from "../../../src/domain/schedule/schedule-spec.js";
import type { Instant } from "../../../src/domain/time.js";
import { at, buildTask } from "../builders.js";

const iso = (t: Instant | Date | null): string | null =>
  t === null ? null : new Date(t).toISOString().replace(".000Z", "Z");

const REFERENCE = at("2026-01-01T00:00:00Z");

/** Payroll: the 25th at 09:00 Berlin, Christmas and weekends excluded. */
function payroll(onExcluded: "skip" | "previous" | "next", extra: object = {}) {
  return {
    type: "cron" as const,
    cron: "0 9 25 * *",
    timezone: "Europe/Berlin",
    exclude: ["2026-12-25", "2026-12-26", { days: "* * 6,0" }],
    on_excluded: onExcluded,
    ...extra,
  };
}

function fires(input: object, after: string, count: number): (string | null)[] {
  return nextOccurrences(input as never, { after: new Date(after), count }).map(iso);
}

function summary(d: Decision): string {
  switch (d.kind) {
    case "queue":
      return `queue ${iso(d.scheduledFor)} fires ${iso(d.fireAt)}`;
    case "skip":
      return `skip ${iso(d.scheduledFor)} ${d.reason}`;
    case "miss":
      return `miss ${iso(d.from)} x${d.count} ${d.reason}`;
    case "exclude":
      return `exclude ${iso(d.from)}..${iso(d.until)} x${d.count}`;
  }
}

describe("on_excluded: the preview", () => {
  it("skips an excluded occurrence by default, as before", () => {
    // 2026-10-25 is a Sunday, 2026-12-25 a Friday (Christmas, excluded).
    expect(fires(payroll("skip"), "2026-10-01T00:00:00Z", 3)).toEqual([
      "2026-11-25T08:00:00Z",
      "2027-01-25T08:00:00Z",
      "2027-02-25T08:00:00Z",
    ]);
  });

  it("moves it to the date before that is not excluded, at the same wall time", () => {
    // Sunday 25 October -> Friday 23 October (still summer time: 09:00 is 07:00Z);
    // Friday 25 December -> Thursday 24 December.
    expect(fires(payroll("previous"), "2026-10-01T00:00:00Z", 4)).toEqual([
      "2026-10-23T07:00:00Z",
      "2026-11-25T08:00:00Z",
      "2026-12-24T08:00:00Z",
      "2027-01-25T08:00:00Z",
    ]);
  });

  it("moves it to the date after that is not excluded, at the same wall time", () => {
    // Sunday 25 October -> Monday 26 October (winter time since the 25th: 09:00 is 08:00Z);
    // Friday 25 December -> Monday 28 December (26th excluded, then the weekend).
    expect(fires(payroll("next"), "2026-10-01T00:00:00Z", 4)).toEqual([
      "2026-10-26T08:00:00Z",
      "2026-11-25T08:00:00Z",
      "2026-12-28T08:00:00Z",
      "2027-01-25T08:00:00Z",
    ]);
  });

  it("lists a moved fire that lies after `after` even when its occurrence lies before it", () => {
    expect(fires(payroll("next"), "2026-12-25T12:00:00Z", 1)).toEqual(["2026-12-28T08:00:00Z"]);
    expect(fires(payroll("previous"), "2026-12-24T09:00:00Z", 1)).toEqual(["2027-01-25T08:00:00Z"]);
  });

  it("never moves an occurrence past a neighbouring one: a daily job skips its holiday", () => {
    const daily = {
      type: "cron",
      cron: "0 9 * * *",
      timezone: "UTC",
      exclude: ["2026-12-25"],
      on_excluded: "previous",
    };
    expect(fires(daily, "2026-12-23T12:00:00Z", 3)).toEqual([
      "2026-12-24T09:00:00Z",
      "2026-12-26T09:00:00Z",
      "2026-12-27T09:00:00Z",
    ]);
  });

  it("skips the occurrence when no date within the bound is free, or the move would leave the bounds", () => {
    const closed = {
      type: "cron",
      cron: "0 9 15 6 *",
      timezone: "UTC",
      exclude: [{ from: "2026-06-01", to: "2026-08-31" }],
      on_excluded: "next",
    };
    // 15 June 2026 would move to 1 September: 78 days, beyond the bound of 31.
    expect(MAX_MOVE_DAYS).toBe(31);
    expect(fires(closed, "2026-06-01T00:00:00Z", 1)).toEqual(["2027-06-15T09:00:00Z"]);
    const bounded = { ...payroll("previous"), start_at: "2026-12-24T12:00:00Z" };
    expect(fires(bounded, "2026-12-01T00:00:00Z", 1)).toEqual(["2027-01-25T08:00:00Z"]);
  });

  it("follows the cron rule for a moved wall time the zone skips: the transition instant", () => {
    // 02:30 on 29 March 2026 does not exist in Berlin (02:00 -> 03:00).
    const input = {
      type: "cron",
      cron: "30 2 30 3 *",
      timezone: "Europe/Berlin",
      exclude: ["2026-03-30"],
      on_excluded: "previous",
    };
    expect(fires(input, "2026-03-01T00:00:00Z", 1)).toEqual(["2026-03-29T01:00:00Z"]);
  });

  it("follows the rrule rule for it: the offset in force before the gap (RFC 5545 3.3.5)", () => {
    const input = {
      type: "rrule",
      rrule: "DTSTART;TZID=Europe/Berlin:20260330T023000\nRRULE:FREQ=YEARLY",
      exclude: ["2026-03-30"],
      on_excluded: "previous",
    };
    // 02:30 read at +01:00 is 01:30Z (03:30 summer time).
    expect(fires(input, "2026-03-01T00:00:00Z", 1)).toEqual(["2026-03-29T01:30:00Z"]);
  });

  it("round-trips the option and refuses an unknown one", () => {
    const spec = parseSchedule(payroll("next"), { referenceAt: REFERENCE });
    expect(scheduleToInput(spec)).toMatchObject({ on_excluded: "next" });
    const stored = JSON.parse(JSON.stringify(encodeSchedule(spec))) as unknown;
    expect(decodeSchedule(stored)).toMatchObject({ onExcluded: "next" });
    const skip = parseSchedule(payroll("skip"), { referenceAt: REFERENCE });
    expect(scheduleToInput(skip)).not.toHaveProperty("on_excluded");
    expect(() => parseSchedule(payroll("before" as never), { referenceAt: REFERENCE })).toThrow(
      ValidationError,
    );
    expect(() =>
      parseSchedule(
        { type: "once", run_at: "2026-02-01T00:00:00Z", on_excluded: "next" },
        {
          referenceAt: REFERENCE,
        },
      ),
    ).toThrow(/on_excluded/);
  });
});

describe("on_excluded: admission", () => {
  const spec = parseSchedule(payroll("previous"), { referenceAt: REFERENCE });

  it("decides a moved occurrence at its moved instant, under its own nominal time", () => {
    const task = buildTask({ schedule: spec, decidedThrough: at("2026-11-25T08:00:00Z") });
    expect(iso(nextDueAfter(spec, task.decidedThrough))).toBe("2026-12-24T08:00:00Z");
    expect(admit({ task, now: at("2026-12-24T07:59:59Z"), activeRuns: [] }).decisions).toEqual([]);
    const admission = admit({ task, now: at("2026-12-24T08:00:01Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "queue 2026-12-25T08:00:00Z fires 2026-12-24T08:00:00Z",
    ]);
    const [queued] = admission.decisions;
    expect(queued).toMatchObject({
      notBefore: at("2026-12-24T08:00:00Z"),
      idempotencyKey: `punctual:${task.id}:scheduled:${at("2026-12-25T08:00:00Z")}`,
    });
    // One decision: the watermark is past the occurrence, the next one is January's.
    expect(iso(admission.task.decidedThrough)).toBe("2026-12-25T08:00:00Z");
    expect(iso(admission.task.nextRunAt)).toBe("2027-01-25T08:00:00Z");
    const again = admit({
      task: { ...task, ...admission.task },
      now: at("2026-12-25T09:00:00Z"),
      activeRuns: [],
    });
    expect(again.decisions).toEqual([]);
  });

  it("records an occurrence that cannot move as excluded, in order with the moved ones", () => {
    const next = parseSchedule(
      { ...payroll("next"), exclude: [{ from: "2026-12-25", to: "2027-01-31" }] },
      { referenceAt: REFERENCE },
    );
    const task = buildTask({ schedule: next, decidedThrough: at("2026-11-25T08:00:00Z") });
    // December 25 cannot move past January 25; January 25 moves to February 1 (a Monday).
    const before = admit({ task, now: at("2027-01-31T08:00:00Z"), activeRuns: [] });
    expect(before.decisions.map(summary)).toEqual([
      "exclude 2026-12-25T08:00:00Z..2026-12-25T08:00:00Z x1",
    ]);
    expect(iso(before.task.nextRunAt)).toBe("2027-02-01T08:00:00Z");
    const onTime = admit({ task, now: at("2027-02-01T08:00:05Z"), activeRuns: [] });
    expect(onTime.decisions.map(summary)).toEqual([
      "exclude 2026-12-25T08:00:00Z..2026-12-25T08:00:00Z x1",
      "queue 2027-01-25T08:00:00Z fires 2027-02-01T08:00:00Z",
    ]);
    expect(nextOccurrenceAfter(next, at("2026-12-01T00:00:00Z"))).toEqual({
      scheduledFor: at("2027-01-25T08:00:00Z"),
      fireAt: at("2027-02-01T08:00:00Z"),
      moved: true,
    });
  });
});
