/**
 * A batch of run changes (a write-behind flush: launch answers and verdicts) written by one fenced
 * statement instead of a locking transaction (docs/storage.md#the-fenced-run-write). The runs and their
 * tasks' contexts are read without a lock, the changes are applied in memory as the locking path applies
 * them (`applyRunChanges`), and one autocommit statement writes every changed run, its task's
 * bookkeeping and the wake-up, each run only where the database still holds what was read:
 * - the run row is the version read (`xmin`), so nothing wrote it since (a claim, a cancel, a sweep);
 * - its claim token is the one read (and a fenced request's token was checked against it in memory);
 * - a run read launching or running still holds its budget slot (`claim_slots`, by its thread and id);
 * - its task is the version read (`task_state.version`: the options a verdict was judged by), the task's
 *   `task_state` row locked before any run is written, the order every other run writer locks in; the
 *   bookkeeping is written on that narrow row, a heap-only update (docs/storage.md#tasks-and-task_state).
 * A run that misses the fence is not written, nor is its task's bookkeeping for it: its requests go to the
 * locking path, which reads it again under its lock (LeaseLostError and every refusal as before).
 */
import type { RunId, TaskId } from "../../../domain/ids.js";
import { runId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import { holdsSlot } from "../../../domain/run.js";
import type { Run } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import { applyRunChanges, batchRunIds, taskBookkeepingOf } from "../shared/run-change-batch.js";
import { WAKE_CHANNEL } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { integer, record, runFromRow, runTaskContextFromRow, text } from "./postgres-rows.js";
import { RUN_STATE_COLUMNS, runStateValues } from "./postgres-run-writes.js";
import type { Column } from "./postgres-sql.js";
import {
  columnArrays,
  msToTimestamp,
  prepared,
  unnestSource,
  unnestValue,
} from "./postgres-sql.js";

/** What the fenced write sends per changed run: its new state, the fence, its task's bookkeeping. */
const FENCE_COLUMNS: readonly Column[] = [
  { name: "read_xmin", type: "text" },
  { name: "read_token", type: "text" },
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
const COLUMNS: readonly Column[] = [...RUN_STATE_COLUMNS, ...FENCE_COLUMNS];

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

export class PostgresFencedRunWrites {
  readonly #ctx: PostgresContext;
  readonly #read: PostgresStatement;
  readonly #write: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const runs = ctx.runSql.table;
    const tasks = ctx.tasksTable;
    const state = ctx.taskStateTable;
    // By primary key for each id (a lateral probe the planner cannot turn into a walk), no lock.
    this.#read = prepared(
      `SELECT ${ctx.runSql.columns}, r.read_xmin, t.schedule_type, t.options::text AS options,` +
        ` t.target_kind, t.once_at, t.version AS task_version` +
        ` FROM (SELECT DISTINCT id FROM unnest($1::text[]) AS w(id)) AS w` +
        ` CROSS JOIN LATERAL (SELECT p.*, p.xmin::text AS read_xmin FROM ${runs} AS p` +
        ` WHERE p.id = w.id OFFSET 0) AS r` +
        ` CROSS JOIN LATERAL (SELECT k.schedule_type, k.options, k.target_kind, v.version,` +
        // A once task's run_at, which decides whether a manual run took its occurrence (issue 31).
        ` CASE WHEN k.schedule_type = 'once' THEN k.schedule->>'runAt' END AS once_at` +
        ` FROM ${tasks} AS k JOIN ${state} AS v ON v.task_id = k.id` +
        ` WHERE k.id = r.task_id OFFSET 0) AS t`,
    );
    const sets = RUN_STATE_COLUMNS.slice(1)
      .map((c) => `${c.name} = ${unnestValue(c)}`)
      .join(", ");
    const notify = ctx.notifies
      ? `, (SELECT pg_notify('${WAKE_CHANNEL}', 'run:' || min(w.id)) FROM written AS w` +
        ` JOIN u ON u.id = w.id WHERE u.wakes HAVING count(*) > 0) AS woke`
      : "";
    this.#write = prepared(
      `WITH u AS MATERIALIZED (SELECT * FROM ${unnestSource(COLUMNS)}),` +
        // The tasks first, in id order, each only at the version read: the lock order of every writer.
        ` locked AS MATERIALIZED (SELECT k.task_id FROM (SELECT DISTINCT task_id, task_version FROM u` +
        ` ORDER BY task_id) AS w CROSS JOIN LATERAL (SELECT p.task_id FROM ${state} AS p` +
        ` WHERE p.task_id = w.task_id AND p.version = w.task_version FOR UPDATE) AS k),` +
        // The fence. `locked` is read as a one-time array (an init plan): every task is locked before
        // the first run is written.
        ` written AS (UPDATE ${runs} AS t SET ${sets} FROM u` +
        ` WHERE t.id = u.id AND t.id = ANY($1::text[])` +
        ` AND u.task_id = ANY ((SELECT array_agg(task_id) FROM locked)::text[])` +
        ` AND t.xmin = u.read_xmin::xid AND t.claim_token IS NOT DISTINCT FROM u.read_token` +
        // A run's slot is found by its thread key (claim_slots_thread_uq): its thread and id.
        ` AND (NOT u.held OR EXISTS (SELECT 1 FROM ${ctx.schema.quoted}.claim_slots AS s` +
        ` WHERE s.thread_scope = t.thread_scope AND s.thread_id = t.thread_id AND s.run_id = t.id))` +
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
        ` SELECT (SELECT count(*) FROM booked)::int4 AS booked,` +
        ` ARRAY(SELECT id FROM written) AS ids${notify}`,
    );
  }

  /**
   * Applies `requests` and writes what they change in one fenced statement (plus the read before it).
   * The requests of a run that missed the fence come back in `fallback`, their results undefined.
   */
  async apply(requests: readonly RunChangeRequest[]): Promise<FencedOutcome> {
    const ids = batchRunIds(requests);
    const read = await this.#ctx.pool.query(this.#read, [ids]);
    const runs = new Map<RunId, Run>();
    const tasks = new Map<TaskId, RunTaskContext>();
    const fence = new Map<RunId, { xmin: string; version: number }>();
    for (const value of read.rows) {
      const row = record(value);
      const run = runFromRow(row);
      runs.set(run.id, run);
      tasks.set(run.taskId, runTaskContextFromRow(row));
      fence.set(run.id, { xmin: text(row, "read_xmin"), version: integer(row, "task_version") });
    }
    const applied = applyRunChanges(requests, runs, tasks);
    const results: (RunChangeResult | undefined)[] = [...applied.results];
    if (applied.runs.length === 0) return { results, fallback: [] };

    const books = new Map<RunId, RunBookkeeping>();
    applied.results.forEach((result, i) => {
      if (result.kind !== "changed") return;
      const id = result.change.run.id;
      const book = books.get(id) ?? noBookkeeping();
      const one = taskBookkeepingOf(result.change.run.taskId, result.change);
      if (one.launch !== null) {
        book.launchSeq = i;
        book.lastRunAt = one.launch.lastRunAt;
        book.lastRunId = one.launch.lastRunId;
      }
      book.launches += one.launches;
      if (one.verdict !== null) {
        book.errorSeq = i;
        book.lastError = one.verdict.lastError;
        if (one.verdict.status !== null) {
          book.statusSeq = i;
          book.status = one.verdict.status;
        }
      }
      books.set(id, book);
    });

    const rows = applied.runs.map(({ before, after }) => {
      const book = books.get(after.id) ?? noBookkeeping();
      const read = fence.get(after.id);
      // Every changed run was read by the statement above.
      if (read === undefined) throw new Error(`run ${after.id} changed without being read`);
      const wakes =
        (holdsSlot(before.status) && !holdsSlot(after.status)) ||
        (after.status === "queued" && before.status !== "queued");
      return [
        ...runStateValues(after),
        read.xmin,
        before.claimToken,
        holdsSlot(before.status),
        before.taskId,
        read.version,
        book.launchSeq,
        book.lastRunAt,
        book.lastRunId,
        book.launches,
        book.errorSeq,
        book.lastError,
        book.statusSeq,
        book.status,
        wakes,
      ];
    });
    const answer = await this.#ctx.pool.query(this.#write, columnArrays(COLUMNS, rows));
    const written = new Set(
      (record(answer.rows[0])["ids"] as readonly string[]).map((id) => runId(id)),
    );
    const missed = new Set(applied.runs.map((r) => r.after.id).filter((id) => !written.has(id)));
    const fallback: number[] = [];
    requests.forEach((request, i) => {
      if (!missed.has(request.id)) return;
      results[i] = undefined;
      fallback.push(i);
    });
    return { results, fallback };
  }
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
