/**
 * A semester replayed on the virtual clock (Europe/Berlin, across the spring DST change), each test
 * named after the truth it proves: every reminder at the right local time, none twice, none after a
 * drop, and the lateness rule applied after a 3-hour and an 8-hour outage.
 */
import { createTestScheduler } from "punctual/testing";
import type { TestScheduler } from "punctual/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { EnrollmentRepository } from "../app/enrollment-repository.js";
import { REMINDER_HANDLER } from "../app/reminder-tasks.js";
import { School } from "../app/school.js";
import { sendReminder } from "../app/send-reminder.js";
import { ANA, BEN, COURSE, localTime, RecordingMailbox } from "./fixtures.js";

const HOUR = 3600_000;
let scheduler: TestScheduler;
let mailbox: RecordingMailbox;
let school: School;

/** Friday 27 February 2026, 11:00 in Berlin: Ana and Ben enroll; the semester runs to the exam. */
beforeAll(async () => {
  const enrollments = new EnrollmentRepository(":memory:");
  let now = (): number => 0;
  mailbox = new RecordingMailbox(() => now());
  scheduler = createTestScheduler({
    start: "2026-02-27T10:00:00Z",
    handlers: { [REMINDER_HANDLER]: sendReminder({ enrollments, mail: mailbox }) },
  });
  now = () => scheduler.clock.now();
  school = new School(scheduler, enrollments);
  const enrolledAt = new Date(scheduler.clock.now());
  await school.enroll({ id: "e-ana", student: ANA, course: COURSE }, enrolledAt);
  await school.enroll({ id: "e-ben", student: BEN, course: COURSE }, enrolledAt);

  await scheduler.advanceTo("2026-03-18T12:00:00Z");
  await school.end("e-ben", "dropped");
  // Monday 30 March (summer time): down from 07:00 to 10:00 local, over the 08:00 reminder.
  await scheduler.advanceTo("2026-03-30T05:00:00Z");
  await scheduler.clock.advance(3 * HOUR);
  // Monday 13 April: down from 07:00 to 15:00 local.
  await scheduler.advanceTo("2026-04-13T05:00:00Z");
  await scheduler.clock.advance(8 * HOUR);
  // Past the exam eve (16:00 UTC); a replay with nothing left to wake for steps a second at a time.
  await scheduler.advanceTo("2026-04-27T16:01:00Z");
}, 60_000);

const berlin = (at: number): string => localTime(at, "Europe/Berlin");

describe("a semester of enrollment reminders", () => {
  it("sends every reminder at the right local time, across the DST change", () => {
    const ana = mailbox.to(ANA.email).map((d) => [berlin(d.at), d.mail.subject]);
    expect(ana).toEqual([
      ["2026-02-27 11:00", "Welcome to Algebra 101"],
      ["2026-03-02 08:00", "Algebra 101: this week"],
      ["2026-03-02 09:00", "Algebra 101 starts tomorrow"],
      ["2026-03-09 08:00", "Algebra 101: this week"],
      ["2026-03-16 08:00", "Algebra 101: this week"],
      ["2026-03-23 08:00", "Algebra 101: this week"],
      // 10:00, when the 3-hour outage ends: two hours late, and it says so.
      ["2026-03-30 10:00", "Algebra 101: this week (delayed)"],
      ["2026-04-06 08:00", "Algebra 101: this week"],
      // 13 April: not sent, eight hours late (the ledger records it missed, next test).
      ["2026-04-20 08:00", "Algebra 101: this week"],
      ["2026-04-27 18:00", "Algebra 101: the exam is tomorrow"],
    ]);
  });

  it("never sends a reminder twice: one delivery per idempotency key, one key per reminder", () => {
    const keys = mailbox.deliveries.map((d) => d.mail.idempotencyKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(mailbox.attempts).toHaveLength(mailbox.deliveries.length);
  });

  it("sends nothing after a drop, and the dropped reminders are cancelled, not left to fire", async () => {
    const ben = mailbox.to(BEN.email).map((d) => berlin(d.at));
    expect(ben).toEqual([
      "2026-02-27 11:00",
      "2026-03-02 08:00",
      "2026-03-02 09:00",
      "2026-03-09 08:00",
      "2026-03-16 08:00",
    ]);
    const reminders = await school.reminders("e-ben");
    const byKind = Object.fromEntries(
      reminders.map((r): [string, string] => [r.task.key ?? "", r.task.status]),
    );
    expect(byKind).toEqual({
      "enrollment:e-ben:welcome": "completed",
      "enrollment:e-ben:first_session": "completed",
      "enrollment:e-ben:weekly": "cancelled",
      "enrollment:e-ben:exam_eve": "cancelled",
    });
  });

  it("applies the lateness rule: after a 3-hour outage it is sent and marked late; after an 8-hour one it is recorded missed", async () => {
    const weekly = (await school.reminders("e-ana")).find(
      (r) => r.task.key === "enrollment:e-ana:weekly",
    );
    const runs = weekly?.runs ?? [];
    const onMarch30 = runs.find((run) => run.scheduled_for === "2026-03-30T06:00:00Z");
    expect(onMarch30).toMatchObject({ status: "succeeded", late: true, lateness_ms: 2 * HOUR });
    const onApril13 = runs.find((run) => run.scheduled_for === "2026-04-13T06:00:00Z");
    expect(onApril13).toMatchObject({ status: "missed", reason: "window" });
    expect(runs.filter((run) => run.status === "succeeded" && !run.late)).toHaveLength(6);
    expect(weekly?.task.status).toBe("completed");
  });
});
