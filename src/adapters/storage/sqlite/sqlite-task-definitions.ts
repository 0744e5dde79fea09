/**
 * The tasks' definitions as this store last read them (docs/storage.md#the-claim-reads-narrow-rows), as
 * PostgreSQL keeps them: a claim reads each chosen run's task state only, with its task's `version` and
 * definition `stamp` (migration 20), and takes the definition from here; only the definitions not held at
 * that stamp are read whole, in one statement. Admission, which reads whole task rows, decodes each
 * definition once per stamp and leaves it for the claim that follows. Every read here runs inside the
 * caller's transaction, so a task's state and its definition are of one snapshot.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { Task } from "../../../domain/task.js";
import type { DecodedDefinition } from "../shared/task-definition-cache.js";
import { TaskDefinitionCache, TASK_DEFINITIONS_KEPT } from "../shared/task-definition-cache.js";
import type { SqliteDatabase } from "./sqlite-database.js";
import { taskDefinitionFromRow, taskWithState } from "./sqlite-rows.js";
import type { TaskRow, TaskStateRow } from "./sqlite-rows.js";
import { taskReadRowOf } from "./sqlite-row-shapes.js";
import { RowReader, TASK_READ_COLUMNS, TASK_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";

/** A task's state row with its id, `version` and definition `stamp`: what a claim reads of a task. */
interface StampedStateRow extends TaskStateRow {
  readonly id: string;
  readonly stamp: number;
}

const STAMPED_STATE_COLUMNS: readonly (keyof StampedStateRow)[] = [
  "id",
  "version",
  "stamp",
  "status",
  "next_run_at",
  "decided_through",
  "admitted_count",
  "last_run_at",
  "last_run_id",
  "last_error",
  "run_count",
  "defect_at",
];

/** A stamped state row from its values in `STAMPED_STATE_COLUMNS` order (sqlite-row-shapes.ts says why). */
function stampedStateRowOf(v: readonly unknown[]): StampedStateRow {
  return {
    id: v[0],
    version: v[1],
    stamp: v[2],
    status: v[3],
    next_run_at: v[4],
    decided_through: v[5],
    admitted_count: v[6],
    last_run_at: v[7],
    last_run_id: v[8],
    last_error: v[9],
    run_count: v[10],
    defect_at: v[11],
  } as StampedStateRow;
}

export class SqliteTaskDefinitions {
  readonly #secrets: SecretSealer;
  readonly #cache: TaskDefinitionCache<DecodedDefinition>;
  /** The stamped state rows of a JSON array of task ids, each probed by primary key in both tables. */
  readonly #states: RowReader<[string], StampedStateRow>;
  /** Whole task rows by a JSON array of ids. */
  readonly #tasks: RowReader<[string], TaskRow>;

  constructor(db: SqliteDatabase, secrets: SecretSealer, capacity = TASK_DEFINITIONS_KEPT) {
    this.#secrets = secrets;
    this.#cache = new TaskDefinitionCache(capacity);
    this.#states = new RowReader(
      db,
      `SELECT t.id, t.version, t.stamp, s.status, s.next_run_at, s.decided_through, s.admitted_count,
              s.last_run_at, s.last_run_id, s.last_error, s.run_count, s.defect_at
         FROM tasks t JOIN task_state s ON s.task_id = t.id
        WHERE t.id IN (SELECT value FROM json_each(?))`,
      STAMPED_STATE_COLUMNS,
      stampedStateRowOf,
    );
    this.#tasks = new RowReader(
      db,
      `${TASK_SELECT} WHERE id IN (SELECT value FROM json_each(?))`,
      TASK_READ_COLUMNS,
      taskReadRowOf,
    );
  }

  /** Definitions read whole because they were not held at their stamp (for tests and the bench). */
  get misses(): number {
    return this.#cache.misses;
  }

  /** Definitions held. */
  get size(): number {
    return this.#cache.size;
  }

  /** A whole task row (`TASK_SELECT`): its definition reused when held at the row's stamp, else decoded and kept. */
  taskFromRow(row: TaskRow): Task {
    const stamp = row.stamp ?? -1;
    let decoded = this.#cache.held(row.id, row.version, stamp);
    if (decoded === null) {
      decoded = taskDefinitionFromRow(row, this.#secrets);
      this.#cache.keep(row.id, row.version, stamp, decoded);
    }
    return taskWithState(decoded, row);
  }

  /**
   * The tasks of `ids`, by id: each task's state read narrow and its definition taken from the cache at
   * the state row's stamp; the definitions not held read whole in one statement. A task not found is
   * absent from the map.
   */
  tasksOf(ids: readonly string[]): Map<string, Task> {
    const tasks = new Map<string, Task>();
    if (ids.length === 0) return tasks;
    let missing: string[] | null = null;
    for (const row of this.#states.all(JSON.stringify(ids))) {
      const decoded = this.#cache.held(row.id, row.version, row.stamp);
      if (decoded === null) (missing ??= []).push(row.id);
      else tasks.set(row.id, taskWithState(decoded, row));
    }
    if (missing !== null) {
      this.#cache.missed(missing.length);
      for (const row of this.#tasks.all(JSON.stringify(missing))) {
        tasks.set(row.id, this.taskFromRow(row));
      }
    }
    return tasks;
  }
}

/** A run's task, read whole by id (its definition from `definitions`), kept in `cache` for the caller's batch. */
export function taskOfRun(
  statements: SqliteStatements,
  definitions: SqliteTaskDefinitions,
  id: string,
  cache: Map<string, Task>,
): Task {
  const known = cache.get(id);
  if (known !== undefined) return known;
  const row = statements.taskById.get(id);
  // The foreign key keeps a task row for every run (purge deletes a task's runs with it).
  if (row === undefined) throw new Error(`sqlite store: no task ${id} for its run`);
  const task = definitions.taskFromRow(row);
  cache.set(id, task);
  return task;
}
