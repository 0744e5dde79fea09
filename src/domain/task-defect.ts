/**
 * A stored task whose fields no longer parse (docs/operations.md#a-task-that-does-not-parse): which
 * fields, why, and since when the coordinator has kept it out of the due set. A defective task is read,
 * listed, repaired by an edit that gives each broken field anew, and deleted; nothing else runs on it.
 */
import { TaskDefectiveError } from "./errors.js";
import type { FieldError } from "./errors.js";
import type { Instant } from "./time.js";

/** The stored fields of a task that can fail to parse, as the API names them. */
export const TASK_DEFECT_FIELDS = ["schedule", "target", "context", "options", "metadata"] as const;
export type TaskDefectField = (typeof TASK_DEFECT_FIELDS)[number];

export interface TaskDefectItem {
  readonly field: TaskDefectField;
  /** What does not parse, e.g. `rules.0.hours: expected array`. */
  readonly message: string;
}

export interface TaskDefect {
  /** At least one; the task's value of each such field is a stand-in, never used to launch. */
  readonly fields: readonly TaskDefectItem[];
  /** When admission found it and took it out of the due set; null until then. */
  readonly detectedAt: Instant | null;
}

/** Whether `field` of the task is broken. */
export function isDefectiveField(defect: TaskDefect | null, field: TaskDefectField): boolean {
  return defect !== null && defect.fields.some((item) => item.field === field);
}

/**
 * Refuses `command` on a task whose stored fields do not parse: its stand-ins must never be launched,
 * scheduled or written back as if they were the owner's definition.
 * @throws task_defective
 */
export function refuseDefective(
  task: { readonly defect: TaskDefect | null },
  command: string,
): void {
  if (task.defect === null) return;
  throw new TaskDefectiveError(
    task.defect.fields.map((item) => item.field),
    command,
  );
}

/**
 * The fields of a defective task an edit leaves out: each must be given anew, since the stored value
 * cannot be kept. Empty for a sound task.
 */
export function missingRepairs(
  defect: TaskDefect | null,
  given: ReadonlySet<string>,
): FieldError[] {
  if (defect === null) return [];
  return defect.fields
    .filter((item) => !given.has(item.field))
    .map((item) => ({
      field: item.field,
      message: `the stored value does not parse (${item.message}): give it anew to repair the task`,
    }));
}
