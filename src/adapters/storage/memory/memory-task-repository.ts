/**
 * Tasks in memory: creation, scoped reads, owner commands and admission (memory-admission.ts), each one
 * atomic transaction over `MemoryTables`. The reference semantics of `TaskRepository` that the SQL stores
 * must match.
 */
import type { TaskCountCheck } from "../../../domain/ports/task-repository.js";
import { addedByOwner } from "../shared/added-by-owner.js";
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import { calendarStamps, changedStamps, stampsByOwner } from "../../../domain/calendar.js";
import { KeyTakenError, NotFoundError } from "../../../domain/errors.js";
import { decideMutation } from "../shared/task-mutation.js";
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import type { NewRun } from "../../../domain/new-run.js";
import type {
  AdmissionReport,
  LockedTask,
  MutateTaskOptions,
  TaskMutation,
  TaskRepository,
} from "../../../domain/ports/task-repository.js";
import type { OwnerScope, Page, TaskQuery } from "../../../domain/ports/queries.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import { threadScopeOf } from "../../../domain/target.js";
import type { Instant } from "../../../domain/time.js";
import { encodeSchedule } from "../../../domain/schedule-codec.js";
import type { TaskDefectField } from "../../../domain/task-defect.js";
import { decodeTaskFields, defectOf } from "../shared/stored-task-fields.js";
import { compareKeys, decodeCursor, pageOf } from "../shared/page-cursor.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { runRow, taskRow } from "./memory-rows.js";
import { checkMemoryStamps } from "./memory-calendar-repository.js";
import { isVisibleTo } from "./memory-scope.js";
import { ConstraintViolationError } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";
import { activeRunsOf, insertRun, MemoryAdmission, updateRun } from "./memory-admission.js";

/** Conflicts that mean "already written" when a command inserts runs: that run is not inserted. */
const REPEATABLE_KEYS: readonly string[] = ["runs_backfill_occurrence_uq", "runs_manual_key_uq"];

function taskKey(task: Task): CursorKey {
  return [task.createdAt, task.id];
}

/** The title contains `text` ignoring case (as SQLite's `lower`: ASCII letters), or the key is `text`. */
function matchesSearch(task: Task, text: string): boolean {
  return task.key === text || asciiLower(task.title).includes(asciiLower(text));
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function matches(task: Task, query: TaskQuery): boolean {
  if (query.status !== undefined && task.status !== query.status) return false;
  if (query.targetKind !== undefined && task.target.kind !== query.targetKind) return false;
  if (query.key !== undefined && task.key !== query.key) return false;
  if (query.group !== undefined && task.group !== query.group) return false;
  if (query.search !== undefined && !matchesSearch(task, query.search)) return false;
  const thread = query.thread;
  if (thread === undefined) return true;
  return (
    task.context.mode === "reuse_thread" &&
    task.context.threadId === thread.threadId &&
    (thread.threadScope === undefined ||
      threadScopeOf(task.target, task.owner) === thread.threadScope)
  );
}

export class MemoryTaskRepository implements TaskRepository {
  readonly #tables: MemoryTables;
  readonly #newId: () => string;
  readonly #admission: MemoryAdmission;
  /** What `overwriteColumn` wrote, by task: the raw text of each column it broke. */
  readonly #overwritten = new Map<TaskId, Partial<Record<TaskDefectField, string>>>();

  constructor(tables: MemoryTables, newId: () => string) {
    this.#tables = tables;
    this.#newId = newId;
    this.#admission = new MemoryAdmission(tables, newId);
  }

  insertTask(task: Task, quota?: TaskCountCheck): Promise<void> {
    return this.#tables.atomically(() => {
      this.#checkCounts([task], quota);
      checkMemoryStamps(this.#tables, task.owner, calendarStamps(task.schedule));
      try {
        this.#tables.insertTask(taskRow(task));
      } catch (error) {
        if (
          task.key !== null &&
          error instanceof ConstraintViolationError &&
          error.constraint === "tasks_key_uq"
        ) {
          throw new KeyTakenError(task.key, { cause: error });
        }
        throw error;
      }
    });
  }

  insertTasks(tasks: readonly Task[], quota?: TaskCountCheck): Promise<void> {
    return this.#tables.atomically(() => {
      this.#checkCounts(tasks, quota);
      for (const [owner, stamps] of stampsByOwner(tasks)) {
        checkMemoryStamps(this.#tables, owner, stamps);
      }
      for (const task of tasks) {
        try {
          this.#tables.insertTask(taskRow(task));
        } catch (error) {
          if (
            task.key !== null &&
            error instanceof ConstraintViolationError &&
            error.constraint === "tasks_key_uq"
          ) {
            throw new KeyTakenError(task.key, { cause: error });
          }
          throw error;
        }
      }
    });
  }

  /** The quota of each owner the insert adds to, inside the same atomic step. */
  #checkCounts(tasks: readonly Task[], quota: TaskCountCheck | undefined): void {
    if (quota === undefined) return;
    for (const [owner, adding] of addedByOwner(tasks)) {
      const existing = [...this.#tables.tasks()].filter(
        (task) => task.owner === owner && task.deletedAt === null,
      ).length;
      quota(owner, existing, adding);
    }
  }

  findTask(scope: OwnerScope, id: TaskId): Promise<Task | null> {
    return this.#tables.atomically(() => this.#visible(scope, id) ?? null);
  }

  countTasks(owner: OwnerId): Promise<number> {
    return this.#tables.atomically(
      () =>
        [...this.#tables.tasks()].filter((task) => task.owner === owner && task.deletedAt === null)
          .length,
    );
  }

  findTaskByKey(owner: OwnerId, key: string): Promise<Task | null> {
    return this.#tables.atomically(() => this.#tables.taskByKey(owner, key) ?? null);
  }

  listTasks(scope: OwnerScope, query: TaskQuery): Promise<Page<Task>> {
    return this.#tables.atomically(() => {
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
      const direction = query.newestFirst === true ? -1 : 1;
      const rows = [...this.#tables.tasks()]
        .filter((task) => task.deletedAt === null && isVisibleTo(scope, task.owner))
        .filter((task) => matches(task, query))
        .filter((task) => after === null || direction * compareKeys(taskKey(task), after) > 0)
        .sort((a, b) => direction * compareKeys(taskKey(a), taskKey(b)));
      return pageOf(rows, query.limit, taskKey);
    });
  }

  mutateTask<T>(
    scope: OwnerScope,
    id: TaskId,
    decide: (locked: LockedTask) => TaskMutation<T>,
    options: MutateTaskOptions = {},
  ): Promise<T> {
    return this.#tables.atomically(() => {
      const task = this.#visible(scope, id);
      if (task === undefined) throw new NotFoundError("task", id);
      const activeRuns = activeRunsOf(this.#tables, id);
      const recent = options.recentRuns;
      const locked: LockedTask = {
        task,
        activeRuns,
        ...(options.run === undefined ? {} : { run: this.#runOf(id, options.run) }),
        ...(recent === undefined
          ? {}
          : {
              recentRuns: [...this.#tables.runs()].filter(
                (run) =>
                  run.owner === task.owner &&
                  run.trigger === recent.trigger &&
                  run.queuedAt >= recent.since,
              ).length,
            }),
      };
      const mutation = decideMutation(locked, decide);
      if (mutation.task !== undefined) {
        const stamps = changedStamps(task.schedule, mutation.task.schedule);
        checkMemoryStamps(this.#tables, task.owner, stamps);
        this.#tables.putTask(taskRow({ ...mutation.task, id }));
      }
      const inserted = (mutation.newRuns ?? []).map((newRun) => this.#insertUnlessRepeated(newRun));
      for (const run of mutation.runUpdates ?? []) updateRun(this.#tables, run);
      return mutation.result(inserted);
    });
  }

  /** The task's run `id` as stored (a copy), or null. */
  #runOf(taskId: TaskId, id: RunId): Run | null {
    const run = this.#tables.run(id);
    return run === undefined || run.taskId !== taskId ? null : runRow(run);
  }

  /**
   * Replaces one stored JSON column of the task with `raw`, as a hand edit of a database row would, and
   * reads the row back as the SQL stores do (docs/operations.md#a-task-that-does-not-parse). The memory
   * store keeps decoded rows, so this is the one way one of its tasks can stop parsing: for tests.
   */
  overwriteColumn(id: TaskId, column: TaskDefectField, raw: string): Promise<void> {
    return this.#tables.atomically(() => {
      const task = this.#tables.task(id);
      if (task === undefined) throw new NotFoundError("task", id);
      // Columns overwritten before and still broken stay as they were written.
      const before = this.#overwritten.get(id) ?? {};
      const raws: Partial<Record<TaskDefectField, string>> = { [column]: raw };
      for (const item of task.defect?.fields ?? []) {
        const kept = before[item.field];
        if (kept !== undefined) raws[item.field] ??= kept;
      }
      this.#overwritten.set(id, raws);
      const stored = (field: TaskDefectField, value: unknown) => (): unknown =>
        JSON.parse(raws[field] ?? JSON.stringify(value));
      const fields = decodeTaskFields(
        {
          schedule: stored("schedule", encodeSchedule(task.schedule)),
          target: stored("target", task.target),
          context: stored("context", task.context),
          options: stored("options", task.options),
          metadata: stored("metadata", task.metadata),
        },
        task.createdAt,
      );
      this.#tables.putTask(
        taskRow({
          ...task,
          schedule: fields.schedule,
          target: fields.target,
          context: fields.context,
          options: fields.options,
          metadata: fields.metadata,
          defect: defectOf(fields, null),
        }),
      );
    });
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport> {
    return this.#admission.admitDueTasks(now, limit, decide);
  }

  nextDueAt(): Promise<Instant | null> {
    return this.#admission.nextDueAt();
  }

  #visible(scope: OwnerScope, id: TaskId): Task | undefined {
    const task = this.#tables.task(id);
    if (task === undefined || task.deletedAt !== null || !isVisibleTo(scope, task.owner)) {
      return undefined;
    }
    return task;
  }

  #insertUnlessRepeated(newRun: NewRun): Run | null {
    try {
      return insertRun(this.#tables, this.#newId, newRun);
    } catch (error) {
      if (error instanceof ConstraintViolationError && REPEATABLE_KEYS.includes(error.constraint)) {
        return null;
      }
      throw error;
    }
  }
}
