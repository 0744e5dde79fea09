/** What the example's tests share: a course over the spring 2026 DST change, students, a recording mailbox. */
import type { Course, Student } from "../domain/enrollment.js";
import type { Mail, MailPort } from "../app/mail-port.js";

/** Berlin moves from UTC+1 to UTC+2 on Sunday 29 March 2026. */
export const COURSE: Course = {
  id: "algebra-101",
  title: "Algebra 101",
  firstSessionAt: "2026-03-03T09:00:00+01:00",
  lastTeachingDay: "2026-04-24",
  examDay: "2026-04-28",
};

export const ANA: Student = { id: "ana", email: "ana@example.edu", timezone: "Europe/Berlin" };
export const BEN: Student = { id: "ben", email: "ben@example.edu", timezone: "Europe/Berlin" };

export interface Delivery {
  readonly mail: Mail;
  readonly at: number;
}

/**
 * A provider that dedupes by idempotency key. It can fail the first `failures` sends before delivering
 * (503), or deliver and then lose its answer for the first `lostAnswers` (a timeout after accepting).
 */
export class RecordingMailbox implements MailPort {
  readonly deliveries: Delivery[] = [];
  readonly attempts: Mail[] = [];
  readonly #keys = new Set<string>();
  #failures: number;
  #lostAnswers: number;

  constructor(
    readonly now: () => number,
    trouble: { readonly failures?: number; readonly lostAnswers?: number } = {},
  ) {
    this.#failures = trouble.failures ?? 0;
    this.#lostAnswers = trouble.lostAnswers ?? 0;
  }

  send(mail: Mail): Promise<{ delivered: boolean }> {
    this.attempts.push(mail);
    if (this.#failures > 0) {
      this.#failures--;
      return Promise.reject(new Error("the mail provider answered 503"));
    }
    const delivered = !this.#keys.has(mail.idempotencyKey);
    if (delivered) {
      this.#keys.add(mail.idempotencyKey);
      this.deliveries.push({ mail, at: this.now() });
    }
    if (this.#lostAnswers > 0) {
      this.#lostAnswers--;
      return Promise.reject(new Error("the mail provider did not answer in time"));
    }
    return Promise.resolve({ delivered });
  }

  to(email: string): Delivery[] {
    return this.deliveries.filter((delivery) => delivery.mail.to === email);
  }
}

/** `YYYY-MM-DD HH:mm` on the wall clock of `timezone`. */
export function localTime(at: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(new Date(at));
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}`;
}
