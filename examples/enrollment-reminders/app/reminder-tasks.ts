/**
 * The one place that turns an enrollment's reminder plan into punctual tasks: one task per enrollment
 * and reminder kind, found again by its reminder key (`enrollment:<id>:<kind>`, kept in the task's
 * metadata). When punctual's task keys are available, `schedule` becomes one `tasks.upsert` per
 * reminder with that key, and `#index` goes away.
 */
import type { Scheduler, TaskCreateInput, TaskView } from "punctual";
import type { Enrollment } from "../domain/enrollment.js";
import { LATENESS_RULE, reminderPlan } from "../domain/reminder-plan.js";
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

function scheduleOf(timing: ReminderTiming): TaskCreateInput["schedule"] {
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

/** The punctual task of one reminder of one enrollment. */
export function reminderTask(
  enrollment: Enrollment,
  reminder: Reminder,
  options: ReminderTaskOptions = {},
): TaskCreateInput {
  const input: ReminderInput = { enrollment_id: enrollment.id, kind: reminder.kind };
  return {
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
    metadata: {
      reminder_key: reminderKey(enrollment.id, reminder.kind),
      enrollment_id: enrollment.id,
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

  /** Creates the enrollment's reminder tasks that do not exist yet; returns them all. */
  async schedule(enrollment: Enrollment, enrolledAt: Date): Promise<TaskView[]> {
    const existing = await this.#index();
    const tasks: TaskView[] = [];
    for (const reminder of reminderPlan(enrollment, enrolledAt)) {
      const known = existing.get(reminderKey(enrollment.id, reminder.kind));
      tasks.push(
        known ??
          (await this.#scheduler.tasks.create(reminderTask(enrollment, reminder, this.#options)))
            .task,
      );
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

  async tasksOf(enrollmentId: string): Promise<TaskView[]> {
    const all = await this.#index();
    return [...all.values()].filter((task) => task.metadata["enrollment_id"] === enrollmentId);
  }

  /** Every reminder task by its reminder key. */
  async #index(): Promise<Map<string, TaskView>> {
    const byKey = new Map<string, TaskView>();
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<Scheduler["tasks"]["list"]>> =
        await this.#scheduler.tasks.list(cursor === null ? { limit: 200 } : { limit: 200, cursor });
      for (const task of page.items) {
        const key = task.metadata["reminder_key"];
        if (key !== undefined) byKey.set(key, task);
      }
      cursor = page.next_cursor;
    } while (cursor !== null);
    return byKey;
  }
}
