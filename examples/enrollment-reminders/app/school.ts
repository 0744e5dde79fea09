/** The school's use cases: enroll, drop, finish, and what reminders an enrollment has had. */
import type { RunView, Scheduler, TaskView } from "punctual";
import type { Course, Enrollment, EnrollmentStatus, Student } from "../domain/enrollment.js";
import type { EnrollmentRepository } from "./enrollment-repository.js";
import { ReminderTasks } from "./reminder-tasks.js";
import type { ReminderTaskOptions } from "./reminder-tasks.js";

export interface ReminderState {
  readonly task: TaskView;
  /** Oldest first. */
  readonly runs: readonly RunView[];
}

export class School {
  readonly #scheduler: Scheduler;
  readonly #enrollments: EnrollmentRepository;
  readonly #reminders: ReminderTasks;

  constructor(
    scheduler: Scheduler,
    enrollments: EnrollmentRepository,
    options: ReminderTaskOptions = {},
  ) {
    this.#scheduler = scheduler;
    this.#enrollments = enrollments;
    this.#reminders = new ReminderTasks(scheduler, options);
  }

  /**
   * Enrolls the student (a second call with the same id changes nothing) and plans the reminders from
   * the first call's instant, so a repeated or retried call upserts the same definitions.
   */
  async enroll(
    request: { readonly id: string; readonly student: Student; readonly course: Course },
    enrolledAt: Date,
  ): Promise<Enrollment> {
    this.#enrollments.add({ ...request, status: "active" }, enrolledAt);
    const enrollment = this.#enrollments.find(request.id);
    const firstEnrolledAt = this.#enrollments.enrolledAt(request.id);
    if (enrollment === undefined || firstEnrolledAt === undefined) {
      throw new Error(`enrollment ${request.id} vanished`);
    }
    if (enrollment.status === "active") await this.#reminders.schedule(enrollment, firstEnrolledAt);
    return enrollment;
  }

  /** Ends the enrollment: recorded first, so a reminder already under way finds it ended and sends nothing. */
  async end(
    id: string,
    status: Exclude<EnrollmentStatus, "active">,
  ): Promise<Enrollment | undefined> {
    const enrollment = this.#enrollments.setStatus(id, status);
    if (enrollment !== undefined) await this.#reminders.cancel(id);
    return enrollment;
  }

  find(id: string): Enrollment | undefined {
    return this.#enrollments.find(id);
  }

  list(): Enrollment[] {
    return this.#enrollments.list();
  }

  async reminders(id: string): Promise<ReminderState[]> {
    const states: ReminderState[] = [];
    for (const task of await this.#reminders.tasksOf(id)) {
      const page = await this.#scheduler.tasks.runs(task.id, { limit: 200 });
      states.push({ task, runs: [...page.items].reverse() });
    }
    return states;
  }
}
