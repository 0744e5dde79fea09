/**
 * Contract: named calendars (issue 22). A calendar round-trips its items and counts its versions per
 * owner; a delete is refused while a task (not deleted) names it; a task write that brings a calendar
 * snapshot is refused when the calendar changed or went meanwhile (so no task keeps a stale snapshot),
 * and a write that does not touch its snapshots never is; excluded stretches land in the ledger as one
 * `skipped` range each. A task references its calendar by name and version: each read (admission's
 * included) gives it that version's items, also after the calendar moved on; the versions no task
 * references any more are removed, and a calendar made again after a delete never reuses a version a
 * deleted task still references.
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/domain/ports/store.js";
import { calendarStamps, withCalendar } from "../../../src/domain/calendar.js";
import type { Calendar } from "../../../src/domain/calendar.js";
import { CalendarChangedError, CalendarInUseError } from "../../../src/domain/errors.js";
import type { CalendarRepository } from "../../../src/domain/ports/calendar-repository.js";
import { parseSchedule } from "../../../src/domain/schedule/parse-schedule.js";
import {
  calendarItemInput,
  parseCalendarItems,
} from "../../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../../src/domain/task.js";
import type { Instant } from "../../../src/domain/time.js";
import { DEFAULT_POLICY } from "../../../src/domain/options.js";
import { createTask } from "../../../src/domain/task-fields.js";
import {
  ALICE,
  ALL,
  BOB,
  FRESH_THREAD,
  HOUR,
  T0,
  agentTarget,
  at,
  buildTask,
  nextTaskId,
  taskOptions,
} from "../fixtures.js";
import { admitDue, edit, pause, remove, scheduledDecisions } from "../store-steps.js";
import type { ContractContext } from "./contract-context.js";

const TODAY = Math.floor(T0 / 86_400_000);

function items(...input: unknown[]) {
  const parsed = parseCalendarItems(input, "items", TODAY);
  if (parsed.errors.length > 0) throw new Error(JSON.stringify(parsed.errors));
  return parsed.items;
}

function calendarsOf(store: Store): CalendarRepository {
  if (store.calendars === undefined) throw new Error(`the ${store.kind} store keeps no calendars`);
  return store.calendars;
}

/** A task whose schedule names `calendar` (as the service builds it: the calendar read beforehand). */
function taskNaming(calendar: Calendar, schedule: Record<string, unknown> = {}): Task {
  const input = {
    type: "cron",
    cron: "0 8 * * *",
    timezone: "UTC",
    exclude: [{ calendar: calendar.name }],
    ...schedule,
  };
  const spec = parseSchedule(input, {
    referenceAt: T0,
    calendars: new Map([[calendar.name, calendar]]),
  });
  return createTask(
    { ...userFields, schedule: spec, options: taskOptions({ overlap: "allow_all" }) },
    {
      id: nextTaskId(),
      owner: calendar.owner,
      now: T0,
      policy: DEFAULT_POLICY,
      webhookSecret: "s",
    },
  );
}

const userFields = {
  title: "Holiday-aware report",
  description: null,
  target: agentTarget(),
  context: FRESH_THREAD,
  metadata: {},
};

export function describeCalendars(ctx: ContractContext): void {
  describe("calendars", () => {
    it("stores a calendar's items and counts its versions, per owner", async () => {
      const calendars = calendarsOf(ctx.store());
      const first = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      expect(first).toMatchObject({ owner: ALICE, name: "holidays", version: 1 });
      expect([first.createdAt, first.updatedAt]).toEqual([at(1), at(1)]);
      const second = await calendars.putCalendar(
        ALICE,
        "holidays",
        items({ from: "2030-12-24", to: "2030-12-26" }, { days: "1 1 *" }),
        at(2),
      );
      expect([second.version, second.createdAt, second.updatedAt]).toEqual([2, at(1), at(2)]);
      expect(second.items.map(calendarItemInput)).toEqual([
        { from: "2030-12-24", to: "2030-12-26" },
        { days: "1 1 *" },
      ]);
      await calendars.putCalendar(BOB, "holidays", items("2031-01-01"), at(3));
      await calendars.putCalendar(ALICE, "audits", items("2030-06-30"), at(4));
      const [found] = await calendars.findCalendars(ALICE, ["holidays", "missing"]);
      expect(found).toEqual(second);
      const alices = await calendars.listCalendars(ALICE, { limit: 50 });
      expect(alices.items.map((c) => c.name)).toEqual(["audits", "holidays"]);
      expect(alices.nextCursor).toBeNull();
      const bobs = await calendars.listCalendars(BOB, { limit: 50 });
      expect(bobs.items.map((c) => [c.name, c.version])).toEqual([["holidays", 1]]);
    });

    it("lists an owner's calendars by pages, in byte order of their names", async () => {
      const calendars = calendarsOf(ctx.store());
      // Upper case before lower, '-' before digits: byte order on every store, whatever the collation.
      const names = ["b", "B", "a-1", "a1", "A", "z", "_x"];
      for (const [i, name] of names.entries()) {
        await calendars.putCalendar(ALICE, name, items("2030-12-25"), at(i));
      }
      await calendars.putCalendar(BOB, "a0", items("2030-12-25"), at(9));
      const seen: string[][] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await calendars.listCalendars(ALICE, {
          limit: 3,
          ...(cursor === undefined ? {} : { cursor }),
        });
        seen.push(page.items.map((c) => c.name));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual([["A", "B", "_x"], ["a-1", "a1", "b"], ["z"]]);
      await expect(
        calendars.listCalendars(ALICE, { limit: 3, cursor: "not-a-cursor" }),
      ).rejects.toMatchObject({ code: "validation_failed" });
    });

    it("checks the calendar quotas in the put, with what the owner's calendars hold", async () => {
      const calendars = calendarsOf(ctx.store());
      await calendars.putCalendar(ALICE, "one", items("2030-12-25", "2030-12-26"), at(1));
      await calendars.putCalendar(ALICE, "two", items("2030-12-27"), at(2));
      await calendars.putCalendar(BOB, "other", items("2030-12-27"), at(3));
      const seen: unknown[] = [];
      const quota = (owner: unknown, held: unknown, count: number) => {
        seen.push([owner, held, count]);
      };
      await calendars.putCalendar(ALICE, "two", items("2031-01-01", "2031-01-02"), at(4), quota);
      await calendars.putCalendar(ALICE, "three", items("2031-01-03"), at(5), quota);
      expect(seen).toEqual([
        [ALICE, { calendars: 2, items: 3, current: 1 }, 2],
        [ALICE, { calendars: 2, items: 4, current: null }, 1],
      ]);
      const refuse = () => {
        throw new Error("refused");
      };
      await expect(
        calendars.putCalendar(ALICE, "four", items("2031-01-04"), at(6), refuse),
      ).rejects.toThrow("refused");
      await expect(
        calendars.putCalendar(ALICE, "one", items("2031-01-04"), at(6), refuse),
      ).rejects.toThrow("refused");
      // A refusal writes nothing.
      expect(await calendars.findCalendars(ALICE, ["four"])).toEqual([]);
      const [one] = await calendars.findCalendars(ALICE, ["one"]);
      expect(one?.version).toBe(1);
    });

    it("deletes a calendar no task names, and answers false for one that is not there", async () => {
      const calendars = calendarsOf(ctx.store());
      await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      await expect(calendars.deleteCalendar(BOB, "holidays")).resolves.toBe(false);
      await expect(calendars.deleteCalendar(ALICE, "holidays")).resolves.toBe(true);
      await expect(calendars.deleteCalendar(ALICE, "holidays")).resolves.toBe(false);
      expect(await calendars.findCalendars(ALICE, ["holidays"])).toEqual([]);
    });

    it("refuses to delete a calendar a task names, naming the task, until the task is deleted", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const holidays = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      const task = taskNaming(holidays);
      await store.tasks.insertTask(task);
      await pause(store, task.id, at(2));
      const refusal = calendars.deleteCalendar(ALICE, "holidays");
      await expect(refusal).rejects.toBeInstanceOf(CalendarInUseError);
      await expect(refusal).rejects.toMatchObject({ code: "calendar_in_use", taskId: task.id });
      expect(await calendars.tasksUsingCalendar(ALICE, "holidays")).toEqual([task.id]);
      expect(await calendars.tasksUsingCalendar(BOB, "holidays")).toEqual([]);
      await remove(store, task.id, at(3));
      expect(await calendars.tasksUsingCalendar(ALICE, "holidays")).toEqual([]);
      await expect(calendars.deleteCalendar(ALICE, "holidays")).resolves.toBe(true);
    });

    it("refuses a task whose calendar snapshot is stale or whose calendar is gone", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      await calendars.putCalendar(ALICE, "holidays", items("2030-12-26"), at(2));
      const stale = store.tasks.insertTask(taskNaming(v1));
      await expect(stale).rejects.toBeInstanceOf(CalendarChangedError);
      await expect(stale).rejects.toMatchObject({ code: "version_conflict", calendar: "holidays" });
      await calendars.deleteCalendar(ALICE, "holidays");
      await expect(store.tasks.insertTask(taskNaming(v1))).rejects.toBeInstanceOf(
        CalendarChangedError,
      );
      expect((await store.tasks.listTasks(ALL, { limit: 10 })).items).toEqual([]);
    });

    it("refuses a whole batch when one task's calendar snapshot is stale", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      const plain = buildTask({ title: "no calendar" });
      const current = taskNaming(v1);
      await calendars.putCalendar(ALICE, "holidays", items("2030-12-26"), at(2));
      await expect(store.tasks.insertTasks([plain, current])).rejects.toBeInstanceOf(
        CalendarChangedError,
      );
      expect((await store.tasks.listTasks(ALL, { limit: 10 })).items).toEqual([]);
      const [v2] = await calendars.findCalendars(ALICE, ["holidays"]);
      if (v2 === undefined) throw new Error("calendar gone");
      await store.tasks.insertTasks([plain, taskNaming(v2), taskNaming(v2)]);
      expect((await store.tasks.listTasks(ALL, { limit: 10 })).items).toHaveLength(3);
    });

    it("checks only the snapshots a mutation changes: a stale one blocks a refresh, not a pause", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      const task = taskNaming(v1);
      await store.tasks.insertTask(task);
      const v2 = await calendars.putCalendar(ALICE, "holidays", items("2030-12-26"), at(2));
      await calendars.putCalendar(ALICE, "holidays", items("2030-12-27"), at(3));
      // The task still holds version 1; a pause does not touch the schedule.
      await expect(pause(store, task.id, at(4))).resolves.toEqual([]);
      const refresh = store.tasks.mutateTask(ALL, task.id, (locked) => ({
        task: { ...locked.task, schedule: withCalendar(locked.task.schedule, v2) },
        result: () => null,
      }));
      await expect(refresh).rejects.toBeInstanceOf(CalendarChangedError);
      const [v3] = await calendars.findCalendars(ALICE, ["holidays"]);
      if (v3 === undefined) throw new Error("calendar gone");
      await store.tasks.mutateTask(ALL, task.id, (locked) => ({
        task: { ...locked.task, schedule: withCalendar(locked.task.schedule, v3) },
        result: () => null,
      }));
      const stored = await store.tasks.findTask(ALL, task.id);
      expect(stored?.schedule).toEqual(withCalendar(task.schedule, v3));
    });

    it("refuses an edit that names a calendar changed since it was read", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const task = buildTask({ owner: ALICE });
      await store.tasks.insertTask(task);
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-12-25"), at(1));
      const edited = taskNaming(v1).schedule;
      await calendars.putCalendar(ALICE, "holidays", items("2030-12-26"), at(2));
      await expect(edit(store, ALL, task.id, { schedule: edited }, at(3))).rejects.toBeInstanceOf(
        CalendarChangedError,
      );
    });

    it("records each excluded stretch as one skipped range in the ledger", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      // T0 is Monday 2030-01-07 09:00 UTC; 08:00 daily, Jan 9 and 10 excluded by the calendar.
      const holidays = await calendars.putCalendar(
        ALICE,
        "holidays",
        items({ from: "2030-01-09", to: "2030-01-10" }),
        at(1),
      );
      const task = taskNaming(holidays, { exclude: ["2030-01-12", { calendar: "holidays" }] });
      await store.tasks.insertTask(task);
      const now = (day: number): Instant => at((day - 7) * 24 * HOUR - HOUR + 10_000);
      await admitDue(store, now(8));
      await admitDue(store, now(11));
      await admitDue(store, now(13));
      const decisions = await scheduledDecisions(store, task.id);
      expect(
        decisions.map((r) => [
          new Date(r.scheduledFor).toISOString().slice(5, 10),
          r.status,
          r.reason,
          r.missedCount,
          r.missedUntil === null ? null : new Date(r.missedUntil).toISOString().slice(5, 10),
        ]),
      ).toEqual([
        ["01-08", "queued", null, null, null],
        ["01-09", "skipped", "excluded", 2, "01-10"],
        ["01-11", "queued", null, null, null],
        ["01-12", "skipped", "excluded", 1, "01-12"],
        ["01-13", "queued", null, null, null],
      ]);
    });

    it("reads each task with the items of the version it references, admission included, after the calendar moved on", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      // T0 is Monday 2030-01-07 09:00 UTC; 08:00 daily. Version 1 excludes Jan 9, version 2 Jan 10.
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-09"), at(1));
      const task = taskNaming(v1);
      const other = taskNaming(v1);
      await store.tasks.insertTasks([task, other]);
      const v2 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-10"), at(2));
      const itemsOf = (found: Task | null) =>
        found?.schedule.type === "cron" && found.schedule.exclude[0]?.kind === "calendar"
          ? found.schedule.exclude[0].items.map(calendarItemInput)
          : null;
      expect(itemsOf(await store.tasks.findTask(ALL, task.id))).toEqual(["2030-01-09"]);
      // Both tasks still reference version 1: it stays.
      await calendars.pruneCalendarVersions(ALICE, "holidays");
      expect(itemsOf(await store.tasks.findTask(ALL, other.id))).toEqual(["2030-01-09"]);
      // `other` moves to version 2; `task` keeps version 1, which admission decides against.
      await store.tasks.mutateTask(ALL, other.id, (locked) => ({
        task: { ...locked.task, schedule: withCalendar(locked.task.schedule, v2) },
        result: () => null,
      }));
      await calendars.pruneCalendarVersions(ALICE, "holidays");
      const now = (day: number): Instant => at((day - 7) * 24 * HOUR - HOUR + 10_000);
      for (const day of [8, 9, 10, 11]) await admitDue(store, now(day));
      const days = async (id: Task["id"]) =>
        (await scheduledDecisions(store, id)).map((r) => [
          new Date(r.scheduledFor).toISOString().slice(5, 10),
          r.status === "skipped" ? "skipped" : "queued",
        ]);
      expect(await days(task.id)).toEqual([
        ["01-08", "queued"],
        ["01-09", "skipped"],
        ["01-10", "queued"],
        ["01-11", "queued"],
      ]);
      expect(await days(other.id)).toEqual([
        ["01-08", "queued"],
        ["01-09", "queued"],
        ["01-10", "skipped"],
        ["01-11", "queued"],
      ]);
      const listed = await store.tasks.listTasks(ALL, { limit: 10 });
      expect(listed.items.map((t) => [t.id, itemsOf(t)])).toEqual(
        expect.arrayContaining([
          [task.id, ["2030-01-09"]],
          [other.id, ["2030-01-10"]],
        ]),
      );
    });

    it("removes the versions no task references, and never reuses a version a deleted task references", async () => {
      const store = ctx.store();
      const calendars = calendarsOf(store);
      const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-09"), at(1));
      const task = taskNaming(v1);
      await store.tasks.insertTask(task);
      const v2 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-10"), at(2));
      await store.tasks.mutateTask(ALL, task.id, (locked) => ({
        task: { ...locked.task, schedule: withCalendar(locked.task.schedule, v2) },
        result: () => null,
      }));
      const removed = await calendars.pruneCalendarVersions(ALICE, "holidays");
      // The SQL stores keep each version's items in a row of their own; the memory store's rows share them.
      expect(removed).toBe(store.kind === "memory" ? 0 : 1);
      await remove(store, task.id, at(3));
      await expect(calendars.deleteCalendar(ALICE, "holidays")).resolves.toBe(true);
      const again = await calendars.putCalendar(ALICE, "holidays", items("2030-02-01"), at(4));
      expect(again.version).toBe(3);
      const fresh = taskNaming(again);
      await store.tasks.insertTask(fresh);
      const found = await store.tasks.findTask(ALL, fresh.id);
      expect(found === null ? [] : calendarStamps(found.schedule)).toEqual([
        { name: "holidays", version: 3 },
      ]);
    });
  });
}
