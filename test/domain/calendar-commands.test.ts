/**
 * Editing a calendar, for one task that names it (issue 22): only the occurrences not decided yet follow
 * the new calendar; the excluded ones already due are recorded under the calendar as it was; `version`
 * stays, and a stale or unrelated calendar changes nothing.
 */
import { describe, expect, it } from "vitest";
import type { Calendar } from "../../src/domain/calendar.js";
import { refreshCalendar, settleExcluded } from "../../src/domain/calendar-commands.js";
import { ownerId } from "../../src/domain/ids.js";
import { parseCalendarItems, parseSchedule } from "../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import { at, buildTask } from "./builders.js";

const iso = (t: Instant | null): string | null =>
  t === null ? null : new Date(t).toISOString().replace(".000Z", "Z");
const REFERENCE = at("2026-12-01T00:00:00Z");

function calendar(version: number, ...items: unknown[]): Calendar {
  return {
    owner: ownerId("local"),
    name: "holidays",
    items: parseCalendarItems(items, "items", 20_000).items,
    version,
    createdAt: REFERENCE,
    updatedAt: REFERENCE,
  };
}

/** Daily at 08:00 UTC, excluding the calendar, decided through `decidedThrough`. */
function task(held: Calendar, decidedThrough: string, overrides: Partial<Task> = {}): Task {
  const schedule = parseSchedule(
    { type: "cron", cron: "0 8 * * *", timezone: "UTC", exclude: [{ calendar: "holidays" }] },
    { referenceAt: REFERENCE, calendars: new Map([["holidays", held]]) },
  );
  return buildTask({ schedule, decidedThrough: at(decidedThrough), ...overrides });
}

describe("refreshCalendar", () => {
  it("moves next_run_at past a holiday added ahead", () => {
    const subject = task(calendar(1), "2026-12-23T08:00:00Z");
    expect(iso(subject.nextRunAt)).toBe("2026-12-24T08:00:00Z");
    const refreshed = refreshCalendar(
      subject,
      calendar(2, "2026-12-24"),
      at("2026-12-23T12:00:00Z"),
    );
    expect(refreshed?.newRuns).toEqual([]);
    expect(iso(refreshed?.task.nextRunAt ?? null)).toBe("2026-12-25T08:00:00Z");
    expect(refreshed?.task.version).toBe(subject.version);
  });

  it("moves next_run_at back to a day no longer excluded", () => {
    const subject = task(calendar(1, "2026-12-24"), "2026-12-23T08:00:00Z");
    const refreshed = refreshCalendar(subject, calendar(2), at("2026-12-23T12:00:00Z"));
    expect(iso(refreshed?.task.nextRunAt ?? null)).toBe("2026-12-24T08:00:00Z");
  });

  it("records an excluded occurrence already due under the old calendar, and does not fire it late", () => {
    // At 10:00 on the 24th the holiday is removed; 08:00 that day was excluded when it came due.
    const subject = task(calendar(1, "2026-12-24"), "2026-12-23T08:00:00Z");
    const now = at("2026-12-24T10:00:00Z");
    const refreshed = refreshCalendar(subject, calendar(2), now);
    expect(refreshed?.newRuns).toHaveLength(1);
    expect(refreshed?.newRuns[0]).toMatchObject({
      status: "skipped",
      reason: "excluded",
      scheduledFor: at("2026-12-24T08:00:00Z"),
      missedCount: 1,
      missedUntil: at("2026-12-24T08:00:00Z"),
    });
    expect(iso(refreshed?.task.decidedThrough ?? null)).toBe("2026-12-24T08:00:00Z");
    expect(iso(refreshed?.task.nextRunAt ?? null)).toBe("2026-12-25T08:00:00Z");
  });

  it("changes nothing for a task that holds this version or a later one", () => {
    const subject = task(calendar(3, "2026-12-24"), "2026-12-23T08:00:00Z");
    expect(refreshCalendar(subject, calendar(3), at("2026-12-23T12:00:00Z"))).toBeNull();
    expect(refreshCalendar(subject, calendar(2), at("2026-12-23T12:00:00Z"))).toBeNull();
  });

  it("keeps a terminal task's next_run_at while taking the new snapshot", () => {
    const subject = task(calendar(1), "2026-12-23T08:00:00Z", {
      status: "cancelled",
      nextRunAt: null,
    });
    const refreshed = refreshCalendar(
      subject,
      calendar(2, "2026-12-24"),
      at("2026-12-23T12:00:00Z"),
    );
    expect([refreshed?.task.nextRunAt, refreshed?.newRuns]).toEqual([null, []]);
    expect(refreshed?.task.schedule).not.toEqual(subject.schedule);
  });

  it("ignores a task that does not name the calendar", () => {
    const plain = buildTask({
      schedule: parseSchedule({ type: "cron", cron: "0 8 * * *" }, { referenceAt: REFERENCE }),
    });
    expect(refreshCalendar(plain, calendar(2), at("2026-12-23T12:00:00Z"))).toBeNull();
  });
});

describe("settleExcluded", () => {
  it("records nothing when the next undecided occurrence is not excluded", () => {
    const subject = task(calendar(1, "2026-12-25"), "2026-12-23T08:00:00Z");
    expect(settleExcluded(subject, at("2026-12-24T10:00:00Z")).newRuns).toEqual([]);
  });
});
