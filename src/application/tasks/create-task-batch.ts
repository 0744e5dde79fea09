/**
 * Bulk create (docs/semantics.md#bulk-create): every item is parsed and checked as `create` checks one
 * task, every refusal is gathered under its index (`tasks[17].schedule.cron`), and only a batch with no
 * refusal is written, by one store call in one transaction.
 */
import {
  KeyTakenError,
  LimitExceededError,
  NotFoundError,
  ValidationError,
} from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import { taskId as toTaskId } from "../../domain/ids.js";
import type { TaskId } from "../../domain/ids.js";
import type { Task } from "../../domain/task.js";
import { TASK_LIMITS } from "../../domain/task.js";
import { createTask } from "../../domain/task-fields.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import {
  readCalendars,
  retryOnCalendarChange,
  scheduleOfInput,
} from "../calendars/calendar-lookup.js";
import { checkReferences } from "./task-references.js";
import type { KnownReferences } from "./task-references.js";
import { taskFieldsFromCreate, taskIdentityFrom } from "../shapes/task-input.js";
import type { SchedulePolicy } from "../../domain/options.js";
import type { Store } from "../../domain/ports/store.js";
import type { Limits } from "../policy/limits.js";
import { checkMinPeriod, Quotas, taskCountCheck } from "../policy/quotas.js";
import { nextTurn } from "../policy/next-turn.js";
import { expandedExclusionItems } from "../../domain/calendar.js";

/**
 * The most exclusion items a batch's schedules hold together, calendars expanded: what one batch may
 * write of them (docs/security.md#bounded-work). 1,000 tasks may each name a 10-date calendar, 10 tasks
 * a 1,000-item one.
 */
export const BATCH_EXCLUSION_ITEMS_MAX = 10_000;

/** @throws limit_exceeded (`batch_exclusion_items`) */
function checkBatchExclusions(tasks: readonly Task[]): void {
  let total = 0;
  for (const task of tasks) total += expandedExclusionItems(task.schedule);
  if (total <= BATCH_EXCLUSION_ITEMS_MAX) return;
  throw new LimitExceededError(
    "batch_exclusion_items",
    BATCH_EXCLUSION_ITEMS_MAX,
    `the batch's schedules exclude ${total} items with their calendars expanded, over the limit of ${BATCH_EXCLUSION_ITEMS_MAX}: name the calendar in fewer tasks per batch`,
  );
}

export interface TaskBatchDeps extends KnownReferences {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  readonly newId: () => string;
  readonly newSecret: () => string;
  readonly limits?: Limits;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
}

/** The field path of item `index` of a batch: `tasks[3].schedule.cron` (or `tasks[3]` for the item). */
export function batchField(index: number, field = ""): string {
  const item = `tasks[${String(index)}]`;
  return field === "" || field === "body" ? item : `${item}.${field}`;
}

/**
 * The batch as a list of raw items.
 * @throws validation_failed when `inputs` is not a list; limit_exceeded past `TASK_LIMITS.batchMax`
 */
export function batchItems(inputs: unknown): readonly unknown[] {
  if (!Array.isArray(inputs)) throw ValidationError.of("tasks", "must be a list of tasks");
  if (inputs.length > TASK_LIMITS.batchMax) {
    throw new LimitExceededError(
      "batch_size",
      TASK_LIMITS.batchMax,
      `a batch holds at most ${String(TASK_LIMITS.batchMax)} tasks, not ${String(inputs.length)}`,
    );
  }
  return inputs;
}

/**
 * Creates every task of `inputs` or none. Ids and secrets are minted once, so a retry after a calendar
 * changed writes the same tasks.
 * @throws validation_failed naming every bad field of every item by its index
 */
export async function createTasks(
  deps: TaskBatchDeps,
  actor: Actor,
  inputs: unknown,
  now: Instant,
): Promise<Task[]> {
  const items = batchItems(inputs);
  const quotas = (deps.quotas ?? Quotas.UNLIMITED).of(actor.owner);
  const minted = items.map(() => ({ id: toTaskId(deps.newId()), secret: deps.newSecret() }));
  return retryOnCalendarChange(async () => {
    const errors: FieldError[] = [];
    const tasks: Task[] = [];
    for (const [index, input] of items.entries()) {
      // `minted` has one entry per item: the index is always inside it.
      const { id, secret } = minted[index] as { id: TaskId; secret: string };
      await nextTurn();
      try {
        tasks.push(await createOne(deps, actor, { input, id, secret, now }));
      } catch (error) {
        errors.push(...itemErrors(error, index));
      }
    }
    checkBatchExclusions(tasks);
    for (const [index, task] of tasks.entries()) {
      if (index % 50 === 0) await nextTurn();
      try {
        checkMinPeriod(quotas, task.schedule, now);
      } catch (error) {
        throw itemLimit(error, index);
      }
    }
    errors.push(...(await keyErrors(deps, actor, tasks, errors.length === 0)));
    if (errors.length > 0) throw new ValidationError(errors);
    // After validation: a bad batch is told what is wrong with it, whatever the owner's count.
    try {
      // The owner's task count is checked in the inserting transaction (docs/security.md#quotas).
      await deps.store.tasks.insertTasks(tasks, taskCountCheck(quotas));
    } catch (error) {
      // A key taken between the check and the insert: name the item that lost, as the check does.
      if (!(error instanceof KeyTakenError)) throw error;
      const late = await keyErrors(deps, actor, tasks, true);
      throw late.length > 0 ? new ValidationError(late) : error;
    }
    return tasks;
  });
}

async function createOne(
  deps: TaskBatchDeps,
  actor: Actor,
  item: { input: unknown; id: TaskId; secret: string; now: Instant },
): Promise<Task> {
  const calendars = await readCalendars(deps.store, actor.owner, scheduleOfInput(item.input));
  const fields = taskFieldsFromCreate(
    item.input,
    item.now,
    deps.policy.defaultOptions,
    calendars,
    deps.limits,
  );
  const { key, group } = taskIdentityFrom(item.input);
  await checkReferences(deps, actor, fields, fields);
  return createTask(fields, {
    id: item.id,
    owner: actor.owner,
    now: item.now,
    policy: deps.policy,
    webhookSecret: item.secret,
    key,
    group,
  });
}

/**
 * The batch's key refusals (docs/semantics.md#bulk-create): a key given twice in the batch names the
 * later item, and a key another task of the owner already has names the item that asks for it. The
 * store is read only when `lookUp` (the batch is otherwise valid), one key at a time.
 */
async function keyErrors(
  deps: TaskBatchDeps,
  actor: Actor,
  tasks: readonly Task[],
  lookUp: boolean,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const firstIndex = new Map<string, number>();
  for (const [index, task] of tasks.entries()) {
    if (task.key === null) continue;
    const first = firstIndex.get(task.key);
    if (first === undefined) firstIndex.set(task.key, index);
    else {
      errors.push({
        field: batchField(index, "key"),
        message: `repeats the key of ${batchField(first)}: keys are unique per owner`,
      });
    }
  }
  if (!lookUp || errors.length > 0) return errors;
  for (const [key, index] of firstIndex) {
    const holder = await deps.store.tasks.findTaskByKey(actor.owner, key);
    if (holder !== null) {
      errors.push({
        field: batchField(index, "key"),
        message: `task ${holder.id} already has the key "${key}": upsert it, or choose another key`,
      });
    }
  }
  return errors;
}

/** An item's refusal as field errors under its index; anything else is not the item's fault. */
function itemErrors(error: unknown, index: number): FieldError[] {
  if (error instanceof ValidationError) {
    return error.errors.map((e) => ({ field: batchField(index, e.field), message: e.message }));
  }
  if (error instanceof NotFoundError && error.resource === "thread") {
    return [{ field: batchField(index, "context.thread_id"), message: error.message }];
  }
  throw itemLimit(error, index);
}

/** A limit one item exceeds (`run_timeout`, `min_period`), its message naming the item; else `error`. */
function itemLimit(error: unknown, index: number): unknown {
  if (!(error instanceof LimitExceededError)) return error;
  return new LimitExceededError(error.limit, error.max, `${batchField(index)}: ${error.message}`);
}
