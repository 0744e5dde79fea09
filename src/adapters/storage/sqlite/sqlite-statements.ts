/**
 * The prepared statements both repositories share (run rows, task and run lookups), prepared once per
 * connection. Statements with a list parameter take it as one JSON array through `json_each`, so a batch
 * is one statement whatever its size.
 */
import type { Statement } from "better-sqlite3";
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { Run } from "../../../domain/run.js";
import { RUN_STATE_FIELDS } from "../shared/run-change-batch.js";
import type { SqliteDatabase } from "./sqlite-database.js";
import {
  column,
  columnList,
  RUN_COLUMNS,
  TASK_COLUMNS,
  TASK_CONTEXT_COLUMNS,
  TASK_CONTEXT_SELECT,
} from "./sqlite-rows.js";
import type { RunRow, TaskContextRow, TaskRow } from "./sqlite-rows.js";
import { runRowOf, taskContextRowOf, taskReadRowOf } from "./sqlite-row-shapes.js";

export const ACTIVE = "('queued', 'launching', 'running')";
export const SLOT = "('launching', 'running')";
export const TERMINAL = "('succeeded', 'failed', 'timed_out', 'cancelled', 'skipped', 'missed')";

/**
 * A task row whole: its definition joined to its state (one primary-key probe). Every column name is
 * unique across the two tables (`task_state` is keyed by `task_id`), so filters stay unqualified.
 */
export const TASK_FROM = "tasks JOIN task_state ON task_state.task_id = tasks.id";
/**
 * The items of the calendar versions a task's schedule references, joined by primary key from
 * `calendar_versions` in the task read itself (`[[name, version, itemsText], ...]` as JSON text; an
 * empty list when it names none): docs/storage.md#calendar-versions. A calendar named twice comes
 * twice (the reader keys them): a DISTINCT would put a temporary B-tree in every task read's plan.
 */
export const CALENDAR_ITEMS_COLUMN = `(SELECT json_group_array(json_array(cv.name, cv.version, cv.items))
  FROM (SELECT json_extract(e.value, '$.name') AS name, json_extract(e.value, '$.version') AS version
          FROM json_each(tasks.schedule, '$.exclude') AS e
         WHERE json_extract(e.value, '$.kind') = 'calendar') AS r
  JOIN calendar_versions AS cv ON cv.owner = tasks.owner AND cv.name = r.name
   AND cv.version = r.version) AS calendars`;

/** A whole task's columns as read: the table's, then its definition's `stamp` and `calendars`. */
export const TASK_READ_COLUMNS: readonly (keyof TaskRow)[] = [
  ...TASK_COLUMNS,
  "stamp",
  "calendars",
];
export const TASK_SELECT = `SELECT ${columnList(TASK_COLUMNS)}, stamp, ${CALENDAR_ITEMS_COLUMN} FROM ${TASK_FROM}`;
export const RUN_SELECT = `SELECT ${columnList(RUN_COLUMNS)} FROM runs`;

const RUN_FIELDS = RUN_COLUMNS.filter((name) => name !== "id");
// One bit per field in a 32-bit mask, and one more bit for the status guard.
if (RUN_FIELDS.length > 30) throw new Error("sqlite store: too many run columns for a change mask");
const QUEUED_GUARD = 2 ** 31;

/**
 * A `SELECT` of whole rows (`columns`, in this order) read in better-sqlite3's raw mode and shaped into
 * row objects by `shape`, an object literal of the row's type (sqlite-row-shapes.ts). better-sqlite3
 * builds each row object key by key; a literal builds rows of one shape in one allocation (reading 500
 * task rows took about half as long in raw mode with a loop over the columns, and the literal is faster
 * again: docs/storage.md#sqlite, "Batches and statements"). The constructor checks that the
 * statement's columns are `columns` and that `shape` puts value i under column i. The hot reads
 * (admission, claims, batched run changes) go through this.
 */
export class RowReader<Params extends unknown[], Row> {
  readonly #statement: Statement<Params, unknown[]>;
  readonly #shape: (values: readonly unknown[]) => Row;

  constructor(
    db: SqliteDatabase,
    sql: string,
    columns: readonly (keyof Row & string)[],
    shape: (values: readonly unknown[]) => Row = shapeByLoop(columns),
  ) {
    this.#statement = db.prepare<Params, unknown[]>(sql).raw(true);
    this.#shape = shape;
    const names = this.#statement.columns().map((c) => c.name);
    if (names.join(",") !== columns.join(",")) {
      throw new Error(
        `sqlite store: a row reader's columns (${names.join(", ")}) differ from its row`,
      );
    }
    const probe = shape(columns.map((_, i) => i)) as Record<string, unknown>;
    if (
      Object.keys(probe).join(",") !== columns.join(",") ||
      columns.some((name, i) => probe[name] !== i)
    ) {
      throw new Error(`sqlite store: a row reader's shape differs from its columns`);
    }
  }

  get(...params: Params): Row | undefined {
    const values = this.#statement.get(...params);
    return values === undefined ? undefined : this.#shape(values);
  }

  all(...params: Params): Row[] {
    const rows = this.#statement.all(...params);
    const shaped: Row[] = new Array<Row>(rows.length);
    for (let i = 0; i < rows.length; i++) shaped[i] = this.#shape(rows[i] as unknown[]);
    return shaped;
  }
}

/** A row shaped by a loop over its columns: for the reads off the hot path (narrow rows). */
function shapeByLoop(columns: readonly string[]): (values: readonly unknown[]) => never {
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i];
    return row as never;
  };
}

const SLOT_STATUSES: ReadonlySet<string> = new Set(["launching", "running"]);
const STATUS_AT = RUN_COLUMNS.indexOf("status");
const DEADLINE_AT = RUN_COLUMNS.indexOf("deadline_at");
/** `run_active`'s columns in the positional insert's order, as indexes of `RUN_COLUMNS`. */
const ACTIVE_AT = (
  ["thread_scope", "thread_id", "id", "owner", "task_id", "exclusive"] as const
).map((name) => RUN_COLUMNS.indexOf(name));
/** `run_ready`'s columns in the positional insert's order, as indexes of `RUN_COLUMNS`. */
const READY_AT = (
  [
    "owner",
    "queued_at",
    "id",
    "task_id",
    "thread_scope",
    "thread_id",
    "exclusive",
    "not_before",
  ] as const
).map((name) => RUN_COLUMNS.indexOf(name));

export class SqliteStatements {
  readonly #insertRun: Statement;
  /**
   * A run inserted is placed by the store's one insert (`insertRun`), not by a trigger: a row trigger
   * costs SQLite a frame per run (its WHEN is evaluated inside it), and admission inserts a run per fire.
   * Updates and deletes, whatever path makes them, are placed by the triggers of migration 17.
   */
  readonly #readyIn: Statement;
  readonly #activeIn: Statement;
  readonly #holdIn: Statement<[RunRow]>;
  readonly runById: RowReader<[string], RunRow>;
  /** Any task, deleted ones included (runs of a deleted task still change). */
  readonly taskById: RowReader<[string], TaskRow>;
  /** Tasks by a JSON array of ids. */
  readonly tasksByIds: RowReader<[string], TaskRow>;
  /** Runs by a JSON array of ids. */
  readonly runsByIds: RowReader<[string], RunRow>;
  /** What run transitions need of tasks, by a JSON array of ids. */
  readonly taskContextsByIds: RowReader<[string], TaskContextRow>;
  /** The active runs of a JSON array of task ids, in queue order. */
  readonly activeRunsOf: RowReader<[string], RunRow>;
  readonly #db: SqliteDatabase;
  /**
   * UPDATE statements by the set of columns they write (a bit per RUN_FIELDS index; `QUEUED_GUARD`), each
   * with its columns in the order it binds them, by position, the run's id last.
   */
  readonly #updates = new Map<number, RunUpdate>();

  /** How the tasks' signing secrets are stored (docs/security.md#secrets-at-rest). */
  readonly secrets: SecretSealer;

  constructor(db: SqliteDatabase, secrets: SecretSealer) {
    this.#db = db;
    this.secrets = secrets;
    // The values of `runValues`, then the task's target kind, copied onto the run for the listing
    // across tasks (docs/storage.md#runs-across-tasks).
    this.#insertRun = db.prepare(
      `INSERT INTO runs (${columnList(RUN_COLUMNS)}, target_kind)
       VALUES (${RUN_COLUMNS.map(() => "?").join(", ")}, ?)`,
    );
    this.#readyIn = db.prepare(
      `INSERT INTO run_ready (owner, queued_at, run_id, task_id, thread_scope, thread_id, "exclusive",
                              not_before)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#activeIn = db.prepare(
      `INSERT INTO run_active (thread_scope, thread_id, run_id, owner, task_id, "exclusive")
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.#holdIn = db.prepare(
      `INSERT INTO run_holds (run_id, thread_scope, thread_id, task_id, deadline_at)
       VALUES (@id, @thread_scope, @thread_id, CASE WHEN @exclusive = 1 THEN @task_id END,
               @deadline_at)`,
    );
    this.runById = new RowReader(db, `${RUN_SELECT} WHERE id = ?`, RUN_COLUMNS, runRowOf);
    this.taskById = new RowReader(
      db,
      `${TASK_SELECT} WHERE id = ?`,
      TASK_READ_COLUMNS,
      taskReadRowOf,
    );
    this.tasksByIds = new RowReader(
      db,
      `${TASK_SELECT} WHERE id IN (SELECT value FROM json_each(?))`,
      TASK_READ_COLUMNS,
      taskReadRowOf,
    );
    this.runsByIds = new RowReader(
      db,
      `${RUN_SELECT} WHERE id IN (SELECT value FROM json_each(?))`,
      RUN_COLUMNS,
      runRowOf,
    );
    this.taskContextsByIds = new RowReader(
      db,
      `SELECT ${TASK_CONTEXT_SELECT} FROM tasks
       WHERE id IN (SELECT value FROM json_each(?))`,
      TASK_CONTEXT_COLUMNS,
      taskContextRowOf,
    );
    // A task's active runs are its rows in the queue and the slots (migration 17), never a walk of
    // its history.
    this.activeRunsOf = new RowReader(
      db,
      `WITH wanted(task_id) AS (SELECT value FROM json_each(?))
       ${RUN_SELECT}
       WHERE id IN (SELECT run_id FROM run_ready WHERE task_id IN wanted
                    UNION ALL
                    SELECT run_id FROM run_active WHERE task_id IN wanted)
       ORDER BY queued_at, id`,
      RUN_COLUMNS,
      runRowOf,
    );
  }

  /**
   * Inserts a run from `runValues(run)` followed by its task's target kind, with its place: a queued
   * run (every insert of the hot path) enters `run_ready`; a run inserted launching or running takes its
   * slot after it (a run key refused first leaves no slot behind; a slot key refused fails the write,
   * which no caller catches, so its transaction writes nothing); a held one enters `run_holds`.
   */
  insertRun(values: unknown[]): void {
    const status = values[STATUS_AT] as string;
    this.#insertRun.run(values);
    // Bound by position from the run's values: a row object of 31 fields per fused run (the burst's
    // every run) only to bind six of them by name was a visible share of the insert's JavaScript.
    if (status === "queued") this.#readyIn.run(READY_AT.map((i) => values[i]));
    else if (SLOT_STATUSES.has(status)) this.#activeIn.run(ACTIVE_AT.map((i) => values[i]));
    else if (status === "cancelled" && values[DEADLINE_AT] !== null) {
      this.#holdIn.run(runRowOf(values));
    }
  }

  /**
   * Rewrites a run row (an UPDATE: a missing run is not created) and returns the rows changed. Given the
   * row as read in this transaction, it writes only the columns that differ: SQLite rewrites every index
   * that names a column in the SET list (eleven on runs), so a whole-row write of a claim took about
   * twice as long as writing its five changed columns (measured alone and in batches of 200).
   * With `whenQueued`, only a run that is still queued moves (the claim's write).
   */
  writeRun(after: RunRow, before?: RunRow, whenQueued = false): number {
    // The changed columns as a bit mask: this runs for every claim and every run change, and building
    // a list and a string key for each was a visible share of a burst's garbage.
    let mask = 0;
    for (let i = 0; i < RUN_FIELDS.length; i++) {
      const name = RUN_FIELDS[i] as keyof RunRow;
      if (before === undefined || after[name] !== before[name]) mask |= 1 << i;
    }
    if (mask === 0 && !whenQueued) return 1;
    const { statement, columns } = this.#update(whenQueued ? mask + QUEUED_GUARD : mask);
    // Bound by position: a claim's and a verdict's write, one per fire each, read about ten named
    // parameters from the row object otherwise (about 0.15 µs each).
    const values = new Array<unknown>(columns.length + 1);
    for (let i = 0; i < columns.length; i++) values[i] = after[columns[i] as keyof RunRow];
    values[columns.length] = after.id;
    return statement.run(values).changes;
  }

  /**
   * `writeRun` for a run change (`changeRuns`): the columns of the state fields `after` changed from
   * `before` (a change never writes an identity field: `applyRunChanges` refuses one), compared and
   * bound from the runs themselves, without a row of 31 columns made for each (two per fire).
   */
  writeRunChange(before: Run, after: Run): number {
    let mask = 0;
    for (const state of STATE_COLUMNS)
      if (before[state.field] !== after[state.field]) mask |= state.bit;
    if (mask === 0) return 1;
    const { statement, states } = this.#update(mask);
    const values = new Array<unknown>(states.length + 1);
    for (let i = 0; i < states.length; i++) values[i] = (states[i] as StateColumn).value(after);
    values[states.length] = after.id;
    return statement.run(values).changes;
  }

  /** The UPDATE writing the columns of `key` (bits of `RUN_FIELDS`, and `QUEUED_GUARD`), prepared once. */
  #update(key: number): RunUpdate {
    let update = this.#updates.get(key);
    if (update === undefined) {
      const mask = key >= QUEUED_GUARD ? key - QUEUED_GUARD : key;
      const changed = RUN_FIELDS.filter((_, i) => (mask & (1 << i)) !== 0);
      const columns = changed.length === 0 ? ["id" as const] : changed;
      const set = columns.map((name) => `${column(name)} = ?`).join(", ");
      const guard = key >= QUEUED_GUARD ? " AND status = 'queued'" : "";
      update = {
        statement: this.#db.prepare(`UPDATE runs SET ${set} WHERE id = ?${guard}`),
        columns,
        // Empty for a mask naming a column no change writes: such an update is `writeRun`'s only.
        states: columns.every((name) => STATE_BY_COLUMN.has(name))
          ? columns.map((name) => STATE_BY_COLUMN.get(name) as StateColumn)
          : [],
      };
      this.#updates.set(key, update);
    }
    return update;
  }
}

interface RunUpdate {
  readonly statement: Statement;
  /** The columns of its SET list, in order; the run's id is bound after them. */
  readonly columns: readonly (keyof RunRow)[];
  /** The same columns as state columns (`writeRunChange`), when each is one. */
  readonly states: readonly StateColumn[];
}

/** A run field a change may write (`RUN_STATE_FIELDS`), its column's bit in a `writeRun` mask, and its value as stored. */
interface StateColumn {
  readonly field: (typeof RUN_STATE_FIELDS)[number];
  readonly bit: number;
  readonly value: (run: Run) => unknown;
}

/** How `runToRow` stores each state field: as it is, but `late` as 0/1 and `result` as JSON text. */
const STATE_COLUMNS: readonly StateColumn[] = RUN_STATE_FIELDS.map((field) => {
  const name = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const at = RUN_FIELDS.findIndex((candidate) => candidate === name);
  if (at < 0) throw new Error(`sqlite store: no run column for the state field ${field}`);
  const value =
    field === "late"
      ? (run: Run) => (run.late ? 1 : 0)
      : field === "result"
        ? (run: Run) => (run.result === null ? null : JSON.stringify(run.result))
        : (run: Run) => run[field];
  return { field, bit: 1 << at, value };
});

const STATE_BY_COLUMN = new Map<keyof RunRow, StateColumn>(
  STATE_COLUMNS.map((state) => [RUN_FIELDS[Math.log2(state.bit)] as keyof RunRow, state]),
);
