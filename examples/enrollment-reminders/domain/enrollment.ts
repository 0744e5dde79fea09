/**
 * The school's own words: courses, students and enrollments. Plain data, no scheduler, no clock: an
 * enrollment says who takes which course and whether they still do.
 */

export interface Course {
  readonly id: string;
  readonly title: string;
  /** The first session, an instant (RFC 3339). */
  readonly firstSessionAt: string;
  /** The last day of teaching, a calendar date (YYYY-MM-DD) in the student's zone. */
  readonly lastTeachingDay: string;
  /** The exam day (YYYY-MM-DD), in the student's zone. */
  readonly examDay: string;
}

export interface Student {
  readonly id: string;
  readonly email: string;
  /** IANA zone the student's reminders are timed in. */
  readonly timezone: string;
}

export const ENROLLMENT_STATUSES = ["active", "dropped", "finished"] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export interface Enrollment {
  readonly id: string;
  readonly student: Student;
  readonly course: Course;
  readonly status: EnrollmentStatus;
}

/** Only an active enrollment gets reminders: one who dropped or finished gets none after that. */
export function wantsReminders(enrollment: Enrollment): boolean {
  return enrollment.status === "active";
}
