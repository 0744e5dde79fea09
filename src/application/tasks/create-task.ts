/**
 * The create use case for one task (docs/semantics.md#task-operations): its id and signing secret
 * minted first, then everything checked before the insert (the input, the owner's least period and
 * task count (docs/security.md#quotas), the references it names), with the calendars its schedule
 * names read first and read again if one changes before the insert. Many at once are create-task-batch.ts's.
 */
import { taskId as toTaskId } from "../../domain/ids.js";
import type { SchedulePolicy } from "../../domain/options.js";
import { createTask } from "../../domain/task-fields.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import {
  readCalendars,
  retryOnCalendarChange,
  scheduleOfInput,
} from "../calendars/calendar-lookup.js";
import type { Limits } from "../policy/limits.js";
import { checkMinPeriod, Quotas, taskCountCheck } from "../policy/quotas.js";
import type { Store } from "../../domain/ports/store.js";
import { taskFieldsFromCreate, taskIdentityFrom } from "../shapes/task-input.js";
import { checkReferences } from "./task-references.js";
import type { KnownReferences } from "./task-references.js";

/** What a create needs of the service. */
export interface CreateTaskDeps extends KnownReferences {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  /** Mints task ids. */
  readonly newId: () => string;
  /** Mints a task's webhook signing secret. */
  readonly newSecret: () => string;
  /** The input limits, with the operator's settings (limits.ts). @default DEFAULT_LIMITS */
  readonly limits?: Limits;
  /** Per-owner quotas (docs/security.md#quotas). @default none */
  readonly quotas?: Quotas;
}

/** Creates the task (create's whole check and insert), without the wake-up. */
export async function createOneTask(
  deps: CreateTaskDeps,
  actor: Actor,
  input: unknown,
  now: Instant,
): Promise<Task> {
  const id = toTaskId(deps.newId());
  const webhookSecret = deps.newSecret();
  const quotas = (deps.quotas ?? Quotas.UNLIMITED).of(actor.owner);
  const task = await retryOnCalendarChange(async () => {
    const calendars = await readCalendars(deps.store, actor.owner, scheduleOfInput(input));
    const fields = taskFieldsFromCreate(
      input,
      now,
      deps.policy.defaultOptions,
      calendars,
      deps.limits,
    );
    checkMinPeriod(quotas, fields.schedule, now);
    const { key, group } = taskIdentityFrom(input);
    await checkReferences(deps, actor, fields, fields);
    const created = createTask(fields, {
      id,
      owner: actor.owner,
      now,
      policy: deps.policy,
      webhookSecret,
      key,
      group,
    });
    // The owner's task count is checked in the inserting transaction (docs/security.md#quotas).
    await deps.store.tasks.insertTask(created, taskCountCheck(quotas));
    return created;
  });
  return task;
}
