/**
 * Upsert by key (docs/semantics.md#upsert): which user-owned fields a whole definition changes on a
 * task, compared in their public (normalised) shapes, and the edit that brings the task to it. The edit
 * is the domain's `editTask` on exactly the changed fields, so upsert never touches `status`, re-arms a
 * terminal task only as an edit would, and a schedule change keeps what is already decided.
 */
import { settleExcluded } from "../../domain/calendar-commands.js";
import type { NewRun } from "../../domain/new-run.js";
import type { SchedulePolicy } from "../../domain/options.js";
import { scheduleToInput } from "../../domain/schedule/schedule-spec.js";
import { editTask } from "../../domain/task-fields.js";
import type { Task, TaskUserFields } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import { contextView, optionsView, targetView } from "../shapes/view-mappers.js";

/** The fields an upsert compares, in the order `changed` lists them. */
export const UPSERT_FIELDS = [
  "title",
  "description",
  "schedule",
  "target",
  "context",
  "options",
  "metadata",
  "group",
] as const;
export type UpsertField = (typeof UPSERT_FIELDS)[number];

/** JSON with object keys sorted, so that two equal values compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === "object" && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** Each compared field in its public shape: what a user would read back. */
function publicFields(fields: TaskUserFields, group: string | null): Record<UpsertField, string> {
  return {
    title: canonical(fields.title.trim()),
    description: canonical(fields.description),
    // An interval without start_at keeps its anchor (the creation instant): the public shape has none.
    schedule: canonical(scheduleToInput(fields.schedule)),
    target: canonical(targetView(fields.target)),
    context: canonical(contextView(fields.context)),
    options: canonical(optionsView(fields.options)),
    metadata: canonical(fields.metadata),
    group: canonical(group),
  };
}

/** The fields of `task` that `fields` (and `group`) would change, in `UPSERT_FIELDS` order. */
export function changedFields(
  task: Task,
  fields: TaskUserFields,
  group: string | null,
): UpsertField[] {
  const before = publicFields(task, task.group);
  const after = publicFields(fields, group);
  // A stored field that does not parse holds a stand-in: the definition always replaces it.
  const broken = new Set<string>(task.defect?.fields.map((item) => item.field) ?? []);
  return UPSERT_FIELDS.filter((field) => broken.has(field) || before[field] !== after[field]);
}

/** What an upsert writes for a task found by its key: nothing when no field changed. */
export interface UpsertEdit {
  readonly changed: readonly UpsertField[];
  /** The edited task, or null when nothing changed (no new `version`). */
  readonly task: Task | null;
  /** The excluded occurrences of the old schedule already due, recorded before a schedule change. */
  readonly newRuns: readonly NewRun[];
}

/** Brings `task` to the definition `fields` (PUT semantics), as an edit of the changed fields only. */
export function upsertEdit(
  task: Task,
  fields: TaskUserFields,
  group: string | null,
  ctx: { readonly now: Instant; readonly policy: SchedulePolicy },
): UpsertEdit {
  const changed = changedFields(task, fields, group);
  if (changed.length === 0) return { changed, task: null, newRuns: [] };
  const patch: { -readonly [K in keyof TaskUserFields]?: TaskUserFields[K] } = {};
  for (const field of changed) {
    if (field !== "group") Object.assign(patch, { [field]: fields[field] });
  }
  // The old schedule's excluded occurrences already due stay excluded: recorded first, as an edit does.
  const settled =
    patch.schedule === undefined ? { task, newRuns: [] } : settleExcluded(task, ctx.now);
  const edited = editTask(settled.task, patch, ctx);
  return { changed, task: { ...edited, group }, newRuns: settled.newRuns };
}
