/**
 * `RunRepository` on PostgreSQL: reads, claims (postgres-claim.ts), fenced changes under the task's and
 * then the run's row lock (a batch first tries one fenced statement, postgres-fenced-run-writes.ts), the
 * sweeps' queries and retention (postgres-run-sweeps.ts). A change that frees a launch slot or requeues
 * a run notifies the wake channel at commit.
 */
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import { taskId } from "../../../domain/ids.js";
import type {
  ClaimRequest,
  ClaimedRun,
  RunChangeRequest,
  RunChangeResult,
  QueueStats,
  RunRepository,
  UnservedRun,
} from "../../../domain/ports/run-repository.js";
import type { OwnerScope, Page, RunQuery, RunSearch } from "../../../domain/ports/queries.js";
import type { TargetKind } from "../../../domain/target.js";
import { holdsSlot } from "../../../domain/run.js";
import type { Run, RunTrigger } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import { runTaskContext } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { applyRunChanges, batchRunIds, wantsWholeTasks } from "../shared/run-change-batch.js";
import type { TaskBookkeeping } from "../shared/run-change-batch.js";
import { PostgresClaim } from "./postgres-claim.js";
import { PostgresFencedRunWrites } from "./postgres-fenced-run-writes.js";
import { searchPostgresRuns } from "./postgres-run-search.js";
import { claimedRunFromRow, claimedRunSelect } from "./postgres-claimed-run.js";
import { taskSource, wake } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import type { PostgresClient } from "./postgres-pool.js";
import {
  integer,
  record,
  runFromRow,
  runTaskContextFromRow,
  taskFromRow,
  text,
  taskSelectList,
  untoldColumn,
  calendarItemsColumn,
} from "./postgres-rows.js";
import {
  columnArrays,
  msToTimestamp,
  prepared,
  preparedAll,
  keyedUnnestFrom,
  unnestValue,
} from "./postgres-sql.js";
import type { Column } from "./postgres-sql.js";
import { ownerOf } from "./postgres-task-repository.js";
import { withTransaction } from "./with-transaction.js";
import { PostgresUnservedRuns } from "./postgres-unserved-runs.js";
import { PostgresRunSweeps } from "./postgres-run-sweeps.js";

/** A batch's task bookkeeping as unnested arrays, in the order `#recordOnTasks` writes them. */
const LAST_RUN_AT: Column = { name: "last_run_at", type: "ts" };
const RECORD_ON_TASKS_COLUMNS: readonly Column[] = [
  { name: "task_id", type: "text" },
  { name: "launched", type: "bool" },
  LAST_RUN_AT,
  { name: "last_run_id", type: "text" },
  { name: "launches", type: "int8" },
  { name: "judged", type: "bool" },
  { name: "last_error", type: "text" },
  { name: "status", type: "text" },
];

export class PostgresRunRepository implements RunRepository {
  readonly #ctx: PostgresContext;
  readonly #claim: PostgresClaim;
  readonly #fenced: PostgresFencedRunWrites;
  readonly #sql: ReturnType<typeof buildStatements>;
  readonly #unserved: PostgresUnservedRuns;
  readonly #sweeps: PostgresRunSweeps;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#claim = new PostgresClaim(ctx);
    this.#fenced = new PostgresFencedRunWrites(ctx);
    this.#sql = buildStatements(ctx);
    this.#unserved = new PostgresUnservedRuns(ctx);
    this.#sweeps = new PostgresRunSweeps(ctx);
  }

  async findRun(scope: OwnerScope, id: RunId): Promise<Run | null> {
    const result = await this.#ctx.pool.query(this.#sql.find, [id, ownerOf(scope)]);
    return result.rows[0] === undefined ? null : runFromRow(result.rows[0]);
  }

  async findRunWithTask(id: RunId): Promise<ClaimedRun | null> {
    const result = await this.#ctx.pool.query(this.#sql.runWithTask, [id]);
    return result.rows[0] === undefined
      ? null
      : claimedRunFromRow(result.rows[0], this.#ctx.secrets);
  }

  async countRecentRuns(owner: OwnerId, trigger: RunTrigger, since: Instant): Promise<number> {
    // Requested runs (backfill, manual) are counted over runs_owner_requested_idx, whose predicate the
    // literal names; scheduled ones, which no quota counts, over the owner's listing index.
    const requested = trigger === "scheduled" ? "" : ` AND "trigger" <> 'scheduled'`;
    const result = await this.#ctx.pool.query(
      `SELECT count(*)::int8 AS n FROM ${this.#ctx.runSql.table}
        WHERE owner = $1::text AND queued_at >= ${msToTimestamp("$2::int8")}
          AND "trigger" = $3::text${requested}`,
      [owner, since, trigger],
    );
    return integer(record(result.rows[0]), "n");
  }

  async findManualRun(taskId: TaskId, idempotencyKey: string): Promise<Run | null> {
    const result = await this.#ctx.pool.query(this.#sql.manual, [taskId, idempotencyKey]);
    return result.rows[0] === undefined ? null : runFromRow(result.rows[0]);
  }

  async listRuns(scope: OwnerScope, taskId: TaskId, query: RunQuery): Promise<Page<Run>> {
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const result = await this.#ctx.pool.query(this.#sql.list, [
      taskId,
      ownerOf(scope),
      query.status ?? null,
      query.trigger ?? null,
      before?.[0] ?? null,
      before?.[1] ?? null,
      query.limit + 1,
    ]);
    const runs = result.rows.map(runFromRow);
    return pageOf(runs, query.limit, (item) => [item.scheduledFor, item.id]);
  }

  searchRuns(scope: OwnerScope, search: RunSearch): Promise<Page<Run>> {
    return searchPostgresRuns(this.#ctx.pool, this.#ctx.runSql, scope, search);
  }

  claimRuns(
    request: ClaimRequest,
    select: Parameters<RunRepository["claimRuns"]>[1],
    claim: Parameters<RunRepository["claimRuns"]>[2],
  ): Promise<readonly ClaimedRun[]> {
    return this.#claim.claimRuns(request, select, claim);
  }

  /**
   * One fenced statement for the batch (docs/storage.md#the-fenced-run-write); the requests of runs that
   * missed its fence go through the locking path, which reads them again under their locks. A single
   * change its writer knows nothing of (no `expect`), and a batch that wants its tasks whole, take the
   * locking path at once: the fenced statement would read the run first and could still miss.
   */
  async changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    if (requests.length === 0) return [];
    if (wantsWholeTasks(requests) || (requests.length === 1 && requests[0]?.expect === undefined)) {
      return this.#changeRunsLocked(requests);
    }
    const fenced = await this.#fenced.apply(requests);
    if (fenced.fallback.length === 0) return fenced.results as RunChangeResult[];
    const missed = new Set(fenced.fallback);
    const locked = await this.#changeRunsLocked(requests.filter((_, i) => missed.has(i)));
    const results = [...fenced.results];
    fenced.fallback.forEach((index, i) => {
      results[index] = locked[i];
    });
    return results as RunChangeResult[];
  }

  /** The batch under the tasks' and runs' row locks, read and written in one transaction. */
  #changeRunsLocked(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    if (requests.length === 0) return Promise.resolve([]);
    const ids = batchRunIds(requests);
    return withTransaction(this.#ctx.pool, async (client) => {
      // Tasks first, then runs, each in id order: the order admission and owner commands lock in, and
      // one order between two batches, so batches never deadlock each other.
      // Only what run transitions need of each task, unless a request wants its task whole: the full
      // rows (JSON columns and all) were a third of what a batch read and parsed.
      const whole = wantsWholeTasks(requests) ? new Map<TaskId, Task>() : undefined;
      const taskRows = await client.query(
        whole === undefined ? this.#sql.lockTasksOfRuns : this.#sql.lockWholeTasksOfRuns,
        [ids],
      );
      const tasks = new Map<TaskId, RunTaskContext>();
      for (const row of taskRows.rows) {
        if (whole === undefined) {
          tasks.set(taskId(text(record(row), "id")), runTaskContextFromRow(row));
          continue;
        }
        const task = taskFromRow(row, this.#ctx.secrets);
        whole.set(task.id, task);
        tasks.set(task.id, runTaskContext(task));
      }
      const runRows = await client.query(this.#sql.lockRuns, [ids]);
      const runs = new Map<RunId, Run>();
      for (const row of runRows.rows) {
        const run = runFromRow(row);
        runs.set(run.id, run);
      }
      const applied = applyRunChanges(requests, runs, tasks, whole);
      await this.#ctx.runSql.writeState(
        client,
        applied.runs.map((r) => r.after),
      );
      await this.#recordOnTasks(client, applied.tasks);
      const woken = applied.runs.find(
        ({ before, after }) =>
          (holdsSlot(before.status) && !holdsSlot(after.status)) ||
          (after.status === "queued" && before.status !== "queued"),
      );
      // One wake-up per batch: payloads are hints, and the woken replica re-reads the database.
      if (woken !== undefined) await wake(this.#ctx, client, `run:${woken.after.id}`);
      return applied.results;
    });
  }

  /** A batch's launch bookkeeping and verdict fields, one statement for every task of the batch. */
  async #recordOnTasks(client: PostgresClient, entries: readonly TaskBookkeeping[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map((e) => [
      e.taskId,
      e.launch !== null,
      e.launch?.lastRunAt ?? null,
      e.launch?.lastRunId ?? null,
      e.launches,
      e.verdict !== null,
      e.verdict?.lastError ?? null,
      e.verdict?.status ?? null,
    ]);
    await client.query(this.#sql.recordOnTasks, columnArrays(RECORD_ON_TASKS_COLUMNS, rows));
  }

  findExpiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]> {
    return this.#sweeps.expiredClaims(now, limit, silentSince);
  }

  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return this.#sweeps.runningRuns(targetKind, after, limit);
  }

  findPastDeadline(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#sweeps.pastDeadline(now, limit);
  }

  findQueueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#sweeps.queueTimeouts(now, limit);
  }

  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#sweeps.lostHandlerRuns(silentSince, limit);
  }

  purge(before: Instant, limit: number): Promise<number> {
    return this.#sweeps.purge(before, limit);
  }

  queueStats(now: Instant): Promise<QueueStats> {
    return this.#sweeps.queueStats(now);
  }

  nextRunWakeAt(): Promise<Instant | null> {
    return this.#sweeps.nextRunWakeAt();
  }

  findUnservedHandlerRuns(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]> {
    return this.#unserved.find(dueBefore, served, limit);
  }
}

function buildStatements(ctx: PostgresContext) {
  const runs = ctx.runSql.table;
  const tasks = ctx.tasksTable;
  const state = ctx.taskStateTable;
  const select = `SELECT ${ctx.runSql.columns} FROM ${runs} AS r`;
  const at = (param: string) => msToTimestamp(`${param}::int8`);
  return preparedAll({
    find: `${select} WHERE r.id = $1::text AND ($2::text IS NULL OR r.owner = $2)`,
    manual: `${select} WHERE r.task_id = $1::text AND r.trigger = 'manual' AND r.idempotency_key = $2::text`,
    list:
      `${select} WHERE r.task_id = $1::text AND ($2::text IS NULL OR r.owner = $2)` +
      ` AND ($3::text IS NULL OR r.status = $3) AND ($4::text IS NULL OR r.trigger = $4)` +
      ` AND ($5::int8 IS NULL OR (r.scheduled_for, r.id) < (${at("$5")}, $6::text))` +
      ` ORDER BY r.scheduled_for DESC, r.id DESC LIMIT $7::int4`,
    // Both by primary key from the unnested ids, each probe a lateral subquery the planner cannot
    // flatten, whatever the statistics say (as a semi-join, or by `id = ANY($1)`, the planner read every
    // task of a 10,000-task burst, or every run of a table never analyzed, to lock 200). The ids are
    // locked in id order: tasks first, then runs.
    lockTasksOfRuns: prepared(
      `SELECT t.id, t.schedule_type, t.options::text AS options, t.target_kind,` +
        ` CASE WHEN t.schedule_type = 'once' THEN t.schedule->>'runAt' END AS once_at, ${untoldColumn("t")}` +
        ` FROM (SELECT DISTINCT k.task_id FROM unnest($1::text[]) AS w(id)` +
        ` CROSS JOIN LATERAL (SELECT task_id FROM ${runs} AS p WHERE p.id = w.id OFFSET 0) AS k` +
        ` ORDER BY k.task_id) AS w CROSS JOIN LATERAL (SELECT p.id, p.schedule_type, p.options,` +
        ` p.target_kind, p.schedule, p.target FROM ${tasks} AS p JOIN ${state} AS v ON v.task_id = p.id` +
        ` WHERE p.id = w.task_id FOR UPDATE OF v) AS t`,
    ),
    // `lockTasksOfRuns` with the tasks whole (a request's `withTask`): the task's state row is the lock
    // every run writer, admission and owner commands take.
    lockWholeTasksOfRuns: prepared(
      `SELECT t.* FROM (SELECT DISTINCT k.task_id FROM unnest($1::text[]) AS w(id)` +
        ` CROSS JOIN LATERAL (SELECT task_id FROM ${runs} AS p WHERE p.id = w.id OFFSET 0) AS k` +
        ` ORDER BY k.task_id) AS w CROSS JOIN LATERAL (SELECT ${taskSelectList("t", "s")},` +
        ` ${calendarItemsColumn(`${ctx.schema.quoted}.calendar_versions`, "t")} FROM ${taskSource(ctx)}` +
        ` WHERE t.id = w.task_id FOR UPDATE OF s) AS t`,
    ),
    lockRuns: prepared(
      `SELECT ${ctx.runSql.columns} FROM (SELECT DISTINCT id FROM unnest($1::text[]) AS w(id)` +
        ` ORDER BY id) AS w CROSS JOIN LATERAL (SELECT * FROM ${runs} AS p WHERE p.id = w.id` +
        ` FOR UPDATE) AS r`,
    ),
    // Launch bookkeeping (last_run_*, a relative run_count) and verdict fields (last_error, and status
    // when a verdict set one): the fields docs/semantics.md#completion gives these two steps, nothing else.
    recordOnTasks: prepared(
      `UPDATE ${state} AS t SET` +
        ` last_run_at = CASE WHEN u.launched THEN ${unnestValue(LAST_RUN_AT)} ELSE t.last_run_at END,` +
        ` last_run_id = CASE WHEN u.launched THEN u.last_run_id ELSE t.last_run_id END,` +
        ` run_count = t.run_count + u.launches,` +
        ` last_error = CASE WHEN u.judged THEN u.last_error ELSE t.last_error END,` +
        ` status = COALESCE(u.status, t.status)` +
        ` ${keyedUnnestFrom(RECORD_ON_TASKS_COLUMNS)}`,
    ),
    // By primary key, the task by its own (deleted or not).
    runWithTask: `${claimedRunSelect(ctx)} WHERE r.id = $1::text`,
  });
}
