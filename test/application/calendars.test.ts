/**
 * Calendars through the service (issue 22), on the virtual clock: create one, name it in a task, edit it
 * (the task's undecided occurrences follow; one excluded when it came due stays excluded), the refused
 * delete, the ledger's excluded ranges, and a calendar edited while a task naming it is being created.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/domain/errors.js";
import {
  ALICE,
  BOB,
  HOUR,
  T0,
  createTask,
  handlerInput,
  harness,
  history,
  iso,
  reload,
} from "./harness.js";
import type { Harness } from "./harness.js";
import { CalendarService } from "../../src/application/calendars/calendar-service.js";
import { taskId } from "../../src/domain/ids.js";
import type { Store } from "../../src/domain/ports/store.js";
import type { ExclusionInput } from "../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";

const DAY = 24 * HOUR;
/** T0 is Monday 2030-01-07 09:00 UTC; day(n) is 2030-01-n at 08:00 UTC. */
const day = (n: number): Instant => instant(Date.UTC(2030, 0, n, 8));

const daily = (exclude: ExclusionInput[]) =>
  handlerInput("0 8 * * *", {
    schedule: { type: "cron", cron: "0 8 * * *", timezone: "UTC", exclude },
    options: { overlap: "allow_all" },
  });

async function put(h: Harness, name: string, items: unknown[], at = h.clock.now) {
  return h.tasks.calendars.put(ALICE, name, { items }, at);
}

describe("calendars through the service", () => {
  it("creates a calendar, uses it, edits it and refuses to delete it while in use", async () => {
    const h = harness();
    const created = await put(h, "holidays", ["2030-01-09"]);
    expect(created.created).toBe(true);
    expect(created.calendar).toMatchObject({
      name: "holidays",
      version: 1,
      items: ["2030-01-09"],
      tasks_refreshed: 0,
    });

    const task = await createTask(h, daily([{ calendar: "holidays" }]));
    expect(task.next_run_at).toBe(iso(day(8)));
    expect(task.schedule).toMatchObject({ exclude: [{ calendar: "holidays" }] });

    // Jan 8 fires; then Jan 9 is excluded, so the next fire is Jan 10.
    await h.dispatch.admission.admitDue(h.clock.set(instant(day(8) + 5000)), 10);
    expect((await h.tasks.get(ALICE, task.id)).next_run_at).toBe(iso(day(10)));

    const edited = await put(h, "holidays", ["2030-01-10", "2030-01-11"]);
    expect(edited.created).toBe(false);
    expect(edited.calendar).toMatchObject({ version: 2, tasks_refreshed: 1 });
    const after = await h.tasks.get(ALICE, task.id);
    expect([after.next_run_at, after.version]).toEqual([iso(day(9)), task.version]);
    expect(h.signals.wakes).toBeGreaterThan(0);

    await expect(h.tasks.calendars.delete(ALICE, "holidays")).rejects.toMatchObject({
      code: "calendar_in_use",
      taskId: task.id,
    });
    await h.tasks.delete(ALICE, task.id, {}, h.clock.now);
    await h.tasks.calendars.delete(ALICE, "holidays");
    await expect(h.tasks.calendars.get(ALICE, "holidays")).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("records excluded stretches as ranges in the ledger, and an edit keeps what came due excluded", async () => {
    const h = harness();
    await put(h, "holidays", [{ from: "2030-01-09", to: "2030-01-10" }]);
    const task = await createTask(h, daily([{ calendar: "holidays" }]));
    await h.dispatch.admission.admitDue(h.clock.set(instant(day(8) + 5000)), 10);
    // On Jan 10 at 12:00 the calendar is emptied: Jan 9 and 10 were excluded when they came due.
    h.clock.set(instant(day(10) + 4 * HOUR));
    await put(h, "holidays", []);
    expect((await h.tasks.get(ALICE, task.id)).next_run_at).toBe(iso(day(11)));
    await h.dispatch.admission.admitDue(h.clock.set(instant(day(11) + 5000)), 10);
    const ledger = (await history(h, ALICE, task.id)).reverse();
    expect(
      ledger.map((r) => [r.scheduled_for, r.status, r.reason, r.missed_count, r.missed_until]),
    ).toEqual([
      [iso(day(8)), "queued", null, null, null],
      [iso(day(9)), "skipped", "excluded", 2, iso(day(10))],
      [iso(day(11)), "queued", null, null, null],
    ]);
  });

  it("explains an excluded occurrence by its calendar, and previews it as suppressed", async () => {
    const h = harness();
    await put(h, "holidays", ["2030-01-09"]);
    const task = await createTask(h, daily(["2030-01-12", { calendar: "holidays" }]));
    const explanation = await h.tasks.explain(ALICE, task.id, iso(day(9)), h.clock.now);
    expect(explanation.verdict).toBe("excluded");
    expect(explanation.exclusion).toEqual({ item: "2030-01-09", calendar: "holidays" });
    const { occurrences } = await h.tasks.preview(ALICE, task.id, 3, h.clock.now);
    expect(occurrences.map((o) => o.at)).toEqual([iso(day(8)), iso(day(10)), iso(day(11))]);
    expect(occurrences[1]?.suppressed_before).toEqual([
      {
        kind: "excluded",
        at: iso(day(9)),
        wall: "2030-01-09T08:00:00",
        exclusion: { item: "2030-01-09", calendar: "holidays" },
      },
    ]);
  });

  it("keeps owners apart: another owner's calendar cannot be named or read", async () => {
    const h = harness();
    await put(h, "holidays", ["2030-01-09"]);
    await expect(createTask(h, daily([{ calendar: "holidays" }]), BOB)).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(h.tasks.calendars.get(BOB, "holidays")).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await h.tasks.calendars.list(BOB, { limit: 50 })).items).toEqual([]);
  });

  it("reads the calendar again when it changes while a task naming it is created", async () => {
    const h = harness();
    await put(h, "holidays", ["2030-01-08"]);
    const store = h.store;
    const insert = store.tasks.insertTask.bind(store.tasks);
    let edits = 0;
    // Another request edits the calendar between this create's read and its insert, once.
    store.tasks.insertTask = async (task) => {
      if (edits++ === 0) await put(h, "holidays", ["2030-01-09"]);
      return insert(task);
    };
    const task = await createTask(h, daily([{ calendar: "holidays" }]));
    expect(edits).toBe(2);
    expect(task.next_run_at).toBe(iso(day(8)));
    const stored = await h.store.tasks.findTask({ kind: "all" }, taskId(task.id));
    expect(stored?.schedule).toMatchObject({ exclude: [{ name: "holidays", version: 2 }] });
  });

  it("warns of a task a calendar edit holds still, explains why, and lets it fire again", async () => {
    const h = harness();
    await put(h, "holidays", ["2030-01-09"]);
    const task = await createTask(h, daily([{ calendar: "holidays" }]));
    await h.dispatch.admission.admitDue(h.clock.set(instant(day(8) + 5000)), 10);

    // Every day excluded: the task keeps its status, has no next fire, and the put says why.
    h.clock.set(instant(day(8) + 2 * HOUR));
    const held = await put(h, "holidays", [{ days: "* * *" }]);
    expect(held.calendar.tasks_refreshed).toBe(1);
    expect(held.calendar.warnings).toEqual([
      `Task ${task.id} ("Daily report"): It will not fire again while its exclusions stand: every ` +
        "occurrence it has left, from 2030-01-09 08:00:00 +00:00 on, falls on an excluded date " +
        '(the first: the day rule "* * *" of calendar "holidays"); it stays enabled and fires ' +
        "again once a calendar it names, or its schedule, leaves a date free.",
    ]);
    const still = await h.tasks.get(ALICE, task.id);
    expect([still.status, still.next_run_at]).toEqual(["enabled", null]);
    // The same items again warn again: the task is still held.
    expect((await put(h, "holidays", [{ days: "* * *" }])).calendar.warnings).toHaveLength(1);

    const stallSentence =
      "It will not fire again while its exclusions stand: every occurrence it has left, from " +
      '2030-01-09 08:00:00 +00:00 on, falls on an excluded date (the first: the day rule "* * *" of ' +
      'calendar "holidays"); it stays enabled and fires again once a calendar it names, or its ' +
      "schedule, leaves a date free.";
    const now = await h.tasks.explain(ALICE, task.id, iso(h.clock.now), h.clock.now);
    expect(now.message).toMatch(
      /^The occurrence of 2030-01-08 08:00:00 \+00:00 .* is queued as run /,
    );
    expect(now.message.endsWith(`. ${stallSentence}`)).toBe(true);
    const ahead = await h.tasks.explain(ALICE, task.id, iso(day(12)), h.clock.now);
    expect(ahead.verdict).toBe("excluded");
    expect(ahead.message).toMatch(
      /^The occurrence of 2030-01-12 08:00:00 \+00:00 fell on an excluded date \(the day rule "\* \* \*" of calendar "holidays"\) and did not fire: it is recorded \(skipped, reason excluded\) once the task can fire again; nothing is scheduled after it\. It will not fire again while/,
    );

    // Freeing the dates from the 11th on: the stretch held still is recorded, the task fires again.
    h.clock.set(instant(day(10) + 2 * HOUR));
    const freed = await put(h, "holidays", [{ from: "2030-01-09", to: "2030-01-10" }]);
    expect(freed.calendar.warnings).toEqual([]);
    expect((await h.tasks.get(ALICE, task.id)).next_run_at).toBe(iso(day(11)));
    const ledger = (await history(h, ALICE, task.id)).reverse();
    expect(ledger.map((r) => [r.scheduled_for, r.status, r.reason, r.missed_count])).toEqual([
      [iso(day(8)), "queued", null, null],
      [iso(day(9)), "skipped", "excluded", 2],
    ]);
    expect(
      (await h.tasks.explain(ALICE, task.id, iso(h.clock.now), h.clock.now)).message,
    ).not.toContain("will not fire again");
  });

  it("records the old schedule's excluded occurrences already due before a schedule edit", async () => {
    const h = harness();
    const task = await createTask(h, daily(["2030-01-08"]));
    h.clock.set(instant(T0 + DAY + 2 * HOUR));
    await h.tasks.update(
      ALICE,
      task.id,
      { schedule: { type: "cron", cron: "0 9 * * *" } },
      null,
      h.clock.now,
    );
    const ledger = await history(h, ALICE, task.id);
    expect(ledger.map((r) => [r.scheduled_for, r.status, r.reason])).toEqual([
      [iso(day(8)), "skipped", "excluded"],
    ]);
  });

  it("refuses a bad name or item, and the delete of a calendar that does not exist", async () => {
    const h = harness();
    await expect(put(h, ".hidden", ["2030-01-10"])).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ field: "name" }],
    });
    await expect(put(h, "days", ["2030-02-30"])).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ field: "items.0" }],
    });
    await expect(h.tasks.calendars.delete(ALICE, "nowhere")).rejects.toMatchObject({
      code: "not_found",
      resource: "calendar",
    });
  });

  it("refuses an edit that would take a task naming the calendar past 1,000 excluded items, naming it", async () => {
    const h = harness();
    await put(h, "few", ["2031-01-01"]);
    const own = Array.from({ length: 10 }, (_, i) => `2035-01-${String(i + 10)}`);
    const task = await createTask(h, daily([{ calendar: "few" }, ...own]));
    // 995 items are a valid calendar, but with the task's own 10 dates it would exclude 1,005.
    const many = Array.from({ length: 995 }, (_, i) =>
      new Date(Date.UTC(2031, 0, 1) + i * DAY).toISOString().slice(0, 10),
    );
    const refused: unknown = await put(h, "few", many).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "validation_failed", errors: [{ field: "items" }] });
    expect(String((refused as { errors: { message: string }[] }).errors[0]?.message)).toContain(
      task.id,
    );
    expect((await h.tasks.calendars.get(ALICE, "few")).items).toEqual(["2031-01-01"]);
  });

  it("says a store without calendars keeps none", async () => {
    // A store as the port allows it: one with no calendar repository (only what a delete reads of it).
    const service = new CalendarService({
      store: { kind: "memory", calendars: undefined } as unknown as Store,
      wake: () => undefined,
    });
    await expect(service.delete(ALICE, "any")).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ field: "calendar" }],
    });
  });

  it("passes over a task deleted while an edit checks and refreshes the tasks naming the calendar", async () => {
    const h = harness();
    await put(h, "days", ["2031-01-01"]);
    const task = await createTask(h, daily([{ calendar: "days" }]));
    const tasks = h.store.tasks;
    const findTask = tasks.findTask.bind(tasks);
    let armed = true;
    // The delete lands right before the edit reads the task it found naming the calendar.
    tasks.findTask = async (...args) => {
      if (armed && args[1] === task.id) {
        armed = false;
        await h.tasks.delete(ALICE, task.id, { force: true }, h.clock.now);
      }
      return findTask(...args);
    };
    const edited = await put(h, "days", ["2031-01-01", "2031-01-02"]);
    expect(armed).toBe(false);
    expect(edited.calendar.items).toEqual(["2031-01-01", "2031-01-02"]);
  });

  it("passes over a task deleted between the edit's list of tasks to refresh and its row lock", async () => {
    const h = harness();
    await put(h, "days", ["2031-01-01"]);
    const gone = await createTask(h, daily([{ calendar: "days" }]));
    const kept = await createTask(h, daily([{ calendar: "days" }]));
    const tasks = h.store.tasks;
    const mutateTask = tasks.mutateTask.bind(tasks);
    let armed = true;
    tasks.mutateTask = (async (...args: Parameters<typeof mutateTask>) => {
      if (armed && args[1] === gone.id) {
        armed = false;
        await h.tasks.delete(ALICE, gone.id, { force: true }, h.clock.now);
      }
      return mutateTask(...args);
    }) as typeof tasks.mutateTask;
    expect(kept.next_run_at).toBe(iso(day(8)));
    await put(h, "days", ["2031-01-01", "2030-01-08"]);
    expect(armed).toBe(false);
    // The other task naming it was still brought to the new version: its 8 January is excluded.
    expect((await reload(h, kept.id)).next_run_at).toBe(iso(day(9)));
  });
});
