/**
 * `explain` names the rule or the exclusion behind each fire or non-fire (issue 22): an occurrence on an
 * excluded date (recorded or not yet), the range record covering it, and the rule of a schedule with
 * several expressions.
 */
import { describe, expect, it } from "vitest";
import { explainAt } from "../../src/domain/explain.js";
import { explainWindow } from "../../src/domain/explain-window.js";
import type { Explanation } from "../../src/domain/explain.js";
import type { RunId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import {
  calendarItemInput,
  parseCalendarItems,
  parseSchedule,
} from "../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import { at, buildRun, buildTask } from "./builders.js";

const REFERENCE = at("2026-12-01T00:00:00Z");
const HOLIDAYS = {
  name: "holidays",
  version: 3,
  items: parseCalendarItems([{ from: "2026-12-24", to: "2026-12-26" }], "items", 20_000).items,
};

function task(input: Record<string, unknown>, decidedThrough: string): Task {
  return buildTask({
    schedule: parseSchedule(input, {
      referenceAt: REFERENCE,
      calendars: new Map([["holidays", HOLIDAYS]]),
    }),
    createdAt: REFERENCE,
    decidedThrough: at(decidedThrough),
  });
}

function explain(subject: Task, instant: Instant, runs: readonly Run[], now: Instant): Explanation {
  return explainAt({
    task: subject,
    at: instant,
    now,
    window: explainWindow(subject, instant),
    runs,
    complete: true,
  });
}

const DAILY = {
  type: "cron",
  cron: "0 8 * * *",
  timezone: "UTC",
  exclude: ["2026-12-31", { calendar: "holidays" }],
};

describe("explain with exclusions and several rules", () => {
  it("names the calendar item behind an excluded occurrence not recorded yet", () => {
    const subject = task(DAILY, "2026-12-23T08:00:00Z");
    const answer = explain(subject, at("2026-12-25T09:00:00Z"), [], at("2026-12-25T09:00:00Z"));
    expect(answer.verdict).toBe("excluded");
    const hit = answer.exclusion;
    expect(hit && [calendarItemInput(hit.item), hit.calendar]).toEqual([
      { from: "2026-12-24", to: "2026-12-26" },
      "holidays",
    ]);
    expect(answer.message).toBe(
      'The occurrence of 2026-12-25 08:00:00 +00:00 fell on an excluded date (the dates 2026-12-24 to 2026-12-26 of calendar "holidays") and did not fire: it is recorded (skipped, reason excluded) when the task next fires; the next occurrence is 2026-12-27 08:00:00 +00:00.',
    );
    expect(answer.nextOccurrence?.scheduledFor).toBe(at("2026-12-27T08:00:00Z"));
  });

  it("finds the excluded range record that covers the occurrence", () => {
    const subject = task(DAILY, "2026-12-27T08:00:00Z");
    const record = buildRun({
      id: "r-excl" as RunId,
      status: "skipped",
      reason: "excluded",
      scheduledFor: at("2026-12-24T08:00:00Z"),
      fireAt: at("2026-12-24T08:00:00Z"),
      missedCount: 3,
      missedUntil: at("2026-12-26T08:00:00Z"),
    });
    const answer = explain(
      subject,
      at("2026-12-26T10:00:00Z"),
      [record],
      at("2026-12-28T00:00:00Z"),
    );
    expect(answer.verdict).toBe("excluded");
    expect(answer.run?.id).toBe("r-excl");
    expect(answer.message).toMatch(
      /^The occurrence of 2026-12-26 08:00:00 \+00:00 fell on an excluded date \(the dates 2026-12-24 to 2026-12-26 of calendar "holidays"\): it was skipped: it fell on a date the schedule's exclude names; record r-excl covers 3 nominal times from 2026-12-24 08:00:00 \+00:00 to 2026-12-26 08:00:00 \+00:00;/,
    );
  });

  it("names the schedule's own date item", () => {
    const subject = task(DAILY, "2026-12-30T08:00:00Z");
    const answer = explain(subject, at("2026-12-31T08:00:00Z"), [], at("2026-12-31T09:00:00Z"));
    expect(answer.verdict).toBe("excluded");
    expect(answer.exclusion?.calendar).toBeNull();
    expect(answer.message).toMatch(/\(the date 2026-12-31\)/);
  });

  it("reads an interval's excluded dates, and words its times, in its timezone", () => {
    const subject = task(
      {
        type: "interval",
        every: "PT6H",
        start_at: "2026-12-01T00:00:00Z",
        timezone: "Asia/Tokyo",
        exclude: ["2026-12-03"],
      },
      "2026-12-02T12:00:00Z",
    );
    // 2026-12-02T18:00Z is 03:00 on Dec 3 in Tokyo.
    const answer = explain(subject, at("2026-12-02T19:00:00Z"), [], at("2026-12-02T19:00:00Z"));
    expect(answer.verdict).toBe("excluded");
    expect(answer.message).toMatch(
      /^The occurrence of 2026-12-03 03:00:00 \+09:00 fell on an excluded date \(the date 2026-12-03\)/,
    );
    expect(answer.occurrence?.wall).toBe("2026-12-03T03:00:00");
  });

  it("names the rule behind a fire when the schedule has several", () => {
    const subject = task(
      { type: "cron", cron: ["0 9 * * 1-5", "0 10 * * sat"], timezone: "UTC" },
      "2026-12-05T10:00:00Z",
    );
    const run = buildRun({
      id: "r-sat" as RunId,
      status: "succeeded",
      scheduledFor: at("2026-12-05T10:00:00Z"),
      fireAt: at("2026-12-05T10:00:00Z"),
      launchedAt: at("2026-12-05T10:00:01Z"),
      latenessMs: 1000,
    });
    const answer = explain(subject, at("2026-12-05T10:30:00Z"), [run], at("2026-12-05T11:00:00Z"));
    expect(answer.verdict).toBe("launched");
    expect(answer.occurrence?.rule).toBe("0 10 * * sat");
    expect(answer.message).toMatch(
      /^The occurrence of 2026-12-05 10:00:00 \+00:00 \(rule "0 10 \* \* sat"\) was launched as run r-sat/,
    );
  });
});
