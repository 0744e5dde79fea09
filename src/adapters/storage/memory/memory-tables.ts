/**
 * The memory store's tables and the unique keys of the SQL schema (same names), with transactions: every
 * write inside `transaction` is journaled and undone if the function throws, so each store method is
 * atomic. JavaScript runs one method at a time, so a transaction holds every "lock" until it returns.
 */
import type { Calendar } from "../../../domain/calendar.js";
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import type { Run } from "../../../domain/run.js";
import { isActiveRunStatus } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Instant } from "../../../domain/time.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { MemoryRunHistory } from "./memory-run-history.js";
import { emptyUniqueIndex, keysGained } from "./memory-unique-keys.js";
import type { RunUniqueKey } from "./memory-unique-keys.js";

/**
 * Thrown when a write would break a unique key or a primary key: the memory store's equivalent of a
 * database's unique violation. The store's callers never see it for the conflicts the ports define as
 * outcomes (a repeated backfill or manual key, an occurrence already decided).
 */
export class ConstraintViolationError extends Error {
  override readonly name = "ConstraintViolationError";

  constructor(
    readonly constraint: RunUniqueKey | "tasks_pkey" | "tasks_key_uq" | "runs_pkey",
    detail: string,
  ) {
    super(`unique constraint ${constraint} violated: ${detail}`);
  }
}

/** A task's entry in `tasks_key_uq` (owner and key, while not deleted), or null when it has none. */
function taskKeyOf(task: Task | undefined): string | null {
  if (task === undefined || task.key === null || task.deletedAt !== null) return null;
  return `${task.owner}\u0000${task.key}`;
}

function calendarKey(owner: OwnerId, name: string): string {
  return `${owner}\u0000${name}`;
}

export interface ReplicaRow {
  readonly id: string;
  readonly startedAt: Instant;
  readonly heartbeatAt: Instant;
  readonly handlerNames: readonly string[] | null;
}

export class MemoryTables {
  readonly #tasks = new Map<TaskId, Task>();
  /** `tasks_key_uq`: by `owner NUL key`, the task holding it. */
  readonly #taskKeys = new Map<string, TaskId>();
  readonly #runs = new Map<RunId, Run>();
  /** The `target_kind` column of runs: the task's target kind when the run was written. */
  readonly #runTargetKinds = new Map<RunId, TargetKind>();
  readonly #history = new MemoryRunHistory();
  readonly #activeRuns = new Set<RunId>();
  /** Cancelled runs whose target was not told, holding their thread until their deadline. */
  readonly #heldRuns = new Set<RunId>();
  readonly #unique = emptyUniqueIndex();
  readonly #replicas = new Map<string, ReplicaRow>();
  /** By `owner NUL name`, the calendars table's primary key. */
  readonly #calendars = new Map<string, Calendar>();
  #journal: (() => void)[] | null = null;
  #closed = false;
  /** No terminal run finished before this (a lower bound), so purge can skip its scan. */
  #oldestFinishedAt = Number.POSITIVE_INFINITY;
  #rowsScanned = 0;

  /** Rows handed out by scans and index walks so far (lookups by key not counted). */
  get rowsScanned(): number {
    return this.#rowsScanned;
  }

  /** A lower bound of the terminal runs' `finished_at`. */
  get oldestFinishedAt(): number {
    return this.#oldestFinishedAt;
  }

  /** Set by a purge that looked at every terminal run. */
  set oldestFinishedAt(value: number) {
    this.#oldestFinishedAt = value;
  }

  /**
   * Runs `fn` atomically: if it throws, every write it made is undone. Nested calls are savepoints: a
   * nested failure undoes only the nested writes.
   */
  transaction<T>(fn: () => T): T {
    if (this.#closed) throw new Error("the memory store is closed");
    const outer = this.#journal;
    const journal = outer ?? [];
    const mark = journal.length;
    this.#journal = journal;
    try {
      return fn();
    } catch (error) {
      for (let i = journal.length - 1; i >= mark; i--) journal[i]?.();
      journal.length = mark;
      throw error;
    } finally {
      this.#journal = outer;
    }
  }

  /** `transaction` as a promise: a throw becomes a rejection. */
  atomically<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      resolve(this.transaction(fn));
    });
  }

  close(): void {
    this.#closed = true;
  }

  task(id: TaskId): Task | undefined {
    return this.#tasks.get(id);
  }

  /** The task (not deleted) of `owner` with `key` (an index lookup, not a scan). */
  taskByKey(owner: OwnerId, key: string): Task | undefined {
    const id = this.#taskKeys.get(`${owner}\u0000${key}`);
    return id === undefined ? undefined : this.#tasks.get(id);
  }

  tasks(): IterableIterator<Task> {
    this.#rowsScanned += this.#tasks.size;
    return this.#tasks.values();
  }

  run(id: RunId): Run | undefined {
    return this.#runs.get(id);
  }

  /** The kind of the task's target when the run was written. */
  runTargetKind(id: RunId): TargetKind | undefined {
    return this.#runTargetKinds.get(id);
  }

  runs(): IterableIterator<Run> {
    this.#rowsScanned += this.#runs.size;
    return this.#runs.values();
  }

  /** Every run of a task, oldest first (`scheduled_for, id`). */
  runsOf(taskId: TaskId): Run[] {
    return this.#history.idsOf(taskId).map((id) => this.#mustRun(id));
  }

  /** A task's runs newest first, from below `before` (exclusive) when given; read lazily. */
  *runsNewestFirst(taskId: TaskId, before: CursorKey | null): Generator<Run, void, undefined> {
    for (const id of this.#history.newestFirst(taskId, before)) yield this.#mustRun(id);
  }

  /** Queued, launching and running runs, of one task or of all. */
  activeRuns(taskId?: TaskId): Run[] {
    const all = [...this.#activeRuns].map((id) => this.#mustRun(id));
    return taskId === undefined ? all : all.filter((run) => run.taskId === taskId);
  }

  /**
   * Cancelled runs whose target was not told and whose `deadline_at` is still set: they hold their
   * thread (and, exclusive, task) until then (docs/semantics.md#cancellation).
   */
  heldRuns(): Run[] {
    return [...this.#heldRuns].map((id) => this.#mustRun(id));
  }

  /** The run holding a unique key, if any. */
  holder(constraint: RunUniqueKey, key: string): Run | undefined {
    const id = this.#unique[constraint].get(key);
    return id === undefined ? undefined : this.#runs.get(id);
  }

  replica(id: string): ReplicaRow | undefined {
    return this.#replicas.get(id);
  }

  replicas(): IterableIterator<ReplicaRow> {
    return this.#replicas.values();
  }

  calendar(owner: OwnerId, name: string): Calendar | undefined {
    return this.#calendars.get(calendarKey(owner, name));
  }

  calendars(): IterableIterator<Calendar> {
    this.#rowsScanned += this.#calendars.size;
    return this.#calendars.values();
  }

  /** Writes (or, with `undefined`, deletes) the calendar row of `owner` and `name`. */
  putCalendar(owner: OwnerId, name: string, row: Calendar | undefined): void {
    const key = calendarKey(owner, name);
    const previous = this.#calendars.get(key);
    this.#record(() => {
      if (previous === undefined) this.#calendars.delete(key);
      else this.#calendars.set(key, previous);
    });
    if (row === undefined) this.#calendars.delete(key);
    else this.#calendars.set(key, row);
  }

  insertTask(task: Task): void {
    if (this.#tasks.has(task.id)) {
      throw new ConstraintViolationError("tasks_pkey", `task ${task.id} exists`);
    }
    this.putTask(task);
  }

  /** Writes a task row, refusing it (before any change) when its key is another task's. */
  putTask(task: Task): void {
    const key = taskKeyOf(task);
    const holder = key === null ? undefined : this.#taskKeys.get(key);
    if (holder !== undefined && holder !== task.id) {
      throw new ConstraintViolationError(
        "tasks_key_uq",
        `task ${task.id} has the key of task ${holder}`,
      );
    }
    this.#setTask(task.id, task);
  }

  deleteTask(id: TaskId): void {
    this.#setTask(id, undefined);
  }

  insertRun(run: Run): void {
    if (this.#runs.has(run.id)) {
      throw new ConstraintViolationError("runs_pkey", `run ${run.id} exists`);
    }
    this.putRun(run);
  }

  /** Writes a run row, refusing it (before any change) when it breaks a unique key. */
  putRun(run: Run): void {
    // A key the run held already is held by it (the indexes follow the rows), so only new ones can clash.
    for (const [constraint, key] of keysGained(this.#runs.get(run.id), run)) {
      const holder = this.#unique[constraint].get(key);
      if (holder !== undefined && holder !== run.id) {
        throw new ConstraintViolationError(
          constraint,
          `run ${run.id} conflicts with run ${holder}`,
        );
      }
    }
    this.#setRun(run.id, run);
  }

  deleteRun(id: RunId): void {
    this.#setRun(id, undefined);
  }

  putReplica(row: ReplicaRow): void {
    const previous = this.#replicas.get(row.id);
    this.#record(() => {
      if (previous === undefined) this.#replicas.delete(row.id);
      else this.#replicas.set(row.id, previous);
    });
    this.#replicas.set(row.id, row);
  }

  #record(undo: () => void): void {
    if (this.#journal === null) throw new Error("memory store: a write outside a transaction");
    this.#journal.push(undo);
  }

  /** A run an index names (scans only). */
  #mustRun(id: RunId): Run {
    this.#rowsScanned++;
    const run = this.#runs.get(id);
    if (run === undefined) throw new Error(`memory store: index names a missing run ${id}`);
    return run;
  }

  #setTask(id: TaskId, next: Task | undefined): void {
    const previous = this.#tasks.get(id);
    this.#record(() => {
      this.#writeTask(id, previous);
    });
    this.#writeTask(id, next);
  }

  #writeTask(id: TaskId, next: Task | undefined): void {
    const before = taskKeyOf(this.#tasks.get(id));
    const after = taskKeyOf(next);
    if (before !== null && before !== after) this.#taskKeys.delete(before);
    if (after !== null) this.#taskKeys.set(after, id);
    if (next === undefined) this.#tasks.delete(id);
    else this.#tasks.set(id, next);
  }

  #setRun(id: RunId, next: Run | undefined): void {
    const previous = this.#runs.get(id);
    this.#record(() => {
      this.#writeRun(id, previous);
    });
    this.#writeRun(id, next);
  }

  /** Replaces a run row and keeps every index in step; no checks (they ran before). */
  #writeRun(id: RunId, next: Run | undefined): void {
    const previous = this.#runs.get(id);
    if (previous !== undefined) this.#dropKeys(id, previous, next);
    if (next === undefined) {
      this.#runs.delete(id);
      this.#activeRuns.delete(id);
      this.#runTargetKinds.delete(id);
      this.#heldRuns.delete(id);
      return;
    }
    const kind = this.#tasks.get(next.taskId)?.target.kind;
    if (previous === undefined && kind !== undefined) this.#runTargetKinds.set(id, kind);
    if (next.status === "cancelled" && next.deadlineAt !== null) this.#heldRuns.add(id);
    else this.#heldRuns.delete(id);
    this.#runs.set(id, next);
    for (const [constraint, key] of keysGained(previous, next))
      this.#unique[constraint].set(key, id);
    if (
      previous === undefined ||
      previous.taskId !== next.taskId ||
      previous.scheduledFor !== next.scheduledFor
    ) {
      this.#history.add(next.taskId, next.scheduledFor, id);
    }
    if (isActiveRunStatus(next.status)) this.#activeRuns.add(id);
    else {
      this.#activeRuns.delete(id);
      if (next.finishedAt !== null && next.finishedAt < this.#oldestFinishedAt) {
        this.#oldestFinishedAt = next.finishedAt;
      }
    }
  }

  /** Removes from the indexes what `previous` held and `next` (the same run's new row, if any) does not. */
  #dropKeys(id: RunId, previous: Run, next: Run | undefined): void {
    const dropped =
      next === undefined ? keysGained(undefined, previous) : keysGained(next, previous);
    for (const [constraint, key] of dropped) this.#unique[constraint].delete(key);
    if (
      next === undefined ||
      previous.taskId !== next.taskId ||
      previous.scheduledFor !== next.scheduledFor
    ) {
      this.#history.remove(previous.taskId, previous.scheduledFor, id);
    }
  }
}

/** A run's task. */
export function taskOfRun(tables: MemoryTables, run: Run): Task {
  const task = tables.task(run.taskId);
  // A task row outlives its runs (purge deletes the runs first), so a run always finds its task.
  if (task === undefined) throw new Error(`memory store: run ${run.id} has no task ${run.taskId}`);
  return task;
}
