/**
 * Tasks in memory: creation, scoped reads, owner commands and admission, each one atomic transaction over
 * `MemoryTables`. The reference semantics of `TaskRepository` that the SQL stores must match.
 */
import type { TaskCountCheck } from "../../../domain/ports/task-repository.js";
import { addedByOwner } from "../shared/added-by-owner.js";
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import { calendarStamps, changedStamps, stampsByOwner } from "../../../domain/calendar.js";
import { KeyTakenError, NotFoundError } from "../../../domain/errors.js";
import { decideMutation } from "../shared/task-mutation.js";
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import { runId as toRunId } from "../../../domain/ids.js";
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
import { newRunRow, runRow, taskRow } from "./memory-rows.js";
import { admissionReport } from "../shared/admission-report.js";
import { checkMemoryStamps } from "./memory-calendar-repository.js";
import { isVisibleTo } from "./memory-scope.js";
import { ConstraintViolationError } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

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
    (thread.threadScope === undefined || threadScopeOf(task.target, task.owner) === thread.threadScope)
  );
}

/** Enabled, not deleted and not marked defective: what the SQL stores' due index holds. */
function isDueCandidate(task: Task): boolean {
  return (
    task.status === "enabled" &&
    task.deletedAt === null &&
    (task.defect === null || task.defect.detectedAt === null)
  );
}

function byQueueOrder(a: Run, b: Run): number {
  return compareKeys([a.queuedAt, a.id], [b.queuedAt, b.id]);
}

export class MemoryTaskRepository implements TaskRepository {
  readonly #tables: MemoryTables;
  readonly #newId: () => string;
  /** What `overwriteColumn` wrote, by task: the raw text of each column it broke. */
  readonly #overwritten = new Map<TaskId, Partial<Record<TaskDefectField, string>>>();

  constructor(tables: MemoryTables, newId: () => string) {
    this.#tables = tables;
    this.#newId = newId;
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
      const activeRuns = this.#activeRunsOf(id);
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
      for (const run of mutation.runUpdates ?? []) this.#updateRun(run);
      return mutation.result(inserted);
    });
  }

  /** The task's run `id` as stored (a copy), or null. */
  #runOf(taskId: TaskId, id: RunId): Run | null {
    const run = this.#tables.run(id);
    return run === undefined || run.taskId !== taskId ? null : runRow(run);
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport> {
    return this.#tables.atomically(() => {
      const read = [...this.#tables.tasks()]
        .filter((task) => isDueCandidate(task))
        .filter((task) => task.nextRunAt !== null && task.nextRunAt <= now)
        .sort((a, b) => compareKeys([a.nextRunAt ?? 0, a.id], [b.nextRunAt ?? 0, b.id]))
        .slice(0, Math.max(0, limit));
      const due = read.filter((task) => task.defect === null);
      const defective = read.flatMap((task) => {
        if (task.defect === null) return [];
        // Taken out of the due set, once (the SQL stores' `defect_at`).
        const marked = taskRow({ ...task, defect: { ...task.defect, detectedAt: now } });
        this.#tables.putTask(marked);
        return [marked];
      });
      const written = { tasks: 0, inserted: [] as Run[], cancellations: [] as Run[] };
      for (const task of due) {
        const activeRuns = this.#activeRunsOf(task.id);
        const write = decide(task, activeRuns);
        try {
          // A savepoint per task: an occurrence already decided rolls back this task's work only.
          const outcome = this.#tables.transaction(() => this.#admit(task, write));
          written.tasks++;
          written.inserted.push(...outcome.inserted);
          written.cancellations.push(...outcome.cancellations);
        } catch (error) {
          const decided =
            error instanceof ConstraintViolationError &&
            error.constraint === "runs_scheduled_occurrence_uq";
          if (!decided) throw error;
        }
      }
      return admissionReport(written.tasks, written.inserted, written.cancellations, defective);
    });
  }

  nextDueAt(): Promise<Instant | null> {
    return this.#tables.atomically(() => {
      let earliest: Instant | null = null;
      for (const task of this.#tables.tasks()) {
        if (!isDueCandidate(task) || task.nextRunAt === null) continue;
        if (earliest === null || task.nextRunAt < earliest) earliest = task.nextRunAt;
      }
      return earliest;
    });
  }

  /** Writes one task's admission: its decisions, its cancellations and its schedule fields only. */
  #admit(task: Task, write: AdmissionWrite): { inserted: Run[]; cancellations: Run[] } {
    const inserted = write.newRuns.map((newRun) => this.#insert(newRun));
    const cancellations = write.runUpdates.map((run) => this.#updateRun(run));
    const fields = write.fields;
    this.#tables.putTask(
      taskRow({
        ...task,
        status: fields.status,
        nextRunAt: fields.nextRunAt,
        decidedThrough: fields.decidedThrough,
        admittedCount: fields.admittedCount,
        lastError: fields.lastError ?? task.lastError,
      }),
    );
    return { inserted, cancellations: cancellations.filter((run) => run !== null) };
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

  #visible(scope: OwnerScope, id: TaskId): Task | undefined {
    const task = this.#tables.task(id);
    if (task === undefined || task.deletedAt !== null || !isVisibleTo(scope, task.owner)) {
      return undefined;
    }
    return task;
  }

  #activeRunsOf(id: TaskId): Run[] {
    return this.#tables.activeRuns(id).sort(byQueueOrder);
  }

  #insert(newRun: NewRun): Run {
    const row = newRunRow(newRun, toRunId(this.#newId()));
    this.#tables.insertRun(row);
    return row;
  }

  #insertUnlessRepeated(newRun: NewRun): Run | null {
    try {
      return this.#insert(newRun);
    } catch (error) {
      if (error instanceof ConstraintViolationError && REPEATABLE_KEYS.includes(error.constraint)) {
        return null;
      }
      throw error;
    }
  }

  /** Rewrites an existing run row (an UPDATE: a run that is not there is not created). */
  #updateRun(run: Run): Run | null {
    if (this.#tables.run(run.id) === undefined) return null;
    const row = runRow(run);
    this.#tables.putRun(row);
    return row;
  }
}
