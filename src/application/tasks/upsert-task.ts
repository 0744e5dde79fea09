/**
 * The upsert use case by key (docs/semantics.md#upsert), orchestrated over the ports: look the key up,
 * create or replace, and look again when a concurrent writer created or deleted the key meanwhile; or
 * plan the same without writing (`dry_run`). Which fields change, and the edit, are upsert-fields.ts's.
 */
import { KeyTakenError, NotFoundError, StaleVersionError } from "../../domain/errors.js";
import { taskId as toTaskId } from "../../domain/ids.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { OwnerScope } from "../../domain/ports/queries.js";
import { createTask, taskWarnings } from "../../domain/task-fields.js";
import type { Task } from "../../domain/task.js";
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
import { upsertEdit } from "./upsert-fields.js";
import type { Limits } from "../policy/limits.js";
import { checkMinPeriod, Quotas } from "../policy/quotas.js";
import type { UpsertField } from "./upsert-fields.js";

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
