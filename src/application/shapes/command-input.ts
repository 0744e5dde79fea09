/**
 * The input shapes of the task commands besides create and edit (pause, resume, backfill) and of the
 * list filters, shared by the HTTP API and `punctual/client`.
 */
import * as z from "zod";
import { CATCH_UP_POLICIES } from "../../domain/options.js";
import { RUN_STATUSES, RUN_TRIGGERS } from "../../domain/run.js";
import { TASK_STATUSES } from "../../domain/task.js";
import { TARGET_KINDS } from "../../domain/target.js";
import { instantSchema } from "./input-primitives.js";

/** The options of pausing a task. */
export const pauseInputSchema = z.strictObject({
  cancel_running: z
    .boolean()
    .optional()
    .meta({ description: "also cancel a launching or running run (default false)" }),
});
export type PauseInput = z.input<typeof pauseInputSchema>;

/** The options of resuming a task: what happens to the occurrences inside the pause. */
export const resumeInputSchema = z.strictObject({
  catch_up: z.enum(CATCH_UP_POLICIES).optional().meta({ description: "default none" }),
});
export type ResumeInput = z.input<typeof resumeInputSchema>;

/** The nominal times `[from, to)` to replay as backfill runs. */
export const backfillInputSchema = z.strictObject({ from: instantSchema, to: instantSchema });
export type BackfillInput = z.input<typeof backfillInputSchema>;

/** A signing-secret rotation (docs/security.md#rotating-a-tasks-signing-secret). */
export const rotateSecretInputSchema = z.strictObject({
  grace: z.string().optional().meta({
    description:
      "how long the replaced secret still signs and opens callbacks: a duration (ISO-8601 or short, such as 12h) up to P7D (default PT24H)",
  }),
});
export type RotateSecretInput = z.input<typeof rotateSecretInputSchema>;

/** The filters of a task list (the HTTP API reads them from its query string). */
export const taskListFiltersSchema = z.strictObject({
  status: z.enum(TASK_STATUSES).optional(),
  target_kind: z.enum(TARGET_KINDS).optional(),
  thread_id: z.string().min(1).max(128).optional(),
  key: z.string().min(1).max(200).optional().meta({ description: "only the task with this key" }),
  group: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "only the tasks of this declared-schedules group" }),
  search: z.string().min(1).max(200).optional().meta({
    description:
      "only the tasks whose title contains this text (ignoring case) or whose key is this text",
  }),
});
export type TaskListFilters = z.input<typeof taskListFiltersSchema>;

/** The filters of a task's run list. */
export const runListFiltersSchema = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  trigger: z.enum(RUN_TRIGGERS).optional(),
});
export type RunListFilters = z.input<typeof runListFiltersSchema>;
