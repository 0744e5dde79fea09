/**
 * An owner's edits to one task under its row lock (docs/semantics.md#task-operations): the PATCH (its
 * calendars read, and read again if one changes, the owner's least period, the references checked
 * before any write), pause, resume, cancel, delete, and the signing-secret rotation
 * (docs/security.md#rotating-a-tasks-signing-secret). Each locks the task, has the domain decide, and
 * writes the decision in one step; the runs it asks to stop go to the cancel hook. The service adds the
 * wake-up and the view.
 */
import { ValidationError } from "../../domain/errors.js";
import { taskId as toTaskId } from "../../domain/ids.js";
import type { CatchUpPolicy, SchedulePolicy } from "../../domain/options.js";
import type { OwnerScope } from "../../domain/ports/queries.js";
import type { Run } from "../../domain/run.js";
import { settleExcluded } from "../../domain/calendar-commands.js";
import { cancelTask, deleteTask, pauseTask, resumeTask } from "../../domain/task-commands.js";
import type { CommandOutcome } from "../../domain/task-commands.js";
import { isDefectiveField } from "../../domain/task-defect.js";
import { editTask } from "../../domain/task-fields.js";
import { rotateTaskSecret, SECRET_GRACE_DEFAULT_MS } from "../../domain/task-secret.js";
import type { Task } from "../../domain/task.js";
import { parseDuration } from "../../domain/schedule/iso-text.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import { scopeOf } from "../access/actor.js";
import {
  readCalendars,
  retryOnCalendarChange,
  scheduleOfInput,
} from "../calendars/calendar-lookup.js";
import type { Limits } from "../policy/limits.js";
import { checkMinPeriod, Quotas } from "../policy/quotas.js";
import type { EventSink } from "../events/internal-events.js";
import type { Store } from "../../domain/ports/store.js";
import { taskFieldsFromPatch, withStoredSchedule } from "../shapes/task-input.js";
import { checkReferences } from "./task-references.js";
import type { KnownReferences } from "./task-references.js";

/** What the edits need of the service. */
export interface TaskEditDeps extends KnownReferences {
  readonly store: Store;
  readonly policy: SchedulePolicy;
  /** Mints a task's webhook signing secret. */
  readonly newSecret: () => string;
  readonly signals: { cancelRequested(run: Run, task: Task): void };
  /** The input limits, with the operator's settings (limits.ts). @default DEFAULT_LIMITS */
  readonly limits?: Limits;
  /** Per-owner quotas (docs/security.md#quotas): the least period applies to a patch. @default none */
  readonly quotas?: Quotas;
  /** Receives the occurrences a resume decides (`admission:decided`), as admission's. @default none */
  readonly events?: EventSink;
}

/** What a PATCH wrote: the task afterwards, and whether the patch gave a schedule. */
export interface PatchedTask {
  readonly task: Task;
  readonly scheduleEdited: boolean;
}

/**
 * Locks the owner's task `id`, writes what `decide` makes of it (a compare-and-set on `version` when
 * `expectedVersion` is given), and asks the targets of the runs it stopped to cancel.
 */
async function mutateTask(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  decide: (locked: { task: Task; activeRuns: readonly Run[] }) => CommandOutcome,
  expectedVersion?: number,
): Promise<Task> {
  return (await mutateTaskOutcome(deps, actor, id, decide, expectedVersion)).task;
}

/** `mutateTask`, answering the whole outcome the store wrote (the decision made last, after a retry). */
async function mutateTaskOutcome<O extends CommandOutcome>(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  decide: (locked: { task: Task; activeRuns: readonly Run[] }) => O,
  expectedVersion?: number,
): Promise<O> {
  const scope: OwnerScope = scopeOf(actor);
  const written = await deps.store.tasks.mutateTask(scope, toTaskId(id), (locked) => {
    const outcome = decide(locked);
    return {
      task: outcome.task,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
      newRuns: outcome.newRuns,
      runUpdates: outcome.runUpdates,
      result: () => outcome,
    };
  });
  for (const run of written.cancelTargets) deps.signals.cancelRequested(run, written.task);
  return written;
}

/** PATCH `current` (the owner's task `id`) with a compare-and-set on `version` (null: no check). */
export async function patchTask(
  deps: TaskEditDeps,
  actor: Actor,
  current: Task,
  id: string,
  input: unknown,
  expectedVersion: number | null,
  now: Instant,
): Promise<PatchedTask> {
  // docs/semantics.md#task-operations: a patched schedule keeps the stored zone, bounds and exclude.
  // A stored schedule that does not parse has nothing to keep: the patch gives it whole.
  const completed = isDefectiveField(current.defect, "schedule")
    ? input
    : withStoredSchedule(input, current.schedule);
  const { patch, task } = await retryOnCalendarChange(async () => {
    const calendars = await readCalendars(deps.store, actor.owner, scheduleOfInput(completed));
    const fields = taskFieldsFromPatch(completed, now, current.options, calendars, deps.limits);
    if (fields.schedule !== undefined)
      checkMinPeriod((deps.quotas ?? Quotas.UNLIMITED).of(actor.owner), fields.schedule, now);
    await checkReferences(deps, actor, fields, { ...current, ...fields });
    const edited = await mutateTask(
      deps,
      actor,
      id,
      (locked) => {
        // The old schedule's excluded occurrences already due stay excluded: recorded first.
        const settled =
          fields.schedule === undefined
            ? { task: locked.task, newRuns: [] }
            : settleExcluded(locked.task, now);
        return {
          task: editTask(settled.task, fields, { now, policy: deps.policy }),
          newRuns: settled.newRuns,
          runUpdates: [],
          cancelTargets: [],
        };
      },
      expectedVersion ?? undefined,
    );
    return { patch: fields, task: edited };
  });
  return { task, scheduleEdited: patch.schedule !== undefined };
}

/** Pauses the owner's task `id`; `cancelRunning` also asks its running runs to stop. */
export function pauseOwnedTask(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  options: { cancelRunning?: boolean },
  now: Instant,
): Promise<Task> {
  const cancelRunning = options.cancelRunning ?? false;
  return mutateTask(deps, actor, id, (l) =>
    pauseTask(l.task, l.activeRuns, { now, cancelRunning }),
  );
}

/** Resumes the owner's task `id`, catching up as `catchUp` says (default `none`). */
export async function resumeOwnedTask(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  options: { catchUp?: CatchUpPolicy },
  now: Instant,
): Promise<Task> {
  const catchUp = options.catchUp ?? "none";
  const { task, admission } = await mutateTaskOutcome(deps, actor, id, (l) =>
    resumeTask(l.task, l.activeRuns, { now, catchUp }),
  );
  // What the resume decided (a missed range, a queued catch-up) is reported like admission's decisions.
  deps.events?.emit("admission:decided", { taskId: task.id, admission });
  return task;
}

/** Cancels the owner's task `id`. */
export function cancelOwnedTask(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  now: Instant,
): Promise<Task> {
  return mutateTask(deps, actor, id, (l) => {
    // Excluded occurrences already due are recorded before the task ends (never silently absent).
    const settled = settleExcluded(l.task, now);
    const outcome = cancelTask(settled.task, l.activeRuns, now);
    return { ...outcome, newRuns: [...settled.newRuns, ...outcome.newRuns] };
  });
}

/** Deletes the owner's task `id`: soft until no run is active; `force` and `afterRun` as `delete` says. */
export async function deleteOwnedTask(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  options: { force?: boolean; afterRun?: boolean; expectedVersion?: number },
  now: Instant,
): Promise<void> {
  const force = options.force ?? false;
  const afterRun = options.afterRun ?? false;
  await mutateTask(
    deps,
    actor,
    id,
    (l) => deleteTask(l.task, l.activeRuns, { now, force, afterRun }),
    options.expectedVersion,
  );
}

/**
 * Gives the owner's task `id` a new signing secret; the replaced one keeps signing and opening
 * callbacks for `grace`.
 * @throws validation_failed naming `grace` (an ISO-8601 duration up to P7D; default PT24H)
 */
export async function rotateSecret(
  deps: TaskEditDeps,
  actor: Actor,
  id: string,
  grace: unknown,
  now: Instant,
): Promise<Task> {
  const graceMs = graceOf(grace);
  const secret = deps.newSecret();
  return mutateTask(deps, actor, id, (l) => rotateTaskSecret(l.task, { secret, now, graceMs }));
}

/** A rotation's grace: absent is the default; else an ISO-8601 duration (or seconds). */
function graceOf(grace: unknown): number {
  if (grace === undefined) return SECRET_GRACE_DEFAULT_MS;
  const parsed = parseDuration(grace, 0);
  if (!parsed.ok) throw ValidationError.of("grace", parsed.problem);
  return parsed.value;
}
