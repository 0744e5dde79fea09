/**
 * Batch reads and writes of run rows shared by the task and run repositories: many rows per statement,
 * through arrays and `unnest`.
 */
import { runId, threadId } from "../../../domain/ids.js";
import type { TaskId } from "../../../domain/ids.js";
import type { NewRun } from "../../../domain/new-run.js";
import { ACTIVE_RUN_STATUSES } from "../../../domain/run.js";
import type { Run } from "../../../domain/run.js";
import type { PostgresQueryable } from "./postgres-pool.js";
import { RUN_COLUMNS, record, runFromRow, runValues, text } from "./postgres-rows.js";
import type { SchemaName } from "./postgres-schema-name.js";
import {
  columnArrays,
  literalList,
  selectList,
  unnestInsert,
  unnestUpdate,
} from "./postgres-sql.js";

/** Which unique key a batch insert tolerates: a conflicting row is dropped, not an error. */
export type InsertConflict = "none" | "manual_key" | "backfill_occurrence" | "scheduled_occurrence";

const ON_CONFLICT: Readonly<Record<InsertConflict, string>> = {
  none: "",
  manual_key: " ON CONFLICT (task_id, idempotency_key) WHERE trigger = 'manual' DO NOTHING",
  backfill_occurrence:
    " ON CONFLICT (task_id, scheduled_for) WHERE trigger = 'backfill' DO NOTHING",
  scheduled_occurrence:
    " ON CONFLICT (task_id, scheduled_for) WHERE trigger = 'scheduled' DO NOTHING",
};

/** The run a new row becomes: its minted id, and a fresh thread (its own id) when none was bound. */
export function materializeRun(newRun: NewRun, id: string): Run {
  return { ...newRun, id: runId(id), threadId: newRun.threadId ?? threadId(id) };
}

/** SQL for one schema, built once. */
export class RunSql {
  readonly table: string;
  readonly columns: string;
  readonly #insert: string;
  readonly #update: string;
  readonly #active: string;

  constructor(schema: SchemaName) {
    this.table = `${schema.quoted}.runs`;
    this.columns = selectList(RUN_COLUMNS, "r");
    this.#insert = unnestInsert(this.table, RUN_COLUMNS);
    this.#update = unnestUpdate(this.table, RUN_COLUMNS);
    this.#active =
      `SELECT ${this.columns} FROM ${this.table} AS r ` +
      `WHERE r.task_id = ANY($1::text[]) AND r.status IN (${literalList(ACTIVE_RUN_STATUSES)}) ` +
      `ORDER BY r.queued_at, r.id FOR UPDATE`;
  }

  /** Inserts `runs` in one statement; returns the ids written (all of them unless `conflict` dropped some). */
  async insert(
    db: PostgresQueryable,
    runs: readonly Run[],
    conflict: InsertConflict = "none",
  ): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const result = await db.query(
      `${this.#insert}${ON_CONFLICT[conflict]} RETURNING id`,
      columnArrays(RUN_COLUMNS, runs.map(runValues)),
    );
    return new Set(result.rows.map((row) => text(record(row), "id")));
  }

  /** Rewrites whole rows (read under a lock); `where` adds conditions on the current row `t`. */
  async rewrite(db: PostgresQueryable, runs: readonly Run[], where = ""): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const result = await db.query(
      `${this.#update}${where === "" ? "" : ` AND ${where}`} RETURNING t.id`,
      columnArrays(RUN_COLUMNS, runs.map(runValues)),
    );
    return new Set(result.rows.map((row) => text(record(row), "id")));
  }

  /** The active runs of `taskIds`, locked, in FIFO order. */
  async lockActive(db: PostgresQueryable, taskIds: readonly TaskId[]): Promise<Run[]> {
    if (taskIds.length === 0) return [];
    const result = await db.query(this.#active, [taskIds]);
    return result.rows.map(runFromRow);
  }
}
