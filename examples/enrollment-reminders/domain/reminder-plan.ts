/**
 * The reminder plan of one enrollment: which reminders a student gets and when, in their zone. Pure:
 * `enrolledAt` is given, never read from a clock. The plan knows nothing of punctual; app/reminder-tasks.ts
 * turns it into tasks.
 */
import type { Enrollment } from "./enrollment.js";

export const REMINDER_KINDS = ["welcome", "first_session", "weekly", "exam_eve"] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];

/** When a reminder is due: once at an instant or a local wall time, or weekly on a local wall time. */
export type ReminderTiming =
  | { readonly type: "once"; readonly at: string; readonly timezone: string }
  | {
      readonly type: "weekly";
      /** 1 = Monday. */
      readonly weekday: number;
      readonly hour: number;
      readonly timezone: string;
      /** The weekly reminders stop at the end of this local date. */
      readonly untilDay: string;
    };

export interface Reminder {
  readonly kind: ReminderKind;
  readonly timing: ReminderTiming;
}

/**
 * The lateness rule the school chose: a reminder sent more than 15 minutes after its time is marked
 * late (the mail says it is delayed); one more than 6 hours late is not sent at all (recorded as missed).
 */
export const LATENESS_RULE = { markLateAfter: "PT15M", dropAfter: "PT6H" } as const;

const DAY_MS = 24 * 3600_000;

/** Every reminder of an active enrollment; none for a dropped or finished one. */
export function reminderPlan(enrollment: Enrollment, enrolledAt: Date): Reminder[] {
  if (enrollment.status !== "active") return [];
  const { course, student } = enrollment;
  const timezone = student.timezone;
  // At once: a whole second after enrolling (a once schedule must lie in the future, in whole seconds).
  const now = new Date(Math.ceil(enrolledAt.getTime() / 1000) * 1000 + 1000);
  const plan: Reminder[] = [
    { kind: "welcome", timing: { type: "once", at: now.toISOString(), timezone } },
  ];
  const dayBefore = new Date(Date.parse(course.firstSessionAt) - DAY_MS);
  if (dayBefore > enrolledAt) {
    plan.push({
      kind: "first_session",
      timing: { type: "once", at: dayBefore.toISOString(), timezone },
    });
  }
  // Days compared in UTC: a day's margin either way, so a late enrollment gets no reminder of the past.
  const today = enrolledAt.toISOString().slice(0, 10);
  if (course.lastTeachingDay > today) {
    plan.push({
      kind: "weekly",
      timing: { type: "weekly", weekday: 1, hour: 8, timezone, untilDay: course.lastTeachingDay },
    });
  }
  const eve = previousDay(course.examDay);
  if (eve > today) {
    // 18:00 on the eve of the exam, on the student's wall clock (the scheduler resolves the offset).
    plan.push({ kind: "exam_eve", timing: { type: "once", at: `${eve}T18:00:00`, timezone } });
  }
  return plan;
}

/** The calendar day before `day` (YYYY-MM-DD). */
export function previousDay(day: string): string {
  const date = new Date(`${day}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

/** The text of a reminder; `late` comes from the run, so a delayed reminder never pretends otherwise. */
export function reminderText(
  enrollment: Enrollment,
  kind: ReminderKind,
  late: boolean,
): { subject: string; body: string } {
  const course = enrollment.course.title;
  const subjects: Record<ReminderKind, string> = {
    welcome: `Welcome to ${course}`,
    first_session: `${course} starts tomorrow`,
    weekly: `${course}: this week`,
    exam_eve: `${course}: the exam is tomorrow`,
  };
  const delayed = late ? " (delayed)" : "";
  return {
    subject: `${subjects[kind]}${delayed}`,
    body: late
      ? "This reminder is late: our system could not send it on time."
      : `Reminder for ${enrollment.student.email}.`,
  };
}
