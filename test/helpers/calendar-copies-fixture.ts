/**
 * The database the code before calendar references left (PostgreSQL migration 27, SQLite migration 18):
 * a task holding a copy of version 1 of its calendar while the calendar has moved on to version 2, and a
 * task holding a copy of version 2. Written with today's store, then rewritten to the old shape by each
 * store's test: each task's schedule holds its version's items as `itemsJson`, there is no
 * `calendar_versions` table and no holiday columns.
 */
import type { Calendar } from "../../src/domain/calendar.js";
import type { Store } from "../../src/domain/ports/store.js";
import { calendarItemsText } from "../../src/domain/schedule-codec.js";
import { parseSchedule } from "../../src/domain/schedule/parse-schedule.js";
import { parseCalendarItems } from "../../src/domain/schedule/schedule-spec.js";
import type { Task } from "../../src/domain/task.js";
import { ALICE, T0, at, buildTask } from "../contract/fixtures.js";

function calendarTask(calendar: Calendar): Task {
  const task = buildTask({ title: `holds version ${String(calendar.version)}` });
  const schedule = parseSchedule(
    { type: "cron", cron: "0 8 * * *", timezone: "UTC", exclude: [{ calendar: calendar.name }] },
    { referenceAt: T0, calendars: new Map([[calendar.name, calendar]]) },
  );
  return { ...task, owner: calendar.owner, schedule };
}

export interface CalendarCopies {
  readonly old: Task;
  readonly current: Task;
  /** Each task's id and the `itemsJson` its schedule held. */
  readonly copies: readonly { readonly id: string; readonly itemsJson: string }[];
}

export async function writeCalendarCopies(store: Store): Promise<CalendarCopies> {
  const calendars = store.calendars;
  if (calendars === undefined) throw new Error("no calendars");
  const items = (date: string) => parseCalendarItems([date], "items", 0).items;
  const v1 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-09"), at(1));
  const old = calendarTask(v1);
  await store.tasks.insertTask(old);
  const v2 = await calendars.putCalendar(ALICE, "holidays", items("2030-01-10"), at(2));
  const current = calendarTask(v2);
  await store.tasks.insertTask(current);
  return {
    old,
    current,
    copies: [
      { id: old.id, itemsJson: calendarItemsText(v1.items) },
      { id: current.id, itemsJson: calendarItemsText(v2.items) },
    ],
  };
}
