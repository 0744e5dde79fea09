/**
 * The upsert use case by key (docs/semantics.md#upsert), orchestrated over the ports: look the key up,
 * create or replace, and look again when a concurrent writer created or deleted the key meanwhile; or
 * plan the same without writing (`dry_run`). Then which user-owned fields a whole definition changes on a
 * task, compared in their public (normalised) shapes, and the edit that brings the task to it: the
 * domain's `editTask` on exactly the changed fields, so upsert never touches `status`, re-arms a terminal
 * task only as an edit would, and a schedule change keeps what is already decided.
 */
import { settleExcluded } from "../../domain/calendar-commands.js";
import { KeyTakenError, NotFoundError, StaleVersionError } from "../../domain/errors.js";
import { taskId as toTaskId } from "../../domain/ids.js";
import type { NewRun } from "../../domain/new-run.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { OwnerScope } from "../../domain/ports/queries.js";
import { scheduleToInput } from "../../domain/schedule/schedule-spec.js";
import { createTask, editTask, taskWarnings } from "../../domain/task-fields.js";
import type { Task, TaskUserFields } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import {
  readCalendars,
  retryOnCalendarChange,
  scheduleOfInput,
} from "../calendars/calendar-lookup.js";
import type { Store } from "../../domain/ports/store.js";
import { checkReferences } from "./task-references.js";
import type { KnownReferences } from "./task-references.js";
import {
  parseWith,
  taskFieldsFromCreate,
  taskIdentityFrom,
  taskUpsertSchema,
} from "../shapes/task-input.js";
import { contextView, optionsView, targetView } from "../shapes/view-mappers.js";
import type { Limits } from "../policy/limits.js";
import { checkMinPeriod, Quotas } from "../policy/quotas.js";

/** How many times an upsert looks the key up again when a concurrent writer created or deleted it. */
const UPSERT_ATTEMPTS = 3;

export interface TaskUpsertDeps extends KnownReferences {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  /** The input limits, with the operator's settings (limits.ts). @default DEFAULT_LIMITS */
  readonly limits?: Limits;
  /** Per-owner quotas (docs/security.md#quotas): the least period applies to a replaced schedule. @default none */
  readonly quotas?: Quotas;
}

export interface TaskUpsertRequest {
  readonly actor: Actor;
  readonly input: unknown;
  /** The `If-Match` version; null: no check. */
  readonly expectedVersion: number | null;
  readonly now: Instant;
  readonly dryRun: boolean;
  /** Creates the task when no task has the key (the service's create, with its wake-up). */
  readonly create: () => Promise<Task>;
}

/** What an upsert did, or would do: the task as it is (or would be) afterwards. */
export interface TaskUpsertOutcome {
  readonly task: Task;
  readonly warnings: readonly string[];
  readonly created: boolean;
  readonly changed: readonly UpsertField[];
}

/**
 * Creates the task with `input.key`, or brings the owner's task with that key to exactly this
 * definition. Two callers upserting one key at once end with one task: the store's unique key refuses
 * the second insert, which then updates (or finds identical) the first one's task.
 * @throws version_conflict when `expectedVersion` is given and is not the task's (or no task has the key)
 */
export async function upsertTask(
  deps: TaskUpsertDeps,
  request: TaskUpsertRequest,
): Promise<TaskUpsertOutcome> {
  const { actor, expectedVersion, now } = request;
  const { key } = parseWith(taskUpsertSchema, request.input);
  if (request.dryRun) return planUpsert(deps, request, key);
  for (let attempt = 1; ; attempt++) {
    const found = await deps.store.tasks.findTaskByKey(actor.owner, key);
    try {
      if (found !== null) return await replaceTask(deps, request, found);
      if (expectedVersion !== null) throw new StaleVersionError(expectedVersion, 0);
      const task = await request.create();
      return { task, warnings: taskWarnings(task, now), created: true, changed: [] };
    } catch (error) {
      // Another writer created the key (or deleted its task) meanwhile: look it up again.
      const raced = error instanceof KeyTakenError || error instanceof NotFoundError;
      if (!raced || attempt >= UPSERT_ATTEMPTS) throw error;
    }
  }
}

/**
 * What an upsert would do, checked as it would be (every field, the references, the domain's
 * invariants) and written nowhere.
 */
async function planUpsert(
  deps: TaskUpsertDeps,
  request: TaskUpsertRequest,
  key: string,
): Promise<TaskUpsertOutcome> {
  const { actor, input, expectedVersion, now } = request;
  const policy = deps.policy;
  const found = await deps.store.tasks.findTaskByKey(actor.owner, key);
  if (expectedVersion !== null && expectedVersion !== (found?.version ?? 0)) {
    throw new StaleVersionError(expectedVersion, found?.version ?? 0);
  }
  const calendars = await readCalendars(deps.store, actor.owner, scheduleOfInput(input));
  const fields = taskFieldsFromCreate(input, now, policy.defaultOptions, calendars, deps.limits);
  const { group } = taskIdentityFrom(input);
  await checkReferences(deps, actor, fields, fields);
  if (found === null) {
    const ctx = { id: toTaskId(key), owner: actor.owner, now, policy, webhookSecret: "" };
    const task = createTask(fields, { ...ctx, key, group });
    return { task, warnings: taskWarnings(task, now), created: true, changed: [] };
  }
  const edit = upsertEdit(found, fields, group, { now, policy });
  const task = edit.task ?? found;
  const warnings = edit.changed.includes("schedule") ? taskWarnings(task, now) : [];
  return { task, warnings, created: false, changed: edit.changed };
}

/** The upsert of a task found by its key: an edit of the fields that differ, under its row lock. */
async function replaceTask(
  deps: TaskUpsertDeps,
  request: TaskUpsertRequest,
  found: Task,
): Promise<TaskUpsertOutcome> {
  const { actor, input, expectedVersion, now } = request;
  const policy = deps.policy;
  const outcome = await retryOnCalendarChange(async () => {
    const calendars = await readCalendars(deps.store, actor.owner, scheduleOfInput(input));
    const fields = taskFieldsFromCreate(input, now, policy.defaultOptions, calendars, deps.limits);
    checkMinPeriod((deps.quotas ?? Quotas.UNLIMITED).of(actor.owner), fields.schedule, now);
    const { group } = taskIdentityFrom(input);
    await checkReferences(deps, actor, fields, fields);
    // Owner scope, not the actor's: the key is the owner's, and so is the task it names.
    const scope: OwnerScope = { kind: "owner", owner: actor.owner };
    return deps.store.tasks.mutateTask(scope, found.id, (locked) => {
      const edit = upsertEdit(locked.task, fields, group, { now, policy });
      const task = edit.task ?? locked.task;
      return {
        ...(edit.task === null ? {} : { task: edit.task }),
        ...(expectedVersion === null ? {} : { expectedVersion }),
        newRuns: edit.newRuns,
        result: () => ({ task, changed: edit.changed }),
      };
    });
  });
  return {
    task: outcome.task,
    warnings: outcome.changed.includes("schedule") ? taskWarnings(outcome.task, now) : [],
    created: false,
    changed: outcome.changed,
  };
}

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
