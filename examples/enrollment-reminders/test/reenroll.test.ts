/**
 * The reminder tasks are upserted by key (`enrollment:<id>:<kind>`), so planning an enrollment again,
 * later (a retried request, a restart half-way through enrolling), never creates a second task for a
 * reminder, never re-arms one already sent, and never revives the reminders of a student who dropped.
 */
import { createTestScheduler } from "punctual/testing";
import type { TestScheduler } from "punctual/testing";
import { afterEach, describe, expect, it } from "vitest";
import { EnrollmentRepository } from "../app/enrollment-repository.js";
import { REMINDER_HANDLER } from "../app/reminder-tasks.js";
import { School } from "../app/school.js";
import { sendReminder } from "../app/send-reminder.js";
import { ANA, COURSE, RecordingMailbox } from "./fixtures.js";

let scheduler: TestScheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
});

function school() {
  const enrollments = new EnrollmentRepository(":memory:");
  let now = (): number => 0;
  const mailbox = new RecordingMailbox(() => now(), {});
  const s = createTestScheduler({
    start: "2026-02-27T10:00:00Z",
    handlers: { [REMINDER_HANDLER]: sendReminder({ enrollments, mail: mailbox }) },
  });
  scheduler = s;
  now = () => s.clock.now();
  return { s, mailbox, school: new School(s, enrollments) };
}

describe("enrolling the same enrollment again", () => {
  it("keeps one task per reminder and sends the welcome once", async () => {
    const { s, mailbox, school: app } = school();
    const request = { id: "e-ana", student: ANA, course: COURSE };
    await app.enroll(request, new Date(s.clock.now()));
    await s.advanceTo("2026-02-27T10:05:00Z");
    const before = await app.reminders("e-ana");
    await app.enroll(request, new Date(s.clock.now()));
    await s.advanceTo("2026-02-27T10:30:00Z");
    const after = await app.reminders("e-ana");
    expect(after.map((r) => [r.task.key, r.task.id, r.task.version])).toEqual(
      before.map((r) => [r.task.key, r.task.id, r.task.version]),
    );
    const page = await s.tasks.list({ limit: 200 });
    expect(page.items).toHaveLength(before.length);
    const welcomes = mailbox.deliveries.filter((d) => d.mail.subject.startsWith("Welcome"));
    expect(welcomes).toHaveLength(1);
  });

  it("leaves a dropped enrollment's reminders cancelled", async () => {
    const { s, school: app } = school();
    const request = { id: "e-ana", student: ANA, course: COURSE };
    await app.enroll(request, new Date(s.clock.now()));
    await app.end("e-ana", "dropped");
    await app.enroll(request, new Date(s.clock.now()));
    const states = await app.reminders("e-ana");
    expect(states.length).toBeGreaterThan(0);
    for (const state of states) expect(state.task.status).toBe("cancelled");
  });
});
