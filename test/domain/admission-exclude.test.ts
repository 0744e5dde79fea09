/**
 * Admission of excluded occurrences (issue 22): nominal times on excluded dates are recorded `skipped`,
 * reason `excluded`, one range record per excluded stretch (a count and a range, like `missed`), never
 * silently absent; `next_run_at` is the next fire, and an exclusion never counts against `max_runs`.
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import type { Decision } from "../../src/domain/admission.js";
import { newRunFromDecision } from "../../src/domain/new-run.js";
import { createTask } from "../../src/domain/task-fields.js";
import type { Instant } from "../../src/domain/time.js";
import {
  DAY,
  OWNER,
  TASK_ID,
  at,
  buildTask,
  options,
  policy,
  schedule,
  userFields,
} from "./builders.js";

const iso = (t: Instant | null): string | null =>
  t === null ? null : new Date(t).toISOString().replace(".000Z", "Z");

function summary(d: Decision): string {
  switch (d.kind) {
    case "queue":
      return `queue ${iso(d.scheduledFor)}`;
    case "skip":
      return `skip ${iso(d.scheduledFor)} ${d.reason}`;
    case "miss":
      return `miss ${iso(d.from)}..${iso(d.until)} x${d.count} ${d.reason}`;
    case "exclude":
      return `exclude ${iso(d.from)}..${iso(d.until)} x${d.count}`;
  }
}

const REFERENCE = at("2026-12-01T00:00:00Z");
const dailyEight = schedule(
  {
    type: "cron",
    cron: "0 8 * * *",
    timezone: "UTC",
    exclude: [{ from: "2026-12-24", to: "2026-12-26" }, "2026-12-31"],
  },
  REFERENCE,
);

describe("admit: excluded occurrences", () => {
  it("records a whole excluded stretch as one skipped range, then the fire after it", () => {
    const task = buildTask({ schedule: dailyEight, decidedThrough: at("2026-12-23T08:00:00Z") });
    const admission = admit({ task, now: at("2026-12-27T08:00:10Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "exclude 2026-12-24T08:00:00Z..2026-12-26T08:00:00Z x3",
      "queue 2026-12-27T08:00:00Z",
    ]);
    expect([iso(admission.task.decidedThrough), iso(admission.task.nextRunAt)]).toEqual([
      "2026-12-27T08:00:00Z",
      "2026-12-28T08:00:00Z",
    ]);
    expect(admission.task.admittedCount).toBe(1);
  });

  it("writes the stretch as a skipped run row with reason excluded, a count and a range", () => {
    const task = buildTask({ schedule: dailyEight, decidedThrough: at("2026-12-23T08:00:00Z") });
    const [first] = admit({ task, now: at("2026-12-27T08:00:10Z"), activeRuns: [] }).decisions;
    if (first === undefined) throw new Error("no decision");
    const row = newRunFromDecision(
      { id: TASK_ID, owner: OWNER, threadScope: "handler" },
      first,
      at("2026-12-27T08:00:10Z"),
    );
    expect(row).toMatchObject({
      status: "skipped",
      reason: "excluded",
      trigger: "scheduled",
      scheduledFor: at("2026-12-24T08:00:00Z"),
      missedCount: 3,
      missedUntil: at("2026-12-26T08:00:00Z"),
      finishedAt: at("2026-12-27T08:00:10Z"),
    });
  });

  it("sets next_run_at past an excluded stretch (so nothing wakes during a holiday)", () => {
    const task = createTask(userFields({ schedule: dailyEight }), {
      id: TASK_ID,
      owner: OWNER,
      now: at("2026-12-23T09:00:00Z"),
      policy: policy(),
      webhookSecret: "s",
    });
    expect(iso(task.nextRunAt)).toBe("2026-12-27T08:00:00Z");
  });

  it("records a per-second task's holiday as one record of 86,400 nominal times", () => {
    const perSecond = schedule(
      { type: "cron", cron: "* * * * * *", timezone: "Europe/Berlin", exclude: ["2026-12-25"] },
      REFERENCE,
    );
    // Berlin's Dec 25 runs from 2026-12-24T23:00Z to 2026-12-25T23:00Z.
    const task = buildTask({
      schedule: perSecond,
      options: options({ overlap: "allow_all" }),
      decidedThrough: at("2026-12-24T22:59:59Z"),
    });
    const admission = admit({ task, now: at("2026-12-25T23:00:00Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "exclude 2026-12-24T23:00:00Z..2026-12-25T22:59:59Z x86400",
      "queue 2026-12-25T23:00:00Z",
    ]);
  });

  it("records a holiday on a DST day with the day's real count (23 hours of seconds)", () => {
    const perMinute = schedule(
      { type: "cron", cron: "* * * * *", timezone: "Europe/Berlin", exclude: ["2026-03-29"] },
      at("2026-03-01T00:00:00Z"),
    );
    // Berlin sprang forward on 2026-03-29 at 01:00Z: that local day has 23 hours.
    const task = buildTask({ schedule: perMinute, decidedThrough: at("2026-03-28T22:59:00Z") });
    const admission = admit({ task, now: at("2026-03-29T22:00:30Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "exclude 2026-03-28T23:00:00Z..2026-03-29T21:59:00Z x1380",
      "queue 2026-03-29T22:00:00Z",
    ]);
  });

  it("records excluded nominal times as excluded, not missed, after an outage", () => {
    const task = buildTask({ schedule: dailyEight, decidedThrough: at("2026-12-20T08:00:00Z") });
    const admission = admit({ task, now: at("2027-01-01T12:00:00Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "miss 2026-12-21T08:00:00Z..2026-12-23T08:00:00Z x3 window",
      "exclude 2026-12-24T08:00:00Z..2026-12-26T08:00:00Z x3",
      "miss 2026-12-27T08:00:00Z..2026-12-30T08:00:00Z x4 window",
      "exclude 2026-12-31T08:00:00Z..2026-12-31T08:00:00Z x1",
      "miss 2027-01-01T08:00:00Z..2027-01-01T08:00:00Z x1 window",
    ]);
    expect(iso(admission.task.decidedThrough)).toBe("2027-01-01T08:00:00Z");
  });

  it("records excluded nominal times inside a pause as excluded at resume", () => {
    const task = buildTask({
      schedule: dailyEight,
      status: "paused",
      decidedThrough: at("2026-12-22T08:00:00Z"),
    });
    const admission = admit({
      task: { ...task, status: "enabled" },
      now: at("2026-12-27T12:00:00Z"),
      activeRuns: [],
      mode: { kind: "resume", catchUp: "latest" },
    });
    expect(admission.decisions.map(summary)).toEqual([
      "miss 2026-12-23T08:00:00Z..2026-12-23T08:00:00Z x1 paused",
      "exclude 2026-12-24T08:00:00Z..2026-12-26T08:00:00Z x3",
      "queue 2026-12-27T08:00:00Z",
    ]);
  });

  it("never counts an excluded occurrence against max_runs", () => {
    const limited = schedule(
      {
        type: "cron",
        cron: "0 8 * * *",
        timezone: "UTC",
        max_runs: 2,
        exclude: ["2026-12-24"],
      },
      REFERENCE,
    );
    const task = buildTask({
      schedule: limited,
      options: options({
        overlap: "allow_all",
        lateAfterMs: 3 * DAY,
        catchUp: { windowMs: 3 * DAY, policy: "all" },
      }),
      decidedThrough: at("2026-12-22T08:00:00Z"),
    });
    const admission = admit({ task, now: at("2026-12-25T08:00:00Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "queue 2026-12-23T08:00:00Z",
      "exclude 2026-12-24T08:00:00Z..2026-12-24T08:00:00Z x1",
      "queue 2026-12-25T08:00:00Z",
    ]);
    expect([admission.task.admittedCount, admission.task.status]).toEqual([2, "completed"]);
  });

  it("records the excluded nominal times left before end_at, then completes the task", () => {
    const ending = schedule(
      {
        type: "cron",
        cron: "0 8 * * *",
        timezone: "UTC",
        end_at: "2026-12-26T12:00:00Z",
        exclude: [{ from: "2026-12-24", to: "2026-12-26" }],
      },
      REFERENCE,
    );
    const task = buildTask({ schedule: ending, decidedThrough: at("2026-12-23T07:00:00Z") });
    const first = admit({ task, now: at("2026-12-23T08:00:05Z"), activeRuns: [] });
    expect(first.decisions.map(summary)).toEqual(["queue 2026-12-23T08:00:00Z"]);
    expect([iso(first.task.nextRunAt), first.task.status]).toEqual([
      "2026-12-26T12:00:00Z",
      "enabled",
    ]);
    const last = admit({
      task: { ...task, ...first.task },
      now: at("2026-12-26T12:00:00Z"),
      activeRuns: [],
    });
    expect(last.decisions.map(summary)).toEqual([
      "exclude 2026-12-24T08:00:00Z..2026-12-26T08:00:00Z x3",
    ]);
    expect([last.task.nextRunAt, last.task.status]).toEqual([null, "completed"]);
  });

  it("works through a stretch longer than one pass in exact consecutive records", () => {
    const perSecond = schedule(
      {
        type: "cron",
        cron: "* * * * * *",
        timezone: "UTC",
        exclude: [{ from: "2026-12-24", to: "2026-12-26" }],
      },
      REFERENCE,
    );
    const task = buildTask({
      schedule: perSecond,
      options: options({ overlap: "allow_all" }),
      decidedThrough: at("2026-12-23T23:59:59Z"),
    });
    const now = at("2026-12-27T00:00:00Z");
    const first = admit({ task, now, activeRuns: [] });
    expect(first.decisions.map(summary)).toEqual([
      "exclude 2026-12-24T00:00:00Z..2026-12-26T07:33:19Z x200000",
    ]);
    const second = admit({ task: { ...task, ...first.task }, now, activeRuns: [] });
    expect(second.decisions.map(summary)).toEqual([
      "exclude 2026-12-26T07:33:20Z..2026-12-26T23:59:59Z x59200",
      "queue 2026-12-27T00:00:00Z",
    ]);
  });

  it("keeps interval fires on excluded dates as excluded ranges too", () => {
    const hourly = schedule(
      {
        type: "interval",
        every: "PT1H",
        start_at: "2026-12-23T00:00:00Z",
        exclude: ["2026-12-24"],
      },
      REFERENCE,
    );
    const task = buildTask({ schedule: hourly, decidedThrough: at("2026-12-23T23:00:00Z") });
    const admission = admit({ task, now: at("2026-12-25T00:00:30Z"), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual([
      "exclude 2026-12-24T00:00:00Z..2026-12-24T23:00:00Z x24",
      "queue 2026-12-25T00:00:00Z",
    ]);
    expect(iso(admission.task.nextRunAt)).toBe("2026-12-25T01:00:00Z");
  });
});
