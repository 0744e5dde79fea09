/**
 * The tasks' definitions as this store last read them (docs/storage.md#the-claim-reads-narrow-rows): a
 * claim reads each run's task state only, with the stamp of its task's definition, and takes the
 * definition from here; only the definitions it does not hold at that stamp are read, in one statement.
 * Admission, which reads whole task rows, decodes each definition once per stamp and leaves it here for
 * the claim that follows.
 *
 * The stamp is the task's `version` (which counts changes to the fields a user owns) with the `xmin` of its
 * `tasks` row: a secret's rotation and a deletion write the row without a new version, and any write of
 * the row gives it a new `xmin`, so a definition is never taken for a row version it was not read from.
 * Bounded: the least recently used definition is forgotten first (the bookkeeping shared with SQLite,
 * task-definition-cache.ts).
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import { TaskDefinitionCache, TASK_DEFINITIONS_KEPT } from "../shared/task-definition-cache.js";
import type { Task } from "../../../domain/task.js";
import type { PostgresContext } from "./postgres-context.js";
import { taskSource } from "./postgres-context.js";
import type { PostgresClient, PostgresStatement } from "./postgres-pool.js";
import {
  calendarItemsColumn,
  integer,
  record,
  taskDefinitionFromRow,
  taskSelectList,
  taskStateNames,
  taskWithState,
  text,
} from "./postgres-rows.js";
import type { DecodedDefinition, TaskStateNames } from "./postgres-rows.js";
import { prepared } from "./postgres-sql.js";

/** The column a statement names a task row's `xmin` by, after its prefix. */
export const DEFINITION_STAMP = "def_stamp";

const PLAIN_STATE = taskStateNames("");

export class TaskDefinitions {
  readonly #secrets: SecretSealer;
  readonly #cache: TaskDefinitionCache<DecodedDefinition>;
  readonly #byIds: PostgresStatement;

  constructor(
    ctx: Pick<PostgresContext, "secrets" | "tasksTable" | "taskStateTable"> & {
      /** Joined into every definition read, so that no definition kept holds an unread calendar. */
      readonly calendarVersionsTable: string;
    },
    capacity = TASK_DEFINITIONS_KEPT,
  ) {
    this.#secrets = ctx.secrets;
    this.#cache = new TaskDefinitionCache(capacity);
    // Each task by primary key from a lateral subquery (`OFFSET 0`): probed once per id whatever the
    // statistics say.
    this.#byIds = prepared(
      `SELECT d.* FROM unnest($1::text[]) AS w(id) CROSS JOIN LATERAL` +
        ` (SELECT ${taskSelectList("k", "v")}, k.xmin::text AS ${DEFINITION_STAMP},` +
        // The calendar versions the schedule names (docs/storage.md#calendar-versions): a kept
        // definition is admission's too, so it is never one whose calendars were not read.
        ` ${calendarItemsColumn(ctx.calendarVersionsTable, "k")}` +
        ` FROM ${taskSource(ctx, "k", "v")} WHERE k.id = w.id OFFSET 0) AS d`,
    );
  }

  /** Definitions read from the database because they were not held at their stamp (for tests and the bench). */
  get misses(): number {
    return this.#cache.misses;
  }

  /** Definitions held. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * A whole task row (`taskSelectList` unprefixed, with `DEFINITION_STAMP`): its definition is reused
   * when held at the row's stamp, else decoded and kept.
   */
  taskFromRow(value: unknown): Task {
    const row = record(value);
    const id = text(row, "id");
    const version = integer(row, "version");
    const stamp = text(row, DEFINITION_STAMP);
    let decoded = this.#cache.held(id, version, stamp);
    if (decoded === null) {
      decoded = taskDefinitionFromRow(row, this.#secrets);
      this.#cache.keep(id, version, stamp, decoded);
    }
    return taskWithState(decoded, row, PLAIN_STATE);
  }

  /**
   * The tasks of state rows (each with its task's id under `idColumn`, its state under `names` and its
   * stamp under `stampColumn`), in order: definitions held at their stamp are reused, the others read in
   * one statement on `client`. A task whose definition changed between the two reads is returned as that
   * statement read it (state and definition both newer than the state row).
   */
  async tasksOf(
    client: PostgresClient,
    rows: readonly Record<string, unknown>[],
    columns: {
      readonly idColumn: string;
      readonly stampColumn: string;
      readonly names: TaskStateNames;
    },
  ): Promise<Task[]> {
    const heldFor = (row: Record<string, unknown>, id: string): DecodedDefinition | null =>
      this.#cache.held(id, integer(row, columns.names.version), text(row, columns.stampColumn));
    const tasks = new Array<Task | null>(rows.length);
    let missing: Set<string> | null = null;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Record<string, unknown>;
      const id = text(row, columns.idColumn);
      const decoded = heldFor(row, id);
      if (decoded === null) {
        (missing ??= new Set()).add(id);
        tasks[i] = null;
      } else {
        tasks[i] = taskWithState(decoded, row, columns.names);
      }
    }
    if (missing !== null) {
      this.#cache.missed(missing.size);
      const read = new Map<string, Task>();
      for (const row of (await client.query(this.#byIds, [[...missing]])).rows) {
        const task = this.taskFromRow(row);
        read.set(task.id, task);
      }
      for (let i = 0; i < rows.length; i++) {
        if (tasks[i] !== null) continue;
        const row = rows[i] as Record<string, unknown>;
        const id = text(row, columns.idColumn);
        // The read above filled the cache: a definition it read newer than this state row is not held.
        const decoded = heldFor(row, id);
        const task = decoded === null ? read.get(id) : taskWithState(decoded, row, columns.names);
        // Its task row is kept until its runs are purged: a run read has its task.
        if (task === undefined)
          throw new TypeError(`malformed row: task ${id} of a claimed run not found`);
        tasks[i] = task;
      }
    }
    return tasks as Task[];
  }
}
