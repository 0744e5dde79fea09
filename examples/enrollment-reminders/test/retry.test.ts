/**
 * Retries against a failing mail provider, on the virtual clock, each test named after the truth it
 * proves: a retry is a new attempt of the same reminder with the same idempotency key, so it never
 * creates an invisible duplicate send; a reminder that cannot be sent ends visibly failed.
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

async function welcomeWith(trouble: { failures?: number; lostAnswers?: number }) {
  const enrollments = new EnrollmentRepository(":memory:");
  let now = (): number => 0;
  const mailbox = new RecordingMailbox(() => now(), trouble);
  const s = createTestScheduler({
    start: "2026-02-27T10:00:00Z",
    handlers: { [REMINDER_HANDLER]: sendReminder({ enrollments, mail: mailbox }) },
  });
  scheduler = s;
  now = () => s.clock.now();
  const school = new School(s, enrollments);
  await school.enroll({ id: "e-ana", student: ANA, course: COURSE }, new Date(s.clock.now()));
  // The welcome and its retries (one minute, then two) happen within the first quarter hour.
  await s.advanceTo("2026-02-27T10:15:00Z");
  const welcome = (await school.reminders("e-ana")).find(
    (r) => r.task.key === "enrollment:e-ana:welcome",
  );
  return { mailbox, runs: welcome?.runs ?? [] };
}

describe("reminders and a failing mail provider", () => {
  it("retries a refused send with the same idempotency key, and delivers once", async () => {
    const { mailbox, runs } = await welcomeWith({ failures: 2 });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "succeeded", attempt: 3, failures: 2 });
    expect(mailbox.attempts.map((mail) => mail.idempotencyKey)).toEqual(
      Array(3).fill(runs[0]?.idempotency_key),
    );
    expect(mailbox.deliveries).toHaveLength(1);
  });

  it("sends once when the provider delivered but its answer was lost: the retry is deduplicated", async () => {
    const { mailbox, runs } = await welcomeWith({ lostAnswers: 1 });
    expect(runs[0]).toMatchObject({
      status: "succeeded",
      attempt: 2,
      result: { sent: false, duplicate: true },
    });
    expect(mailbox.attempts).toHaveLength(2);
    expect(mailbox.deliveries).toHaveLength(1);
  });

  it("ends visibly failed after three refused attempts, with nothing delivered", async () => {
    const { mailbox, runs } = await welcomeWith({ failures: 10 });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", attempt: 3, failures: 3 });
    expect(runs[0]?.error).toContain("503");
    expect(mailbox.deliveries).toHaveLength(0);
  });
});
