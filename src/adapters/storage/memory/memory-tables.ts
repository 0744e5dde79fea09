/**
 * The memory store's tables and the unique keys of the SQL schema (same names), with transactions: every
 * write inside `transaction` is journaled and undone if the function throws, so each store method is
 * atomic. JavaScript runs one method at a time, so a transaction holds every "lock" until it returns.
 */
import { threadKey } from "../../../domain/claim.js";
import type { RunId, TaskId } from "../../../domain/ids.js";
import type { Run } from "../../../domain/run.js";
import { holdsSlot, isActiveRunStatus } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";

/** The unique keys of the runs table, named as in the SQL schema. */
export const RUN_UNIQUE_KEYS = [
  "runs_scheduled_occurrence_uq",
  "runs_backfill_occurrence_uq",
  "runs_manual_key_uq",
  "runs_task_slot_uq",
  "runs_thread_slot_uq",
] as const;
export type RunUniqueKey = (typeof RUN_UNIQUE_KEYS)[number];

/**
 * Thrown when a write would break a unique key or a primary key: the memory store's equivalent of a
 * database's unique violation. The store's callers never see it for the conflicts the ports define as
 * outcomes (a repeated backfill or manual key, an occurrence already decided).
 */
export class ConstraintViolationError extends Error {
  override readonly name = "ConstraintViolationError";

  constructor(
    readonly constraint: RunUniqueKey | "tasks_pkey" | "runs_pkey",
    detail: string,
  ) {
    super(`unique constraint ${constraint} violated: ${detail}`);
  }
}

export interface ReplicaRow {
  readonly id: string;
  readonly startedAt: Instant;
  readonly heartbeatAt: Instant;
}

const SEPARATOR = "\u0000";

function uniqueKeysOf(run: Run): [RunUniqueKey, string][] {
  const keys: [RunUniqueKey, string][] = [];
  const occurrence = `${run.taskId}${SEPARATOR}${run.scheduledFor}`;
  switch (run.trigger) {
    case "scheduled":
      keys.push(["runs_scheduled_occurrence_uq", occurrence]);
      break;
    case "backfill":
      keys.push(["runs_backfill_occurrence_uq", occurrence]);
      break;
    case "manual":
      keys.push(["runs_manual_key_uq", manualKey(run.taskId, run.idempotencyKey)]);
      break;
  }
  if (holdsSlot(run.status)) {
    if (run.exclusive) keys.push(["runs_task_slot_uq", run.taskId]);
    keys.push(["runs_thread_slot_uq", threadKey(run.threadScope, run.threadId)]);
  }
  return keys;
}

function indexKey(constraint: RunUniqueKey, key: string): string {
  return `${constraint}${SEPARATOR}${key}`;
}

export class MemoryTables {
  readonly #tasks = new Map<TaskId, Task>();
  readonly #runs = new Map<RunId, Run>();
  readonly #runsByTask = new Map<TaskId, Set<RunId>>();
  readonly #activeRuns = new Set<RunId>();
  readonly #unique = new Map<string, RunId>();
  readonly #replicas = new Map<string, ReplicaRow>();
  #journal: (() => void)[] | null = null;
  #closed = false;
  /** No terminal run finished before this (a lower bound), so purge can skip its scan. */
  #oldestFinishedAt = Number.POSITIVE_INFINITY;

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

  tasks(): IterableIterator<Task> {
    return this.#tasks.values();
  }

  run(id: RunId): Run | undefined {
    return this.#runs.get(id);
  }

  runs(): IterableIterator<Run> {
    return this.#runs.values();
  }

  runsOf(taskId: TaskId): Run[] {
    const ids = this.#runsByTask.get(taskId) ?? new Set<RunId>();
    return [...ids].map((id) => this.#mustRun(id));
  }

  /** Queued, launching and running runs, of one task or of all. */
  activeRuns(taskId?: TaskId): Run[] {
    const all = [...this.#activeRuns].map((id) => this.#mustRun(id));
    return taskId === undefined ? all : all.filter((run) => run.taskId === taskId);
  }

  /** The run holding a unique key, if any. */
  holder(constraint: RunUniqueKey, key: string): Run | undefined {
    const id = this.#unique.get(indexKey(constraint, key));
    return id === undefined ? undefined : this.#runs.get(id);
  }

  replica(id: string): ReplicaRow | undefined {
    return this.#replicas.get(id);
  }

  insertTask(task: Task): void {
    if (this.#tasks.has(task.id)) {
      throw new ConstraintViolationError("tasks_pkey", `task ${task.id} exists`);
    }
    this.putTask(task);
  }

  putTask(task: Task): void {
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
    for (const [constraint, key] of uniqueKeysOf(run)) {
      const holder = this.#unique.get(indexKey(constraint, key));
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

  #mustRun(id: RunId): Run {
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
    if (previous !== undefined) {
      for (const [constraint, key] of uniqueKeysOf(previous)) {
        this.#unique.delete(indexKey(constraint, key));
      }
      const ofPreviousTask = this.#runsByTask.get(previous.taskId);
      ofPreviousTask?.delete(id);
      if (ofPreviousTask?.size === 0) this.#runsByTask.delete(previous.taskId);
      this.#activeRuns.delete(id);
      this.#runs.delete(id);
    }
    if (next === undefined) return;
    this.#runs.set(id, next);
    for (const [constraint, key] of uniqueKeysOf(next)) {
      this.#unique.set(indexKey(constraint, key), id);
    }
    let ofTask = this.#runsByTask.get(next.taskId);
    if (ofTask === undefined) {
      ofTask = new Set();
      this.#runsByTask.set(next.taskId, ofTask);
    }
    ofTask.add(id);
    if (isActiveRunStatus(next.status)) this.#activeRuns.add(id);
    else if (next.finishedAt !== null && next.finishedAt < this.#oldestFinishedAt) {
      this.#oldestFinishedAt = next.finishedAt;
    }
  }
}

/** The key of a manual run in `runs_manual_key_uq`. */
export function manualKey(taskId: TaskId, idempotencyKey: string): string {
  return `${taskId}${SEPARATOR}${idempotencyKey}`;
}
