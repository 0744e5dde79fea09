/**
 * The one place that turns an enrollment's reminder plan into punctual tasks: one task per enrollment
 * and reminder kind, under the task key `enrollment:<id>:<kind>`. Scheduling is one `tasks.upsert` per
 * reminder, so planning an enrollment again (a retried request, a restart half-way) creates only what
 * is missing and never a second task for a reminder.
 */
import { isPunctualError } from "punctual";
import type { Scheduler, TaskUpsertInput, TaskView } from "punctual";
import type { Enrollment } from "../domain/enrollment.js";
import { LATENESS_RULE, REMINDER_KINDS, reminderPlan } from "../domain/reminder-plan.js";
import type { Reminder, ReminderKind, ReminderTiming } from "../domain/reminder-plan.js";

/** The handler name the scheduler is built with (app/send-reminder.ts). */
export const REMINDER_HANDLER = "sendReminder";

export interface ReminderInput {
  readonly enrollment_id: string;
  readonly kind: ReminderKind;
}

export function reminderKey(enrollmentId: string, kind: ReminderKind): string {
  return `enrollment:${enrollmentId}:${kind}`;
}

function scheduleOf(timing: ReminderTiming): TaskUpsertInput["schedule"] {
  switch (timing.type) {
    case "once":
      return { type: "once", run_at: timing.at, timezone: timing.timezone };
    case "weekly":
      return {
        type: "cron",
        cron: `0 ${timing.hour} * * ${timing.weekday}`,
        timezone: timing.timezone,
        // 08:00 on a local Monday is within a day of 08:00 UTC in every zone, and the next Monday a
        // week later, so the end of the last teaching day in UTC keeps exactly the Mondays up to it.
        end_at: `${timing.untilDay}T23:59:59Z`,
      };
  }
}

export interface ReminderTaskOptions {
  /** The first retry's delay (ISO-8601 duration). @default "PT1M" */
  readonly retryInitial?: string;
}

/** The punctual task of one reminder of one enrollment, under its reminder key. */
export function reminderTask(
  enrollment: Enrollment,
  reminder: Reminder,
  options: ReminderTaskOptions = {},
): TaskUpsertInput {
  const input: ReminderInput = { enrollment_id: enrollment.id, kind: reminder.kind };
  return {
    key: reminderKey(enrollment.id, reminder.kind),
    title: `${reminder.kind} reminder: ${enrollment.student.email}, ${enrollment.course.title}`,
    schedule: scheduleOf(reminder.timing),
    target: { kind: "handler", name: REMINDER_HANDLER, input: { ...input } },
    options: {
      late_after: LATENESS_RULE.markLateAfter,
      // Past six hours a reminder is not sent: the run is recorded missed (reason window), not hidden.
      catch_up: { window: LATENESS_RULE.dropAfter, policy: "latest" },
      // A failing mail provider is tried three times, a minute apart and more, with the same key.
      retry: { max_attempts: 3, initial: options.retryInitial ?? "PT1M", max_delay: "PT10M" },
    },
  };
}

export class ReminderTasks {
  readonly #scheduler: Scheduler;
  readonly #options: ReminderTaskOptions;

  constructor(scheduler: Scheduler, options: ReminderTaskOptions = {}) {
    this.#scheduler = scheduler;
    this.#options = options;
  }

  /**
   * Brings the enrollment's reminder tasks to its plan: the missing ones are created, the others left
   * as they are (the same plan is the same definition: the upsert changes nothing, and never `status`,
   * so a reminder already sent or cancelled stays so). Returns them all.
   */
  async schedule(enrollment: Enrollment, enrolledAt: Date): Promise<TaskView[]> {
    const tasks: TaskView[] = [];
    for (const reminder of reminderPlan(enrollment, enrolledAt)) {
      const definition = reminderTask(enrollment, reminder, this.#options);
      tasks.push((await this.#scheduler.tasks.upsert(definition)).task);
    }
    return tasks;
  }

  /** Cancels every reminder task of the enrollment still able to fire (queued runs are cancelled too). */
  async cancel(enrollmentId: string): Promise<void> {
    for (const task of await this.tasksOf(enrollmentId)) {
      if (task.status === "enabled" || task.status === "paused") {
        await this.#scheduler.tasks.cancel(task.id);
      }
    }
  }

  /** The enrollment's reminder tasks, by their keys, in the plan's order. */
  async tasksOf(enrollmentId: string): Promise<TaskView[]> {
    const tasks: TaskView[] = [];
    for (const kind of REMINDER_KINDS) {
      try {
        tasks.push(await this.#scheduler.tasks.getByKey(reminderKey(enrollmentId, kind)));
      } catch (error) {
        // A plan without that kind (no weekly reminder for a course already over) has no such task.
        if (!isPunctualError(error) || error.code !== "not_found") throw error;
      }
    }
    return tasks;
  }
}
