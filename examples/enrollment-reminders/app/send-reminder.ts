/**
 * The reminder handler: reads the enrollment at send time (a student who dropped gets nothing, even
 * from a run already under way), words the mail with the run's `late` flag, and sends it through the
 * mail port with the run's idempotency key, so a second attempt of the same reminder is deduplicated
 * by the provider instead of reaching the student twice.
 */
import type { Handler, RunView } from "punctual";
import { wantsReminders } from "../domain/enrollment.js";
import { reminderText } from "../domain/reminder-plan.js";
import type { EnrollmentRepository } from "./enrollment-repository.js";
import type { MailPort } from "./mail-port.js";
import type { ReminderInput } from "./reminder-tasks.js";

export interface SendReminderDeps {
  readonly enrollments: EnrollmentRepository;
  readonly mail: MailPort;
  /** Called after the mail port answered, before the run's verdict is returned (the crash test's hook). */
  readonly afterSend?: (run: RunView) => Promise<void>;
}

export function sendReminder(deps: SendReminderDeps): Handler {
  return async ({ run, input }) => {
    const { enrollment_id, kind } = input as unknown as ReminderInput;
    const enrollment = deps.enrollments.find(enrollment_id);
    if (enrollment === undefined || !wantsReminders(enrollment)) {
      return { sent: false, reason: enrollment === undefined ? "unknown" : enrollment.status };
    }
    const text = reminderText(enrollment, kind, run.late);
    const { delivered } = await deps.mail.send({
      to: enrollment.student.email,
      ...text,
      idempotencyKey: run.idempotency_key,
    });
    await deps.afterSend?.(run);
    return { sent: delivered, duplicate: !delivered };
  };
}
