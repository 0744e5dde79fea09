/**
 * The tasks' definitions as one store last read them, by task (docs/storage.md#the-claim-reads-narrow-rows):
 * the bookkeeping every store's definition cache shares. A definition is held with the task's `version`
 * and a stamp the database changes on every write of the task's definition row (PostgreSQL: the row's
 * `xmin`; SQLite: the `stamp` column of migration 20), so a definition is reused only for the row version
 * it was read from. Bounded: the least recently used definition is forgotten first.
 */
import type { Task } from "../../../domain/task.js";
import type { TaskDefectItem } from "../../../domain/task-defect.js";
import { OldestFirst } from "./oldest-first.js";

/**
 * A task's definition: what only owner commands write (its `tasks` row), decoded once for each version
 * of that row (docs/storage.md#the-claim-reads-narrow-rows); the rest of a `Task` is its `task_state` row.
 */
export type TaskDefinition = Omit<Task, TaskStateField>;

/** The fields of a task that come from its `task_state` row (`defect` joins its detection instant to the definition's). */
type TaskStateField =
  | "status"
  | "nextRunAt"
  | "decidedThrough"
  | "admittedCount"
  | "lastRunAt"
  | "lastRunId"
  | "runCount"
  | "lastError"
  | "version"
  | "defect";

/** A decoded definition and the JSON columns of it that did not parse (empty for a sound row). */
export interface DecodedDefinition {
  readonly definition: TaskDefinition;
  readonly defects: readonly TaskDefectItem[];
}

/** Definitions kept: a burst's tasks between their admission and their claim, and every recurring task of most fleets. */
export const TASK_DEFINITIONS_KEPT = 16_384;

interface Entry<D> {
  readonly version: number;
  readonly stamp: string | number;
  readonly decoded: D;
}

export class TaskDefinitionCache<D> {
  readonly #capacity: number;
  readonly #entries = new Map<string, Entry<D>>();
  readonly #oldest = new OldestFirst(this.#entries);
  #misses = 0;

  constructor(capacity = TASK_DEFINITIONS_KEPT) {
    this.#capacity = capacity;
  }

  /** Definitions read from the database because they were not held at their stamp (for tests and the bench). */
  get misses(): number {
    return this.#misses;
  }

  /** Definitions held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Counts `count` definitions a claim had to read again. */
  missed(count: number): void {
    this.#misses += count;
  }

  /** The definition of task `id` held at `version` and `stamp`, now the most recently used; else null. */
  held(id: string, version: number, stamp: string | number): D | null {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.version !== version || entry.stamp !== stamp) return null;
    // Used last: moved to the end, which is forgotten last.
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    return entry.decoded;
  }

  /** Keeps `decoded` as task `id`'s definition at `version` and `stamp`, in place of any other. */
  keep(id: string, version: number, stamp: string | number, decoded: D): void {
    this.#entries.delete(id);
    if (this.#entries.size >= this.#capacity) this.#oldest.forgetOldest();
    this.#entries.set(id, { version, stamp, decoded });
  }
}
