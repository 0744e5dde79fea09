/**
 * The coordinator's finds on PostgreSQL (docs/architecture.md#cadence): expired launch claims (and those
 * of silent replicas), running runs by target kind, deadlines, queue timeouts, runs lost with their
 * replica, retention, the queue's statistics and the next instant a run needs attention. The active runs
 * are read through the budget's slots and the queued ones through `run_ready`, never an index of the
 * ledger that depends on a run's status (docs/storage.md#the-run-model-on-postgresql).
 */
import type { RunId } from "../../../domain/ids.js";
import { runId } from "../../../domain/ids.js";
import type { ClaimedRun, QueueStats } from "../../../domain/ports/run-repository.js";
import type { TargetKind } from "../../../domain/target.js";
import { TERMINAL_RUN_STATUSES } from "../../../domain/run.js";
import type { Instant } from "../../../domain/time.js";
import { claimedRunFromRow, claimedRunSelect } from "./postgres-claimed-run.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { instantOrNull, integer, record, text } from "./postgres-rows.js";
import { literalList, msToTimestamp, preparedAll, timestampToMs } from "./postgres-sql.js";
import { withTransaction } from "./with-transaction.js";

export class PostgresRunSweeps {
  readonly #ctx: PostgresContext;
  readonly #sql: ReturnType<typeof buildStatements>;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#sql = buildStatements(ctx);
  }

  async expiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]> {
    const result = await this.#ctx.pool.query(this.#sql.expiredClaims, [now, limit]);
    const found = result.rows.map((row) => claimedRunFromRow(row, this.#ctx.secrets));
    const room = limit - found.length;
    if (silentSince === undefined || room <= 0) return found;
    const silent = await this.#ctx.pool.query(this.#sql.claimsOfSilent, [now, silentSince, room]);
    return [...found, ...silent.rows.map((row) => claimedRunFromRow(row, this.#ctx.secrets))];
  }

  async runningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    const result = await this.#ctx.pool.query(this.#sql.runningRuns, [targetKind, after, limit]);
    return result.rows.map((row) => claimedRunFromRow(row, this.#ctx.secrets));
  }

  pastDeadline(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#ids(this.#sql.pastDeadline, [now, limit]);
  }

  queueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#ids(this.#sql.queueTimeouts, [now, limit]);
  }

  lostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]> {
    return this.#ids(this.#sql.lostHandlerRuns, [silentSince, limit]);
  }

  async purge(before: Instant, limit: number): Promise<number> {
    return withTransaction(this.#ctx.pool, async (client) => {
      const runs = await client.query(this.#sql.purgeRuns, [before, limit]);
      await client.query(this.#sql.purgeHolds, [before, limit]);
      const runsPurged = integer(record(runs.rows[0]), "purged");
      const deleted = await client.query(this.#sql.anyDeletedTask);
      if (record(deleted.rows[0])["deleted"] !== true) return runsPurged;
      const tasks = await client.query(this.#sql.purgeTasks, [limit]);
      return runsPurged + integer(record(tasks.rows[0]), "purged");
    });
  }

  async queueStats(now: Instant): Promise<QueueStats> {
    const result = await this.#ctx.pool.query(this.#sql.queueStats, [now]);
    const row = record(result.rows[0]);
    return {
      queued: integer(row, "queued"),
      oldestReadyAt: instantOrNull(row, "oldest_ready_at"),
      active: integer(row, "active"),
    };
  }

  async nextRunWakeAt(): Promise<Instant | null> {
    const result = await this.#ctx.pool.query(this.#sql.nextWake);
    return instantOrNull(record(result.rows[0]), "at");
  }

  async #ids(sql: string | PostgresStatement, values: unknown[]): Promise<RunId[]> {
    const result = await this.#ctx.pool.query(sql, values);
    return result.rows.map((row) => runId(text(record(row), "id")));
  }
}

function buildStatements(ctx: PostgresContext) {
  const runs = ctx.runSql.table;
  const tasks = ctx.tasksTable;
  // The launching and running runs, found through the budget's slots (at most one run per slot, a
  // few hundred rows): each slot's run by primary key. A run is launching or running only while it
  // holds a slot (bound in the claim's statement, freed by the slot trigger), so no index of `runs`
  // needs to know which runs are active (migration 21, docs/storage.md#write-ahead-log-per-fire). One
  // array of the slots' run ids, not a lookup per slot: a plan made while `runs` looked empty (a fresh
  // database, whose migration analysed it) scans `runs` once per call, not once per slot. The statements
  // that read it are sent unnamed (`planned` below), so that no such plan is kept.
  const active =
    `(SELECT * FROM ${runs} AS p WHERE p.id = ANY (ARRAY(SELECT s.run_id` +
    ` FROM ${ctx.schema.quoted}.claim_slots AS s WHERE s.run_id IS NOT NULL))) AS r`;
  const at = (param: string) => msToTimestamp(`${param}::int8`);
  // The queued runs (migration 24): a narrow table the claim deletes from, so no index of `runs`
  // depends on the status.
  const ready = `${ctx.schema.quoted}.run_ready`;
  const holds = `${ctx.schema.quoted}.run_holds`;
  const slots = `${ctx.schema.quoted}.claim_slots`;
  // Planned at each call against the tables as they are: named, each kept the plan its connection
  // made first, on a new database's empty `runs`, a scan of `runs` whole at every call (28 ms for the
  // next wake-up at 80,000 runs, twice a second). These run once a pass or a sweep, and planning one
  // takes a fraction of a millisecond (docs/storage.md#plans-made-while-runs-looked-empty).
  const planned = {
    expiredClaims:
      `${claimedRunSelect(ctx, active)} WHERE r.status = 'launching' AND r.claim_expires_at < ${at("$1")}` +
      ` ORDER BY r.claim_expires_at, r.id LIMIT $2::int4`,
    // The claims not yet expired (a budget's worth at most, through the slots) of replicas silent
    // since $2: reconciled at once rather than at their expiry.
    claimsOfSilent:
      `${claimedRunSelect(ctx, active)} WHERE r.status = 'launching' AND r.claim_expires_at >= ${at("$1")}` +
      ` AND r.claimed_by IN (SELECT p.id FROM ${ctx.schema.quoted}.replicas AS p` +
      ` WHERE p.heartbeat_at < ${at("$2")})` +
      ` ORDER BY r.claim_expires_at, r.id LIMIT $3::int4`,
    // Running runs hold a slot: the walk stays within the budget's slots.
    runningRuns:
      `${claimedRunSelect(ctx, active)} WHERE r.status = 'running' AND t.task__target_kind = $1::text` +
      ` AND ($2::text IS NULL OR r.id > $2::text) ORDER BY r.id LIMIT $3::int4`,
    pastDeadline:
      `SELECT r.id FROM ${active} WHERE r.status IN ('launching', 'running')` +
      ` AND r.deadline_at < ${at("$1")} ORDER BY r.deadline_at, r.id LIMIT $2::int4`,
    // The task's kind by primary key for each running run (a budget's worth at most, through the
    // slots): joined, the planner without statistics hashed every task at each sweep.
    lostHandlerRuns:
      `SELECT r.id FROM ${active}` +
      ` LEFT JOIN ${ctx.schema.quoted}.replicas AS h ON h.id = r.claimed_by` +
      ` WHERE r.status = 'running'` +
      ` AND (SELECT t.target_kind FROM ${tasks} AS t WHERE t.id = r.task_id) = 'handler'` +
      ` AND (h.id IS NULL OR h.heartbeat_at < ${at("$1")})` +
      ` ORDER BY r.launched_at, r.id LIMIT $2::int4`,
    // The queued count over run_ready, the active one over the slots: never the ledger.
    queueStats:
      `SELECT (SELECT count(*) FROM ${ready})::int8 AS queued,` +
      ` ${timestampToMs(
        `(SELECT min(not_before) FROM ${ready}` +
          ` WHERE not_before <= ${msToTimestamp("$1::int8")})`,
      )} AS oldest_ready_at,` +
      ` (SELECT count(*) FROM ${active} WHERE r.status IN ('launching', 'running'))::int8 AS active`,
    nextWake: `SELECT ${timestampToMs(
      `LEAST((SELECT min(not_before) FROM ${ready}),` +
        ` (SELECT LEAST(min(r.claim_expires_at) FILTER (WHERE r.status = 'launching'),` +
        ` min(r.deadline_at) FILTER (WHERE r.status IN ('launching', 'running'))) FROM ${active}))`,
    )} AS at`,
    // Whether any task is deleted: the first entry of tasks_deleted_idx, by an ordered walk of it (a
    // scan of `tasks` would need a sort, so no plan takes it). Retention runs the purge of deleted tasks
    // only then: without statistics on `tasks` the planner takes most tasks for deleted and, with a
    // bloated `claim_slots` (no index has a lease's task), read `tasks` whole for it at every sweep (68
    // ms at 100,000 tasks, docs/storage.md#plans-made-while-runs-looked-empty).
    anyDeletedTask:
      `SELECT (SELECT f.deleted_at FROM ${tasks} AS f WHERE f.deleted_at IS NOT NULL` +
      ` ORDER BY f.deleted_at, f.id LIMIT 1) IS NOT NULL AS deleted`,
  };
  return {
    ...planned,
    ...preparedAll({
      // The queue timeout is the task's current option (a policy edit applies at once), read from its JSON
      // by primary key for each queued run: joined, the planner hashed every task at each sweep (a
      // sequential scan of `tasks` in docs/storage-plans.md at 10,000 tasks).
      queueTimeouts:
        `SELECT q.run_id AS id FROM ${ready} AS q WHERE q.queued_at +` +
        ` (SELECT (t.options ->> 'queueTimeoutMs')::int8 FROM ${tasks} AS t WHERE t.id = q.task_id)` +
        ` * interval '1 millisecond' < ${at("$1")}` +
        ` ORDER BY q.queued_at, q.run_id LIMIT $2::int4`,
      // Walks runs_queued_at_idx up to the cutoff (a run is queued before it finishes, so every run
      // finished before the cutoff was queued before it): no index mentions finished_at, which the
      // verdict writes (migration 24). The runs passed over are the ones queued before the cutoff and
      // not finished before it: the active ones and a few long ones, not the history.
      purgeRuns:
        `WITH doomed AS (SELECT id FROM ${runs} WHERE queued_at < ${at("$1")}` +
        ` AND finished_at < ${at("$1")}` +
        ` AND status IN (${literalList(TERMINAL_RUN_STATUSES)}) ORDER BY queued_at LIMIT $2::int4),` +
        ` gone AS (DELETE FROM ${runs} AS r USING doomed WHERE r.id = doomed.id RETURNING r.id)` +
        ` SELECT count(*)::int4 AS purged FROM gone`,
      // Holds whose deadline passed before the cutoff hold nothing any more (their runs may be kept).
      purgeHolds:
        `DELETE FROM ${holds} WHERE run_id IN (SELECT run_id FROM ${holds}` +
        ` WHERE deadline_at < ${at("$1")} LIMIT $2::int4)`,
      // A deleted task goes once no run of it is active; its remaining terminal runs go with it, in the
      // same statement (no foreign key cascades since migration 17), and count, as in the memory store.
      // The tasks are deleted (locked) in the statement that deletes their runs: a deleted task takes no
      // new run (admission and owner commands skip it), so none is left behind.
      purgeTasks:
        `WITH doomed AS (SELECT t.id FROM ${tasks} AS t WHERE t.deleted_at IS NOT NULL` +
        ` AND NOT EXISTS (SELECT 1 FROM ${ready} AS q WHERE q.task_id = t.id)` +
        ` AND NOT EXISTS (SELECT 1 FROM ${slots} AS s WHERE s.run_task_id = t.id)` +
        ` ORDER BY t.deleted_at, t.id LIMIT $1::int4),` +
        ` gone AS (DELETE FROM ${tasks} AS t USING doomed WHERE t.id = doomed.id RETURNING t.id),` +
        ` gone_runs AS (DELETE FROM ${runs} AS r USING gone WHERE r.task_id = gone.id RETURNING r.id)` +
        ` SELECT ((SELECT count(*) FROM gone) + (SELECT count(*) FROM gone_runs))::int4 AS purged`,
    }),
  };
}
