/**
 * The owner's use cases (docs/semantics.md#task-operations): one method per operation, orchestrating
 * the ports. Every decision is a domain call; every method takes `now` explicitly. One task is created
 * in create-task.ts (many in create-task-batch.ts), the references a task names are checked in
 * task-references.ts, upserts by key run in upsert-task.ts, edits under the task's row lock (PATCH,
 * pause, resume, cancel, delete, secret rotation) made in task-edits.ts; the runs side lives in runs/:
 * manual runs within the rate quotas (manual-runs.ts), a run's cancel (cancel-run.ts), run reads
 * (find-runs.ts) and redrive (redrive-run.ts); previews and explanations are made in task-insight.ts, and
 * named calendars kept by `calendars` (calendar-service.ts).
 */
import { NotFoundError } from "../../domain/errors.js";
import type { RunId } from "../../domain/ids.js";
import { taskId as toTaskId, threadId as toThreadId } from "../../domain/ids.js";
import type { CatchUpPolicy } from "../../domain/options.js";
import type { RunQuery, RunSearch, TaskQuery } from "../../domain/ports/queries.js";
import { nextTurn } from "../policy/next-turn.js";
import { taskWarnings } from "../../domain/task-fields.js";
import type { Task } from "../../domain/task.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "../access/actor.js";
import { readCalendars } from "../calendars/calendar-lookup.js";
import { CalendarService } from "../calendars/calendar-service.js";
import { scopeOf } from "../access/actor.js";
import { checkPreviewCount } from "../policy/limits.js";
import { explainTask, previewSchedule, previewTask } from "./task-insight.js";
import { createTasks } from "./create-task-batch.js";
import { redriveRun } from "../runs/redrive-run.js";
import { searchRuns } from "../runs/find-runs.js";
import type { RunOperationDeps } from "../runs/redrive-run.js";
import { NO_EVENTS } from "../events/internal-events.js";
import type { RotatedSecretView } from "../shapes/view-schemas.js";
import { instantFrom } from "../shapes/task-input.js";
import { upsertTask } from "./upsert-task.js";
import { createOneTask } from "./create-task.js";
import { backfillWithinQuota, triggerWithinQuota } from "../runs/manual-runs.js";
import type { TriggerOptions } from "../runs/manual-runs.js";
import { cancelRun } from "../runs/cancel-run.js";
import { findRun, listTaskRuns } from "../runs/find-runs.js";
import {
  cancelOwnedTask,
  deleteOwnedTask,
  patchTask,
  pauseOwnedTask,
  resumeOwnedTask,
  rotateSecret,
} from "./task-edits.js";
import { formatInstant, runView, taskView } from "../shapes/view-mappers.js";
import type {
  ExplanationView,
  OccurrenceView,
  PageView,
  RunView,
  TaskView,
} from "../shapes/view-mappers.js";

import type { CreatedTask, TaskServiceDeps, UpsertedTask } from "./task-service-deps.js";

export type {
  CreatedTask,
  ServiceSignals,
  TaskServiceDeps,
  UpsertedTask,
} from "./task-service-deps.js";

export class TaskService {
  readonly #deps: TaskServiceDeps;
  /** The owner's named calendars, over the same store (their edits refresh this service's tasks). */
  readonly calendars: CalendarService;

  constructor(deps: TaskServiceDeps) {
    this.#deps = deps;
    this.calendars = new CalendarService({
      store: deps.store,
      ...(deps.quotas === undefined ? {} : { quotas: deps.quotas }),
      holidays: deps.holidays,
      wake: () => {
        deps.signals.wake();
      },
    });
  }

  /**
   * Validates everything before any write; returns the task and its warnings (DST, jitter). The
   * calendars its schedule names are read first, and read again if one changes before the insert.
   */
  async create(actor: Actor, input: unknown, now: Instant): Promise<CreatedTask> {
    const task = await createOneTask(this.#deps, actor, input, now);
    this.#deps.signals.wake();
    return { task: this.#view(task), warnings: taskWarnings(task, now) };
  }

  /**
   * Creates every task of the list or none, in one transaction (docs/semantics.md#bulk-create); the
   * answer is in input order.
   * @throws validation_failed naming each bad field by the item's index (`tasks[17].schedule.cron`)
   * @throws limit_exceeded past 1,000 tasks
   */
  async createMany(actor: Actor, inputs: unknown, now: Instant): Promise<CreatedTask[]> {
    const tasks = await createTasks(this.#deps, actor, inputs, now);
    if (tasks.length > 0) this.#deps.signals.wake();
    const created: CreatedTask[] = [];
    for (const task of tasks) {
      // Each task's warnings are bounded work; the batch's are not: let the loop breathe between them.
      if (created.length % 20 === 0) await nextTurn();
      created.push({ task: this.#view(task), warnings: taskWarnings(task, now) });
    }
    return created;
  }

  async get(actor: Actor, id: string): Promise<TaskView> {
    return this.#view(await this.#find(actor, id));
  }

  /** The actor's task with this key. @throws not_found when the owner has none */
  async getByKey(actor: Actor, key: string): Promise<TaskView> {
    const task = await this.#deps.store.tasks.findTaskByKey(actor.owner, key);
    if (task === null) throw new NotFoundError("task", key);
    return this.#view(task);
  }

  /**
   * Creates the task with `input.key`, or brings the owner's task with that key to exactly this
   * definition (PUT: a field left out takes its default). Identical input writes nothing (no new
   * `version`); `dryRun` writes nothing and answers what would be done (upsert-task.ts).
   * @throws version_conflict when `expectedVersion` is given and is not the task's (or no task has the key)
   */
  async upsert(
    actor: Actor,
    input: unknown,
    expectedVersion: number | null,
    now: Instant,
    options: { readonly dryRun?: boolean } = {},
  ): Promise<UpsertedTask> {
    const dryRun = options.dryRun === true;
    const outcome = await upsertTask(this.#deps, {
      actor,
      input,
      expectedVersion,
      now,
      dryRun,
      create: () => createOneTask(this.#deps, actor, input, now),
    });
    if (!dryRun && (outcome.created || outcome.changed.length > 0)) this.#deps.signals.wake();
    return {
      task: this.#view(outcome.task),
      warnings: outcome.warnings,
      created: outcome.created,
      changed: outcome.changed,
    };
  }

  /**
   * Whether the actor may bind tasks to the thread `threadId` of agent server `server`, as a task's
   * `reuse_thread` is checked: false when the thread is missing or another owner's.
   * @throws target_unavailable when the server cannot be asked
   */
  async threadUsable(actor: Actor, server: string, threadId: string): Promise<boolean> {
    return this.#deps.threads.threadExists(actor.owner, `agent:${server}`, toThreadId(threadId));
  }

  async list(actor: Actor, query: TaskQuery): Promise<PageView<TaskView>> {
    const page = await this.#deps.store.tasks.listTasks(scopeOf(actor), query);
    return { items: page.items.map((task) => this.#view(task)), next_cursor: page.nextCursor };
  }

  /** PATCH with a compare-and-set on `version` (null: no check, for the library). */
  async update(
    actor: Actor,
    id: string,
    input: unknown,
    expectedVersion: number | null,
    now: Instant,
  ): Promise<CreatedTask> {
    const current = await this.#find(actor, id);
    const { task, scheduleEdited } = await patchTask(
      this.#deps,
      actor,
      current,
      id,
      input,
      expectedVersion,
      now,
    );
    this.#deps.signals.wake();
    return { task: this.#view(task), warnings: scheduleEdited ? taskWarnings(task, now) : [] };
  }

  async pause(
    actor: Actor,
    id: string,
    options: { cancelRunning?: boolean },
    now: Instant,
  ): Promise<TaskView> {
    return this.#view(await pauseOwnedTask(this.#deps, actor, id, options, now));
  }

  async resume(
    actor: Actor,
    id: string,
    options: { catchUp?: CatchUpPolicy },
    now: Instant,
  ): Promise<TaskView> {
    const task = await resumeOwnedTask(this.#deps, actor, id, options, now);
    this.#deps.signals.wake();
    return this.#view(task);
  }

  async cancel(actor: Actor, id: string, now: Instant): Promise<TaskView> {
    return this.#view(await cancelOwnedTask(this.#deps, actor, id, now));
  }

  /**
   * Deletes (soft until no run is active); refused while a run is launching or running unless `force`
   * (which asks it to stop) or `afterRun` (which lets it finish and deletes the task when it has ended).
   */
  async delete(
    actor: Actor,
    id: string,
    options: { force?: boolean; afterRun?: boolean; expectedVersion?: number },
    now: Instant,
  ): Promise<void> {
    await deleteOwnedTask(this.#deps, actor, id, options, now);
  }

  /**
   * Run now: a manual occurrence; a repeat with the same key returns the first run. With
   * `takeOccurrence`, the run takes a once task's occurrence (`TriggerOptions`).
   */
  async trigger(actor: Actor, id: string, options: TriggerOptions, now: Instant): Promise<RunView> {
    const task = await this.#find(actor, id);
    return triggerWithinQuota(this.#deps, actor, task, options, now);
  }

  /**
   * A new signing secret, answered once; the replaced one keeps signing and opening callbacks for
   * `grace` (docs/security.md#rotating-a-tasks-signing-secret).
   * @throws validation_failed naming `grace` (an ISO-8601 duration up to P7D; default PT24H)
   */
  async rotateSecret(
    actor: Actor,
    id: string,
    input: { grace?: unknown },
    now: Instant,
  ): Promise<RotatedSecretView> {
    const task = await rotateSecret(this.#deps, actor, id, input.grace, now);
    const view = this.#view(task);
    return {
      task: view,
      webhook_secret: view.webhook_secret,
      previous_valid_until: formatInstant(task.retiringSecret?.until ?? null),
    };
  }

  /**
   * Replays nominal times in [from, to) as `backfill` runs; times already backfilled are not repeated.
   * @throws quota_exceeded (`backfill_runs_per_hour`) when the owner would pass its hourly quota
   */
  async backfill(
    actor: Actor,
    id: string,
    input: { from: unknown; to: unknown },
    now: Instant,
  ): Promise<{ runs: RunView[]; already_backfilled: number }> {
    return backfillWithinQuota(this.#deps, actor, id, input, now);
  }

  async listRuns(actor: Actor, id: string, query: RunQuery): Promise<PageView<RunView>> {
    return listTaskRuns(this.#deps, actor, await this.#find(actor, id), query);
  }

  async getRun(actor: Actor, id: string): Promise<RunView> {
    return runView(await findRun(this.#deps, actor, id));
  }

  /** Runs across the actor's tasks, newest first (docs/api.md `GET /v1/runs`). */
  searchRuns(actor: Actor, search: RunSearch): Promise<PageView<RunView>> {
    return searchRuns(this.#runOperations(), actor, search);
  }

  /** Redrive: a failed, timed-out or cancelled run back in the queue (docs/semantics.md#redrive). */
  redriveRun(actor: Actor, id: string, now: Instant): Promise<RunView> {
    return redriveRun(this.#runOperations(), actor, id as RunId, now);
  }

  #runOperations(): RunOperationDeps {
    return {
      store: this.#deps.store,
      signals: this.#deps.signals,
      events: this.#deps.events ?? NO_EVENTS,
    };
  }

  /** Cancels a run: a queued run at once; a launched one is asked to stop (docs/semantics.md#cancellation). */
  async cancelRun(actor: Actor, id: string, now: Instant): Promise<RunView> {
    return cancelRun(this.#deps, actor, id, now);
  }

  /** The next `count` fires with local wall times and what DST does to them. */
  async preview(
    actor: Actor,
    id: string,
    count: number,
    now: Instant,
  ): Promise<{ occurrences: OccurrenceView[] }> {
    checkPreviewCount(count);
    const task = await this.#find(actor, id);
    return { occurrences: previewTask(task, count, now) };
  }

  /**
   * The next `count` fires of a schedule no task has yet (the dashboard's live preview), parsed exactly
   * as `create` parses a task's schedule (the caller's calendars included), so a bad field is the same
   * `validation_failed`.
   */
  async previewSchedule(
    actor: Actor,
    input: unknown,
    count: number,
    now: Instant,
  ): Promise<{ occurrences: OccurrenceView[] }> {
    checkPreviewCount(count);
    const calendars = await readCalendars(this.#deps.store, actor.owner, input);
    return { occurrences: previewSchedule(input, count, now, calendars) };
  }

  /**
   * Why the task did or did not fire around `at` (an RFC 3339 instant): the nominal times around it, the
   * decision of the last one (paging the history newest first, at most 5,000 rows) and what DST did.
   */
  async explain(actor: Actor, id: string, at: unknown, now: Instant): Promise<ExplanationView> {
    const instant = instantFrom(at, "at");
    const task = await this.#find(actor, id);
    const runs = this.#deps.store.runs;
    return explainTask({ runs, scope: scopeOf(actor), task, at: instant, now });
  }

  async #find(actor: Actor, id: string): Promise<Task> {
    const task = await this.#deps.store.tasks.findTask(scopeOf(actor), toTaskId(id));
    if (task === null) throw new NotFoundError("task", id);
    return task;
  }

  #view(task: Task): TaskView {
    return taskView(task, this.#deps.signsWithTaskSecret ?? true);
  }
}
