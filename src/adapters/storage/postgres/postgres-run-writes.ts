/**
 * Batch reads and writes of run rows shared by the task and run repositories: many rows per statement,
 * through arrays and `unnest`.
 */
import type { TaskId } from "../../../domain/ids.js";
import { ACTIVE_RUN_STATUSES } from "../../../domain/run.js";
import type { Run } from "../../../domain/run.js";
import type { TargetKind } from "../../../domain/target.js";
import { RUN_STATE_FIELDS } from "../shared/run-change-batch.js";
import type { PostgresQueryable, PostgresStatement } from "./postgres-pool.js";
import { RUN_COLUMNS, record, runFromRow, runValues, text } from "./postgres-rows.js";
import type { SchemaName } from "./postgres-schema-name.js";
import {
  columnArrays,
  literalList,
  prepared,
  selectList,
  textArray,
  unnestInsert,
  unnestUpdate,
} from "./postgres-sql.js";
import type { Column } from "./postgres-sql.js";

/** Which unique key a batch insert tolerates: a conflicting row is dropped, not an error. */
export type InsertConflict = "none" | "manual_key" | "backfill_occurrence" | "scheduled_occurrence";

/**
 * The third column of `runs_occurrence_uq` (migration 34) for the run row `alias` (none: the table's
 * own columns): the trigger as one letter, NULL for a manual run (so never refused there).
 */
export function occurrenceTrigger(alias = ""): string {
  const trigger = alias === "" ? "trigger" : `${alias}.trigger`;
  return `(CASE ${trigger} WHEN 'scheduled' THEN 's' WHEN 'backfill' THEN 'b' END)`;
}

/** A scheduled or backfilled run's occurrence key: the task, the instant and the trigger's letter. */
const OCCURRENCE_KEY = `(task_id, scheduled_for, ${occurrenceTrigger()})`;

const ON_CONFLICT: Readonly<Record<InsertConflict, string>> = {
  none: "",
  manual_key: " ON CONFLICT (task_id, idempotency_key) WHERE trigger = 'manual' DO NOTHING",
  backfill_occurrence: ` ON CONFLICT ${OCCURRENCE_KEY} DO NOTHING`,
  scheduled_occurrence: ` ON CONFLICT ${OCCURRENCE_KEY} DO NOTHING`,
};

/**
 * A new run's columns: the run's, and its task's target kind, copied from the task the writer holds (for
 * the listing across tasks, docs/storage.md#runs-across-tasks). Passed in rather than read from `tasks`
 * in the statement: a subquery per row cost about 6 us a run (measured on 100,000-run inserts).
 */
const INSERT_COLUMNS: readonly Column[] = [...RUN_COLUMNS, { name: "target_kind", type: "text" }];

/** The columns a run change writes (`RUN_STATE_FIELDS`), after the id: never the identity fields. */
export const RUN_STATE_COLUMNS: readonly Column[] = ["id", ...RUN_STATE_FIELDS].map((field) => {
  const name = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const found = RUN_COLUMNS.find((c) => c.name === name);
  if (found === undefined) throw new TypeError(`no run column for ${field}`);
  return found;
});

/**
 * A run's values for `RUN_STATE_COLUMNS`, in their order: the values `runValues` has for them, without
 * making the whole row (whose derived idempotency key is built to be compared, and a state write never
 * sends it). `test/adapters/storage/postgres/postgres-run-state-values.test.ts` holds the two together.
 */
export function runStateValues(run: Run): unknown[] {
  return [
    run.id,
    run.status,
    run.reason,
    run.attempt,
    run.failures,
    run.notBefore,
    run.claimToken,
    run.claimExpiresAt,
    run.claimedBy,
    run.targetRunId,
    run.launchedAt,
    run.deadlineAt,
    run.finishedAt,
    run.latenessMs,
    run.late,
    run.cancelRequestedAt,
    run.error,
    run.result === null ? null : JSON.stringify(run.result),
  ];
}

/**
 * A `WITH ...` written in front of a run write, in the same statement: its parameters are numbered after
 * the write's own (`stateParameterCount` of them).
 */
export interface StatementPrefix {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** SQL for one schema, built once. */
export class RunSql {
  /** How many parameters `writeState` sends before a prefix's. */
  readonly stateParameterCount = RUN_STATE_COLUMNS.length;
  /** How many parameters `insert` sends before a prefix's. */
  readonly insertParameterCount = INSERT_COLUMNS.length;
  readonly table: string;
  /** The schema, quoted, for the run tables beside `runs` (`run_ready`, `claim_slots`). */
  readonly schema: string;
  readonly columns: string;
  readonly #insert: string;
  readonly #update: string;
  readonly #active: string;
  readonly #writeState: string;
  readonly #statements = new Map<string, PostgresStatement>();

  constructor(schema: SchemaName) {
    this.table = `${schema.quoted}.runs`;
    this.schema = schema.quoted;
    this.columns = selectList(RUN_COLUMNS, "r");
    this.#insert = unnestInsert(this.table, INSERT_COLUMNS);
    this.#update = unnestUpdate(this.table, RUN_COLUMNS);
    this.#writeState = unnestUpdate(this.table, RUN_STATE_COLUMNS);
    // The active runs of a task are its queued runs (`run_ready`) and the runs bound to budget slots
    // (`claim_slots`, a few hundred rows at most): no index of `runs` knows the status (migration 24).
    // Each is locked by primary key in id order (the order every batch locks runs in) and kept if
    // still active once locked; a run claimed or ended meanwhile is read again as it now is.
    this.#active =
      `SELECT ${this.columns} FROM (SELECT DISTINCT a.id FROM (` +
      `SELECT q.run_id AS id FROM ${schema.quoted}.run_ready AS q WHERE q.task_id = ANY($1::text[])` +
      ` UNION ALL SELECT s.run_id FROM ${schema.quoted}.claim_slots AS s` +
      ` WHERE s.run_task_id = ANY($1::text[])) AS a ORDER BY a.id) AS w` +
      ` CROSS JOIN LATERAL (SELECT * FROM ${this.table} AS p WHERE p.id = w.id` +
      ` AND p.status IN (${literalList(ACTIVE_RUN_STATUSES)}) FOR UPDATE) AS r` +
      ` ORDER BY r.queued_at, r.id`;
  }

  /**
   * Inserts `runs` in one statement, each with its task's target kind (`kindOf`); returns the ids
   * written (all of them unless `conflict` dropped some). `prefix` goes in front, its parameters after
   * the insert's (`insertParameterCount`): a fused claim's slot binding (docs/storage.md#fused-admit-and-claim).
   */
  async insert(
    db: PostgresQueryable,
    runs: readonly Run[],
    kindOf: (run: Run) => TargetKind,
    conflict: InsertConflict = "none",
    prefix?: StatementPrefix,
  ): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const result = await this.#insertRows(
      db,
      runs,
      kindOf,
      `${ON_CONFLICT[conflict]} RETURNING id`,
      prefix,
    );
    return new Set(result.rows.map((row) => text(record(row), "id")));
  }

  /**
   * Inserts `runs` as `insert` does with no conflict tolerated: every run is written or the statement
   * fails, so no id comes back (admission's insert: one row a fire less to read and map).
   */
  async insertAll(
    db: PostgresQueryable,
    runs: readonly Run[],
    kindOf: (run: Run) => TargetKind,
    prefix?: StatementPrefix,
  ): Promise<void> {
    if (runs.length > 0) await this.#insertRows(db, runs, kindOf, "", prefix);
  }

  async #insertRows(
    db: PostgresQueryable,
    runs: readonly Run[],
    kindOf: (run: Run) => TargetKind,
    tail: string,
    prefix: StatementPrefix | undefined,
  ): Promise<{ readonly rows: readonly unknown[] }> {
    // The target kind (the last insert column) as its own array: pushed onto each run's row of 31
    // values, it made V8 grow and copy every row (about 900 bytes of garbage a run).
    const rows = new Array<unknown[]>(runs.length);
    const kinds = new Array<TargetKind>(runs.length);
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r] as Run;
      rows[r] = runValues(run);
      kinds[r] = kindOf(run);
    }
    const sql = `${this.#insert}${tail}`;
    return db.query(this.#statement(prefix === undefined ? sql : `${prefix.text} ${sql}`), [
      ...columnArrays(RUN_COLUMNS, rows),
      textArray(kinds),
      ...(prefix?.values ?? []),
    ]);
  }

  /** Rewrites whole rows (read under a lock); `where` adds conditions on the current row `t`. */
  async rewrite(db: PostgresQueryable, runs: readonly Run[], where = ""): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const result = await db.query(
      this.#statement(`${this.#update}${where === "" ? "" : ` AND ${where}`} RETURNING t.id`),
      columnArrays(RUN_COLUMNS, runs.map(runValues)),
    );
    return new Set(result.rows.map((row) => text(record(row), "id")));
  }

  /**
   * Writes the state columns of `runs` (read under a lock) in one statement, never the identity columns
   * fixed at admission; `where` adds conditions on the current row `t`. Returns the ids written.
   */
  async writeState(
    db: PostgresQueryable,
    runs: readonly Run[],
    where = "",
    prefix?: StatementPrefix,
  ): Promise<Set<string>> {
    if (runs.length === 0) return new Set();
    const rows = runs.map(runStateValues);
    const sql = `${this.#writeState}${where === "" ? "" : ` AND ${where}`} RETURNING t.id`;
    const result = await db.query(
      this.#statement(prefix === undefined ? sql : `${prefix.text} ${sql}`),
      [...columnArrays(RUN_STATE_COLUMNS, rows), ...(prefix?.values ?? [])],
    );
    return new Set(result.rows.map((row) => text(record(row), "id")));
  }

  /** `text` as a named statement, made once per text. */
  #statement(text: string): PostgresStatement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = prepared(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  /** The active runs of `taskIds`, locked, in FIFO order. */
  async lockActive(db: PostgresQueryable, taskIds: readonly TaskId[]): Promise<Run[]> {
    if (taskIds.length === 0) return [];
    const result = await db.query(this.#statement(this.#active), [textArray(taskIds)]);
    return result.rows.map(runFromRow);
  }
}
