/**
 * A batch of run changes (a write-behind flush: launch answers and verdicts) written by one fenced
 * statement instead of a locking transaction (docs/storage.md#the-fenced-run-write). A run whose first
 * request carries what the writer knows of it (`RunChangeRequest.expect`: the run as it claimed it, the
 * task's context it launched with) is not read; the others and their tasks' contexts are read without
 * a lock. The changes are applied in memory as the locking path applies them (`applyRunChanges`), and
 * one autocommit statement writes every changed run (only the columns its change changed), its task's
 * bookkeeping and the wake-up, each run only where the database still holds what was decided on:
 * - its status, attempt and cancel request are the ones decided on; a run read is also the row version
 *   read (`xmin`), so nothing wrote it since (a claim, a cancel, a sweep);
 * - its claim token is the one read (and a fenced request's token was checked against it in memory);
 * - a run read launching or running still holds its budget slot (`claim_slots`, by its thread and id);
 * - its task is the version read (`task_state.version`: the options a verdict was judged by), the task's
 *   `task_state` row locked before any run is written, the order every other run writer locks in; the
 *   bookkeeping is written on that narrow row, a heap-only update (docs/storage.md#tasks-and-task_state).
 * A run that misses the fence is not written, nor is its task's bookkeeping for it: its requests go to the
 * locking path, which reads it again under its lock (LeaseLostError and every refusal as before). So does
 * an expected run that one of its requests refused or left unchanged: only the database's own row can
 * confirm a refusal.
 */
import type { RunId, TaskId } from "../../../domain/ids.js";
import { runId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import { holdsSlot } from "../../../domain/run.js";
import type { Run } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import {
  RUN_STATE_FIELDS,
  applyRunChanges,
  batchExpectations,
  batchRunIds,
} from "../shared/run-change-batch.js";
import type { AppliedRunChanges, ChangedRunRow } from "../shared/run-change-batch.js";
import { WAKE_CHANNEL } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import {
  integer,
  record,
  runFromRow,
  runTaskContextFromRow,
  text,
  untoldColumn,
} from "./postgres-rows.js";
import { RUN_STATE_COLUMNS, runStateValues } from "./postgres-run-writes.js";
import { leaseOnThread } from "./postgres-claim.js";
import type { Column } from "./postgres-sql.js";
import {
  arrayText,
  msToTimestamp,
  prepared,
  textArray,
  unnestSource,
  unnestValue,
} from "./postgres-sql.js";

/**
 * The fence and the task's bookkeeping, sent per changed run after the columns its change wrote (and,
 * when the batch's runs changed different columns, the mask of each run's).
 */
const FENCE_COLUMNS: readonly Column[] = [
  // The row version read; null for a run taken from its writer's expectation.
  { name: "read_xmin", type: "text" },
  // What the change was decided on: the database must still hold it.
  { name: "read_token", type: "text" },
  { name: "read_status", type: "text" },
  { name: "read_attempt", type: "int4" },
  { name: "read_cancel", type: "ts" },
  { name: "held", type: "bool" },
  { name: "task_id", type: "text" },
  { name: "task_version", type: "int4" },
  // The bookkeeping this run's requests wrote on its task, each part with the batch index of the
  // request that wrote it last (-1: none), so that the task gets the batch's last of each among the
  // runs actually written, as `applyRunChanges` adds them up.
  { name: "launch_seq", type: "int4" },
  { name: "last_run_at", type: "ts" },
  { name: "last_run_id", type: "text" },
  { name: "launches", type: "int8" },
  { name: "error_seq", type: "int4" },
  { name: "last_error", type: "text" },
  { name: "status_seq", type: "int4" },
  { name: "verdict_status", type: "text" },
  { name: "wakes", type: "bool" },
];

/** The run columns a change may write (`RUN_STATE_FIELDS`' columns), bit `i` of a mask for the `i`th. */
const STATE_COLUMNS = RUN_STATE_COLUMNS.slice(1);
const STATUS_BIT = 1 << RUN_STATE_FIELDS.indexOf("status");
const MASK_COLUMN: Column = { name: "changed", type: "int4" };
/** Write statements kept per set of columns written; a batch past them is sent unnamed. */
const KEPT_WRITE_SHAPES = 64;

/** One changed run's bookkeeping on its task, as the fenced write sends it. */
interface RunBookkeeping {
  launchSeq: number;
  lastRunAt: number | null;
  lastRunId: string | null;
  launches: number;
  errorSeq: number;
  lastError: string | null;
  statusSeq: number;
  status: string | null;
}

/** What the fenced write did with a batch. */
export interface FencedOutcome {
  /** Results by request index; undefined for the requests left to the locking path. */
  readonly results: (RunChangeResult | undefined)[];
  /** The indexes of the requests whose run missed the fence, in batch order. */
  readonly fallback: number[];
}

/** What a changed run's write is fenced by besides its status, attempt, token and cancel request. */
interface ReadFence {
  /** The row version read; null when the run came from its writer's expectation. */
  readonly xmin: string | null;
  readonly version: number;
}

/** Requests of one group of a batch (read, or taken from expectations), with their batch indexes. */
interface Group {
  readonly indexes: number[];
  readonly requests: RunChangeRequest[];
}

export class PostgresFencedRunWrites {
  readonly #ctx: PostgresContext;
  readonly #read: PostgresStatement;
  /** The write statement per set of columns written (a mask of `STATE_COLUMNS`) and masked or not. */
  readonly #writes = new Map<string, PostgresStatement>();

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const runs = ctx.runSql.table;
    const tasks = ctx.tasksTable;
    const state = ctx.taskStateTable;
    // The runs by `id = ANY ($1)`, no lock: one scan of `runs` per call, an index scan by primary key
    // with statistics. Not a lookup per id: a generic plan made while `runs` looked empty scanned
    // `runs` whole once per id (docs/storage.md#plans-made-while-runs-looked-empty). Each run's task
    // by primary key (`OFFSET 0`: probed once per run, whatever the statistics of `tasks` say).
    this.#read = prepared(
      `SELECT ${ctx.runSql.columns}, r.read_xmin, t.schedule_type, t.options::text AS options,` +
        ` t.target_kind, t.once_at, t.untold, t.version AS task_version` +
        ` FROM (SELECT p.*, p.xmin::text AS read_xmin FROM ${runs} AS p` +
        ` WHERE p.id = ANY ($1::text[]) OFFSET 0) AS r` +
        ` CROSS JOIN LATERAL (SELECT k.schedule_type, k.options, k.target_kind, v.version,` +
        ` ${untoldColumn("k")},` +
        // A once task's run_at, which decides whether a manual run took its occurrence (issue 31).
        ` CASE WHEN k.schedule_type = 'once' THEN k.schedule->>'runAt' END AS once_at` +
        ` FROM ${tasks} AS k JOIN ${state} AS v ON v.task_id = k.id` +
        ` WHERE k.id = r.task_id OFFSET 0) AS t`,
    );
  }

  /**
   * The write of the runs' columns in `shape` (bits of `STATE_COLUMNS`); `masked`: each run writes only
   * the columns of its own mask (the batch's runs changed different columns), the others as they are.
   */
  #write(shape: number, masked: boolean): PostgresStatement | string {
    const key = `${String(shape)}${masked ? "m" : ""}`;
    const kept = this.#writes.get(key);
    if (kept !== undefined) return kept;
    const ctx = this.#ctx;
    const runs = ctx.runSql.table;
    const state = ctx.taskStateTable;
    const written = STATE_COLUMNS.filter((_, i) => (shape & (1 << i)) !== 0);
    const columns = [
      RUN_STATE_COLUMNS[0] as Column,
      ...written,
      ...(masked ? [MASK_COLUMN] : []),
      ...FENCE_COLUMNS,
    ];
    const sets = written
      .map((c) => {
        if (!masked) return `${c.name} = ${unnestValue(c)}`;
        const bit = 1 << STATE_COLUMNS.indexOf(c);
        return `${c.name} = CASE WHEN u.changed & ${String(bit)} <> 0 THEN ${unnestValue(c)} ELSE t.${c.name} END`;
      })
      .join(", ");
    const notify = ctx.notifies
      ? `, (SELECT pg_notify('${WAKE_CHANNEL}', 'run:' || min(w.id)) FROM written AS w` +
        ` JOIN u ON u.id = w.id WHERE u.wakes HAVING count(*) > 0) AS woke`
      : "";
    const statement = prepared(
      `WITH u AS MATERIALIZED (SELECT * FROM ${unnestSource(columns)}),` +
        // The tasks first, in id order, each only at the version decided on: the lock order of every
        // writer. Two runs of one task may have been decided on two versions: each gets its own.
        ` locked AS MATERIALIZED (SELECT w.task_id || '@' || w.task_version::text AS task_key` +
        ` FROM (SELECT DISTINCT task_id, task_version FROM u ORDER BY task_id) AS w` +
        ` CROSS JOIN LATERAL (SELECT p.task_id FROM ${state} AS p` +
        ` WHERE p.task_id = w.task_id AND p.version = w.task_version FOR UPDATE) AS k),` +
        // The fence. `locked` is read as a one-time array (an init plan): every task is locked before
        // the first run is written.
        ` written AS (UPDATE ${runs} AS t SET ${sets} FROM u` +
        ` WHERE t.id = u.id AND t.id = ANY($1::text[])` +
        ` AND u.task_id || '@' || u.task_version::text = ANY ((SELECT array_agg(task_key) FROM locked)::text[])` +
        ` AND (u.read_xmin IS NULL OR t.xmin = u.read_xmin::xid)` +
        ` AND t.status = u.read_status AND t.attempt = u.read_attempt` +
        ` AND t.claim_token IS NOT DISTINCT FROM u.read_token` +
        ` AND t.cancel_requested_at IS NOT DISTINCT FROM ${msToTimestamp("u.read_cancel")}` +
        // A run's slot is found by its thread key (claim_slots_thread_uq): its thread and id.
        ` AND (NOT u.held OR EXISTS (SELECT 1 FROM ${ctx.schema.quoted}.claim_slots AS s` +
        ` WHERE ${leaseOnThread("t.thread_scope", "t.thread_id")} AND s.run_id = t.id))` +
        ` RETURNING t.id),` +
        ` book AS (SELECT u.task_id,` +
        ` bool_or(u.launch_seq >= 0) AS launched,` +
        ` (array_agg(u.last_run_at ORDER BY u.launch_seq DESC))[1] AS last_run_at,` +
        ` (array_agg(u.last_run_id ORDER BY u.launch_seq DESC))[1] AS last_run_id,` +
        ` sum(u.launches)::int8 AS launches,` +
        ` bool_or(u.error_seq >= 0) AS judged,` +
        ` (array_agg(u.last_error ORDER BY u.error_seq DESC))[1] AS last_error,` +
        ` (array_agg(u.verdict_status ORDER BY u.status_seq DESC)` +
        ` FILTER (WHERE u.status_seq >= 0))[1] AS status` +
        ` FROM u JOIN written AS w ON w.id = u.id GROUP BY u.task_id),` +
        ` booked AS (UPDATE ${state} AS t SET` +
        ` last_run_at = CASE WHEN b.launched THEN ${msToTimestamp("b.last_run_at")} ELSE t.last_run_at END,` +
        ` last_run_id = CASE WHEN b.launched THEN b.last_run_id ELSE t.last_run_id END,` +
        ` run_count = t.run_count + b.launches,` +
        ` last_error = CASE WHEN b.judged THEN b.last_error ELSE t.last_error END,` +
        ` status = COALESCE(b.status, t.status)` +
        ` FROM book AS b WHERE t.task_id = b.task_id AND (b.launched OR b.judged) RETURNING t.task_id)` +
        // The runs the fence refused, not the ones written: an empty array when all were.
        ` SELECT (SELECT count(*) FROM booked)::int4 AS booked,` +
        ` ARRAY(SELECT u.id FROM u WHERE NOT EXISTS (SELECT 1 FROM written AS w WHERE w.id = u.id))` +
        ` AS missed${notify}`,
    );
    if (this.#writes.size >= KEPT_WRITE_SHAPES) return statement.text;
    this.#writes.set(key, statement);
    return statement;
  }

  /**
   * Applies `requests` and writes what they change in one fenced statement (after one read of the runs
   * not taken from their writers' expectations, if any). The requests of a run that missed the fence
   * come back in `fallback`, their results undefined.
   */
  async apply(requests: readonly RunChangeRequest[]): Promise<FencedOutcome> {
    const expected = batchExpectations(requests);
    const results: (RunChangeResult | undefined)[] = new Array<RunChangeResult | undefined>(
      requests.length,
    );
    const changed: ChangedRunRow[] = [];
    const refusedExpected = new Set<RunId>();
    // The fence of each run read (its row version and its task's version); a run taken from its
    // expectation is fenced by the version in `expected.versions`.
    const fence = new Map<RunId, ReadFence>();
    const place = (group: Group, applied: AppliedRunChanges, fromExpectation: boolean) => {
      applied.results.forEach((result, j) => {
        const index = group.indexes[j] as number;
        results[index] = result;
        if (fromExpectation && result.kind !== "changed") {
          refusedExpected.add((group.requests[j] as RunChangeRequest).id);
        }
      });
      for (const row of applied.runs) changed.push(row);
    };
    if (!requests.every((r) => expected.runs.has(r.id))) {
      // Requests of expected runs and of runs read are applied apart (each run's requests see only
      // that run, so the split changes no answer), each over its own tasks' contexts.
      const read: Group = { indexes: [], requests: [] };
      const taken: Group = { indexes: [], requests: [] };
      requests.forEach((request, i) => {
        const group = expected.runs.has(request.id) ? taken : read;
        group.indexes.push(i);
        group.requests.push(request);
      });
      // At least one request is of a run not expected: read.
      const runs = new Map<RunId, Run>();
      const tasks = new Map<TaskId, RunTaskContext>();
      const rows = await this.#ctx.pool.query(this.#read, [textArray(batchRunIds(read.requests))]);
      for (const value of rows.rows) {
        const row = record(value);
        const run = runFromRow(row);
        runs.set(run.id, run);
        tasks.set(run.taskId, runTaskContextFromRow(row));
        fence.set(run.id, { xmin: text(row, "read_xmin"), version: integer(row, "task_version") });
      }
      place(read, applyRunChanges(read.requests, runs, tasks), false);
      if (taken.requests.length > 0) {
        place(taken, applyRunChanges(taken.requests, expected.runs, expected.tasks), true);
      }
    } else if (requests.length > 0) {
      // Every run taken from its expectation (the write-behind's usual batch): one group, in order.
      const applied = applyRunChanges(requests, expected.runs, expected.tasks);
      for (let i = 0; i < applied.results.length; i++) {
        const result = applied.results[i] as RunChangeResult;
        results[i] = result;
        if (result.kind !== "changed") refusedExpected.add((requests[i] as RunChangeRequest).id);
      }
      for (const row of applied.runs) changed.push(row);
    }

    const fallback: number[] = [];
    const leave = (ids: ReadonlySet<RunId>) => {
      requests.forEach((request, i) => {
        if (!ids.has(request.id)) return;
        results[i] = undefined;
        fallback.push(i);
      });
    };
    // An expectation can confirm a write (the database checks it), never a refusal: those runs are
    // answered by the locking path from the row itself.
    const toWrite =
      refusedExpected.size === 0
        ? changed
        : changed.filter((row) => !refusedExpected.has(row.after.id));
    if (toWrite.length === 0) {
      leave(refusedExpected);
      return { results, fallback };
    }

    const { shape, masked, parameters } = fencedParameters(
      toWrite,
      bookkeepingByRun(results),
      fence,
      expected.versions,
    );
    const answer = await this.#ctx.pool.query(this.#write(shape, masked), parameters);
    // The runs the fence refused (every other run of `toWrite` was written).
    const missed = new Set(
      (record(answer.rows[0])["missed"] as readonly string[]).map((id) => runId(id)),
    );
    for (const id of refusedExpected) missed.add(id);
    if (missed.size > 0) leave(missed);
    return { results, fallback };
  }
}

/** Each changed run's bookkeeping on its task, from a batch's results in order (one object per run). */
function bookkeepingByRun(
  results: readonly (RunChangeResult | undefined)[],
): Map<RunId, RunBookkeeping> {
  const books = new Map<RunId, RunBookkeeping>();
  for (let i = 0; i < results.length; i++) {
    const result = results[i];
    if (result?.kind !== "changed") continue;
    const change = result.change;
    const id = change.run.id;
    let book = books.get(id);
    if (book === undefined) {
      book = noBookkeeping();
      books.set(id, book);
    }
    const launch = change.taskLaunch;
    if (launch !== undefined) {
      book.launchSeq = i;
      book.lastRunAt = launch.lastRunAt;
      book.lastRunId = launch.lastRunId;
      book.launches += launch.runCountIncrement;
    }
    const verdict = change.taskVerdict;
    if (verdict !== undefined) {
      book.errorSeq = i;
      book.lastError = verdict.lastError;
      if (verdict.status !== undefined) {
        book.statusSeq = i;
        book.status = verdict.status;
      }
    }
  }
  return books;
}

/**
 * The fenced write's parameters for `toWrite` (apart from `apply`, so that V8 compiles each part on its
 * own): the state columns written (`shape`, bits of `STATE_COLUMNS`), whether each run writes only its
 * own (`masked`), and one array text per column.
 */
function fencedParameters(
  toWrite: readonly ChangedRunRow[],
  books: ReadonlyMap<RunId, RunBookkeeping>,
  fence: ReadonlyMap<RunId, ReadFence>,
  versions: ReadonlyMap<RunId, number>,
): { shape: number; masked: boolean; parameters: string[] } {
  // Each run writes only the columns its change changed: the others stay as the database holds them.
  // The status is always written (unchanged, it is the value the fence just checked): a change that
  // changed no column still writes its row, so that the database confirms what it decided on.
  const count = toWrite.length;
  const masks = new Array<number>(count);
  let shape = 0;
  for (let r = 0; r < count; r++) {
    const { before, after } = toWrite[r] as ChangedRunRow;
    const mask = changedMask(before, after) | STATUS_BIT;
    masks[r] = mask;
    shape |= mask;
  }
  const masked = masks.some((mask) => mask !== shape);
  // The state columns this statement sends, by index.
  const sent: number[] = [];
  for (let c = 0; c < STATE_COLUMNS.length; c++) if ((shape & (1 << c)) !== 0) sent.push(c);
  // Pushed one by one: spread from `[]` on one batch and `[MASK_COLUMN]` on another, the list met two
  // array maps, and V8 deoptimised and compiled this function once more in every fresh process.
  const columns: Column[] = [RUN_STATE_COLUMNS[0] as Column];
  for (const c of sent) columns.push(STATE_COLUMNS[c] as Column);
  if (masked) columns.push(MASK_COLUMN);
  for (const column of FENCE_COLUMNS) columns.push(column);
  // Column by column, each made at its final length: one array of values per parameter, written as
  // array text without a row of values per run (`arrayText`). Each made generic (filled) at once: an
  // array whose elements' kind changed with its column's values made V8 deoptimise again and again.
  const values = columns.map(() => new Array<unknown>(count).fill(null));
  for (let r = 0; r < count; r++) {
    const { before, after } = toWrite[r] as ChangedRunRow;
    const book = books.get(after.id) ?? noBookkeeping();
    const read = fence.get(after.id);
    const version = read?.version ?? versions.get(after.id);
    // Every changed run was read by the statement above or taken from its expectation.
    if (version === undefined) throw new Error(`run ${after.id} changed without being read`);
    const wakes =
      (holdsSlot(before.status) && !holdsSlot(after.status)) ||
      (after.status === "queued" && before.status !== "queued");
    const state = runStateValues(after);
    let at = 0;
    (values[at++] as unknown[])[r] = after.id;
    for (const c of sent) (values[at++] as unknown[])[r] = state[c + 1];
    if (masked) (values[at++] as unknown[])[r] = masks[r];
    (values[at++] as unknown[])[r] = read?.xmin ?? null;
    (values[at++] as unknown[])[r] = before.claimToken;
    (values[at++] as unknown[])[r] = before.status;
    (values[at++] as unknown[])[r] = before.attempt;
    (values[at++] as unknown[])[r] = before.cancelRequestedAt;
    (values[at++] as unknown[])[r] = holdsSlot(before.status);
    (values[at++] as unknown[])[r] = before.taskId;
    (values[at++] as unknown[])[r] = version;
    (values[at++] as unknown[])[r] = book.launchSeq;
    (values[at++] as unknown[])[r] = book.lastRunAt;
    (values[at++] as unknown[])[r] = book.lastRunId;
    (values[at++] as unknown[])[r] = book.launches;
    (values[at++] as unknown[])[r] = book.errorSeq;
    (values[at++] as unknown[])[r] = book.lastError;
    (values[at++] as unknown[])[r] = book.statusSeq;
    (values[at++] as unknown[])[r] = book.status;
    (values[at++] as unknown[])[r] = wakes;
    if (at !== columns.length) {
      throw new Error(`a fenced write row of ${at} values, not ${columns.length}`);
    }
  }
  const parameters = columns.map((column, c) => arrayText(column.type, values[c] as unknown[]));
  return { shape, masked, parameters };
}

/** Bit `i` set for each of `RUN_STATE_FIELDS` whose value `after` changed from `before`. */
function changedMask(before: Run, after: Run): number {
  let mask = 0;
  for (let i = 0; i < RUN_STATE_FIELDS.length; i++) {
    const field = RUN_STATE_FIELDS[i] as (typeof RUN_STATE_FIELDS)[number];
    if (before[field] !== after[field]) mask |= 1 << i;
  }
  return mask;
}

function noBookkeeping(): RunBookkeeping {
  return {
    launchSeq: -1,
    lastRunAt: null,
    lastRunId: null,
    launches: 0,
    errorSeq: -1,
    lastError: null,
    statusSeq: -1,
    status: null,
  };
}
