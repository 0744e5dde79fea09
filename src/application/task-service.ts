/**
 * The owner's use cases (SPEC 4.3): one method per operation, orchestrating the ports. Every decision is a
 * domain call; every method takes `now` explicitly.
 */
import { NotFoundError, ValidationError } from "../domain/errors.js";
import type { RunId } from "../domain/ids.js";
import { taskId as toTaskId } from "../domain/ids.js";
import {
  EXPLAIN_MAX_HISTORY_ROWS,
  explainAt,
  explainWindow,
  historyReachedWindow,
} from "../domain/explain.js";
import { idempotencyKeyFor } from "../domain/occurrence.js";
import type { CatchUpPolicy, SchedulePolicy } from "../domain/options.js";
import type { OwnerScope, RunQuery, TaskQuery, ThreadLookup } from "../domain/ports.js";
import type { Run } from "../domain/run.js";
import { requestRunCancel } from "../domain/run-transitions.js";
import { runTaskContext } from "./dispatch-service.js";
import { describeOccurrences, dstWarnings, nextAfter } from "../domain/schedule/schedule-spec.js";
import {
  backfillTask,
  cancelTask,
  createTask,
  deleteTask,
  editTask,
  pauseTask,
  resumeTask,
  triggerTask,
  validateClientKey,
} from "../domain/task-commands.js";
import type { CommandOutcome } from "../domain/task-commands.js";
import type { Task, TaskUserFields } from "../domain/task.js";
import { TASK_LIMITS, isTerminalTaskStatus } from "../domain/task.js";
import { threadScopeOf } from "../domain/target.js";
import { DAY_MS } from "../domain/time.js";
import type { Instant } from "../domain/time.js";
import type { Actor } from "./actor.js";
import { readCalendars, retryOnCalendarChange, scheduleOfInput } from "./calendar-lookup.js";
import { CalendarService } from "./calendar-service.js";
import { settleExcluded } from "../domain/calendar-commands.js";
import { scopeOf } from "./actor.js";
import type { Store } from "./store.js";
import {
  instantFrom,
  scheduleFrom,
  taskFieldsFromCreate,
  taskFieldsFromPatch,
} from "./task-input.js";
import { explanationView, occurrenceView, runView, taskView } from "./views.js";
import type { ExplanationView, OccurrenceView, PageView, RunView, TaskView } from "./views.js";

/** Signals the service raises for the runtime (in-process wake-ups and cancel hooks). */
export interface ServiceSignals {
  /** Something may be due sooner than the coordinator thinks (create, edit, trigger, resume). */
  wake(): void;
  /** A launching or running run was asked to stop: its target's cancel hook should be called. */
  cancelRequested(run: Run, task: Task): void;
}

export interface TaskServiceDeps {
  readonly store: Store;
  readonly threads: ThreadLookup;
  readonly policy: SchedulePolicy;
  /** Mints task ids and default trigger keys. */
  readonly newId: () => string;
  /** Mints a task's webhook signing secret. */
  readonly newSecret: () => string;
  /** Handler names a task may name; null when the caller does not check them. */
  readonly handlerNames: ReadonlySet<string> | null;
  /** Agent server names a task may name; null when the caller does not check them. */
  readonly agentServers: ReadonlySet<string> | null;
  /** False when the operator signs every webhook with one server-wide secret. @default true */
  readonly signsWithTaskSecret?: boolean;
  readonly signals: ServiceSignals;
}

export interface CreatedTask {
  readonly task: TaskView;
  readonly warnings: readonly string[];
}

function checkPreviewCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > TASK_LIMITS.previewMax) {
    throw ValidationError.of("count", `must be an integer from 1 to ${TASK_LIMITS.previewMax}`);
  }
}

const WARNING_HORIZON_MS = 366 * DAY_MS;
/** History page size for `explain` (the API's largest). */
const EXPLAIN_PAGE_SIZE = 200;

export class TaskService {
  readonly #deps: TaskServiceDeps;
  /** The owner's named calendars, over the same store (their edits refresh this service's tasks). */
  readonly calendars: CalendarService;

  constructor(deps: TaskServiceDeps) {
    this.#deps = deps;
    this.calendars = new CalendarService({
      store: deps.store,
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
    const id = toTaskId(this.#deps.newId());
    const webhookSecret = this.#deps.newSecret();
    const task = await retryOnCalendarChange(async () => {
      const calendars = await readCalendars(this.#deps.store, actor.owner, scheduleOfInput(input));
      const fields = taskFieldsFromCreate(input, now, this.#deps.policy.defaultOptions, calendars);
      await this.#checkReferences(actor, fields, fields);
      const created = createTask(fields, {
        id,
        owner: actor.owner,
        now,
        policy: this.#deps.policy,
        webhookSecret,
      });
      await this.#deps.store.tasks.insertTask(created);
      return created;
    });
    this.#deps.signals.wake();
    return { task: this.#view(task), warnings: this.#warnings(task, now) };
  }

  async get(actor: Actor, id: string): Promise<TaskView> {
    return this.#view(await this.#find(actor, id));
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
    const { patch, task } = await retryOnCalendarChange(async () => {
      const calendars = await readCalendars(this.#deps.store, actor.owner, scheduleOfInput(input));
      const fields = taskFieldsFromPatch(input, now, current.options, calendars);
      await this.#checkReferences(actor, fields, { ...current, ...fields });
      const edited = await this.#mutate(
        actor,
        id,
        (locked) => {
          // The old schedule's excluded occurrences already due stay excluded: recorded first.
          const settled =
            fields.schedule === undefined
              ? { task: locked.task, newRuns: [] }
              : settleExcluded(locked.task, now);
          return {
            task: editTask(settled.task, fields, { now, policy: this.#deps.policy }),
            newRuns: settled.newRuns,
            runUpdates: [],
            cancelTargets: [],
          };
        },
        expectedVersion ?? undefined,
      );
      return { patch: fields, task: edited };
    });
    this.#deps.signals.wake();
    return {
      task: this.#view(task),
      warnings: patch.schedule === undefined ? [] : this.#warnings(task, now),
    };
  }

  async pause(
    actor: Actor,
    id: string,
    options: { cancelRunning?: boolean },
    now: Instant,
  ): Promise<TaskView> {
    const cancelRunning = options.cancelRunning ?? false;
    return this.#view(
      await this.#mutate(actor, id, (l) => pauseTask(l.task, l.activeRuns, { now, cancelRunning })),
    );
  }

  async resume(
    actor: Actor,
    id: string,
    options: { catchUp?: CatchUpPolicy },
    now: Instant,
  ): Promise<TaskView> {
    const catchUp = options.catchUp ?? "none";
    const task = await this.#mutate(actor, id, (l) =>
      resumeTask(l.task, l.activeRuns, { now, catchUp }),
    );
    this.#deps.signals.wake();
    return this.#view(task);
  }

  async cancel(actor: Actor, id: string, now: Instant): Promise<TaskView> {
    return this.#view(
      await this.#mutate(actor, id, (l) => {
        // Excluded occurrences already due are recorded before the task ends (never silently absent).
        const settled = settleExcluded(l.task, now);
        const outcome = cancelTask(settled.task, l.activeRuns, now);
        return { ...outcome, newRuns: [...settled.newRuns, ...outcome.newRuns] };
      }),
    );
  }

  /** Deletes (soft until no run is active); refused while a run is launching or running unless `force`. */
  async delete(
    actor: Actor,
    id: string,
    options: { force?: boolean; expectedVersion?: number },
    now: Instant,
  ): Promise<void> {
    const force = options.force ?? false;
    await this.#mutate(
      actor,
      id,
      (l) => deleteTask(l.task, l.activeRuns, { now, force }),
      options.expectedVersion,
    );
  }

  /** Run now: a manual occurrence; a repeat with the same key returns the first run. */
  async trigger(
    actor: Actor,
    id: string,
    options: { idempotencyKey?: string },
    now: Instant,
  ): Promise<RunView> {
    const task = await this.#find(actor, id);
    const clientKey = options.idempotencyKey ?? this.#deps.newId();
    validateClientKey(clientKey);
    const key = idempotencyKeyFor(task.id, "manual", clientKey);
    const existing = await this.#deps.store.runs.findManualRun(task.id, key);
    if (existing !== null) return runView(existing);
    const run = await this.#deps.store.tasks.mutateTask(scopeOf(actor), task.id, (locked) => ({
      newRuns: [triggerTask(locked.task, locked.activeRuns, { now, clientKey })],
      result: (inserted) => inserted[0] ?? null,
    }));
    this.#deps.signals.wake();
    if (run !== null) return runView(run);
    // Another request with the same key won the race: answer with its run.
    const winner = await this.#deps.store.runs.findManualRun(task.id, key);
    if (winner === null) throw new NotFoundError("run", key);
    return runView(winner);
  }

  /** Replays nominal times in [from, to) as `backfill` runs; times already backfilled are not repeated. */
  async backfill(
    actor: Actor,
    id: string,
    input: { from: unknown; to: unknown },
    now: Instant,
  ): Promise<{ runs: RunView[]; already_backfilled: number }> {
    const from = instantFrom(input.from, "from");
    const to = instantFrom(input.to, "to");
    const result = await this.#deps.store.tasks.mutateTask(
      scopeOf(actor),
      toTaskId(id),
      (locked) => ({
        newRuns: backfillTask(locked.task, { now, from, to }),
        result: (inserted) => inserted,
      }),
    );
    this.#deps.signals.wake();
    const runs = result.filter((r): r is Run => r !== null);
    return { runs: runs.map(runView), already_backfilled: result.length - runs.length };
  }

  async listRuns(actor: Actor, id: string, query: RunQuery): Promise<PageView<RunView>> {
    const task = await this.#find(actor, id);
    const page = await this.#deps.store.runs.listRuns(scopeOf(actor), task.id, query);
    return { items: page.items.map(runView), next_cursor: page.nextCursor };
  }

  async getRun(actor: Actor, id: string): Promise<RunView> {
    return runView(await this.#findRun(actor, id));
  }

  /** Cancels a run: a queued run at once; a launched one is asked to stop (SPEC 5.6). */
  async cancelRun(actor: Actor, id: string, now: Instant): Promise<RunView> {
    const found = await this.#findRun(actor, id);
    let owner = null as Task | null;
    const change = await this.#deps.store.runs.changeRun(found.id, {}, (run, task) => {
      owner = task;
      return requestRunCancel(run, now, runTaskContext(task));
    });
    const run = change?.run ?? found;
    if (change?.cancelTarget === true && owner !== null)
      this.#deps.signals.cancelRequested(run, owner);
    return runView(run);
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
    // An ended task (completed, failed, cancelled) fires no more; a paused one shows its schedule.
    if (isTerminalTaskStatus(task.status)) return { occurrences: [] };
    const from = task.decidedThrough > now ? task.decidedThrough : now;
    return { occurrences: describeOccurrences(task.schedule, from, count).map(occurrenceView) };
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
    const spec = scheduleFrom(input, now, calendars);
    return { occurrences: describeOccurrences(spec, now, count).map(occurrenceView) };
  }

  /**
   * Why the task did or did not fire around `at` (an RFC 3339 instant): the nominal times around it, the
   * decision of the last one (paging the history newest first, at most 5,000 rows) and what DST did.
   */
  async explain(actor: Actor, id: string, at: unknown, now: Instant): Promise<ExplanationView> {
    const instant = instantFrom(at, "at");
    const task = await this.#find(actor, id);
    const window = explainWindow(task, instant);
    const runs: Run[] = [];
    let cursor: string | undefined;
    let complete = false;
    while (runs.length < EXPLAIN_MAX_HISTORY_ROWS) {
      const page = await this.#deps.store.runs.listRuns(scopeOf(actor), task.id, {
        limit: EXPLAIN_PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      runs.push(...page.items);
      if (page.items.some((run) => historyReachedWindow(run, window, instant))) {
        complete = true;
        break;
      }
      if (page.nextCursor === null) {
        complete = true;
        break;
      }
      cursor = page.nextCursor;
    }
    return explanationView(explainAt({ task, at: instant, now, window, runs, complete }));
  }

  async #find(actor: Actor, id: string): Promise<Task> {
    const task = await this.#deps.store.tasks.findTask(scopeOf(actor), toTaskId(id));
    if (task === null) throw new NotFoundError("task", id);
    return task;
  }

  async #findRun(actor: Actor, id: string): Promise<Run> {
    const run = await this.#deps.store.runs.findRun(scopeOf(actor), id as RunId);
    if (run === null) throw new NotFoundError("run", id);
    return run;
  }

  async #mutate(
    actor: Actor,
    id: string,
    decide: (locked: { task: Task; activeRuns: readonly Run[] }) => CommandOutcome,
    expectedVersion?: number,
  ): Promise<Task> {
    const scope: OwnerScope = scopeOf(actor);
    const { task, cancelTargets } = await this.#deps.store.tasks.mutateTask(
      scope,
      toTaskId(id),
      (locked) => {
        const outcome = decide(locked);
        return {
          task: outcome.task,
          ...(expectedVersion === undefined ? {} : { expectedVersion }),
          newRuns: outcome.newRuns,
          runUpdates: outcome.runUpdates,
          result: () => outcome,
        };
      },
    );
    for (const run of cancelTargets) this.#deps.signals.cancelRequested(run, task);
    return task;
  }

  /** Handler names, agent servers and bound threads must exist before anything is written. */
  async #checkReferences(
    actor: Actor,
    changed: Partial<TaskUserFields>,
    merged: TaskUserFields,
  ): Promise<void> {
    const target = changed.target;
    if (
      target?.kind === "handler" &&
      this.#deps.handlerNames !== null &&
      !this.#deps.handlerNames.has(target.name)
    ) {
      throw ValidationError.of("target.name", `no handler named "${target.name}" is registered`);
    }
    if (
      target?.kind === "agent" &&
      this.#deps.agentServers !== null &&
      !this.#deps.agentServers.has(target.server)
    ) {
      throw ValidationError.of(
        "target.server",
        `no agent server named "${target.server}" is configured`,
      );
    }
    const context = merged.context;
    const moved = changed.context !== undefined || changed.target !== undefined;
    if (moved && context.mode === "reuse_thread") {
      const exists = await this.#deps.threads.threadExists(
        actor.owner,
        threadScopeOf(merged.target),
        context.threadId,
      );
      if (!exists) throw new NotFoundError("thread", context.threadId);
    }
  }

  #view(task: Task): TaskView {
    return taskView(task, this.#deps.signsWithTaskSecret ?? true);
  }

  #warnings(task: Task, now: Instant): string[] {
    const warnings = [...dstWarnings(task.schedule, now, WARNING_HORIZON_MS)];
    if (task.schedule.jitterMs > 0) {
      const first = task.nextRunAt;
      const second = first === null ? null : nextAfter(task.schedule, first);
      if (first !== null && second !== null && second - first <= task.schedule.jitterMs) {
        warnings.push(
          "jitter is larger than the time between occurrences: fires are capped before the next one",
        );
      }
    }
    return warnings;
  }
}
