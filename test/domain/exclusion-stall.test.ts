/**
 * A task its exclusions hold still (docs/schedules.md#when-everything-left-is-excluded): only a task
 * that is not ended, has no end_at and no next_run_at, and whose every remaining nominal time is
 * excluded; named by its first held occurrence and the item excluding it.
 */
import { describe, expect, it } from "vitest";
import { exclusionStall } from "../../src/domain/exclusion-stall.js";
import { parseCalendarItems, parseSchedule } from "../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../src/domain/task.js";
import { at, buildTask } from "./builders.js";

const REFERENCE = at("2026-12-01T00:00:00Z");

/** A daily 08:00 UTC task naming calendar "days" with `items`, decided through Dec 1 08:00. */
function task(items: unknown[], overrides: Partial<Task> = {}, bounds = {}): Task {
  const calendar = {
    name: "days",
    version: 1,
    items: parseCalendarItems(items, "items", 20_000).items,
  };
  // The schedule is parsed while the calendar frees dates (as when the task was created), then edited.
  const schedule = parseSchedule(
    {
      type: "cron",
      cron: "0 8 * * *",
      timezone: "UTC",
      exclude: [{ calendar: "days" }],
      ...bounds,
    },
    { referenceAt: REFERENCE, calendars: new Map([["days", { ...calendar, items: [] }]]) },
  );
  return buildTask({
    schedule: {
      ...schedule,
      exclude: [{ kind: "calendar", ...calendar }],
    } as Task["schedule"],
    createdAt: REFERENCE,
    decidedThrough: at("2026-12-01T08:00:00Z"),
    nextRunAt: null,
    ...overrides,
  });
}

describe("exclusionStall", () => {
  it("holds a task whose every remaining day is excluded, naming the first and its item", () => {
    const stall = exclusionStall(task([{ days: "* * *" }]));
    expect(stall?.next).toBe(at("2026-12-02T08:00:00Z"));
    expect(stall?.exclusion.calendar).toBe("days");
    expect(stall?.exclusion.item).toMatchObject({ kind: "days", text: "* * *" });
    expect(exclusionStall(task([{ days: "* * *" }], { status: "paused" }))).not.toBeNull();
  });

  it.each([
    ["a task that will fire", task([{ days: "* * sun" }])],
    [
      "a task with a next_run_at",
      task([{ days: "* * *" }], { nextRunAt: at("2026-12-02T08:00:00Z") }),
    ],
    ["an ended task", task([{ days: "* * *" }], { status: "completed" })],
    [
      "a task that reached max_runs",
      task([{ days: "* * *" }], { admittedCount: 3 }, { max_runs: 3 }),
    ],
    ["a task with end_at", task([{ days: "* * *" }], {}, { end_at: "2027-01-01T00:00:00Z" })],
  ])("holds nothing for %s", (_what, subject) => {
    expect(exclusionStall(subject)).toBeNull();
  });
});
