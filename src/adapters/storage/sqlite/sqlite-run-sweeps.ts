/**
 * The SQLite queries behind the coordinator's sweeps (docs/architecture.md#cadence): expired launch claims, deadlines, queue
 * timeouts, runs lost with their replica, retention, and the next instant a run needs attention. Each
 * query walks a named partial index, so its cost follows the rows due, not the size of the history.
 */
import type { RunId } from "../../../domain/ids.js";
import type { ClaimedRun, QueueStats } from "../../../domain/ports/run-repository.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { runFromRow, taskFromRow } from "./sqlite-rows.js";
import type { RunRow } from "./sqlite-rows.js";
import { RUN_SELECT, SLOT, TERMINAL } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";

type IdsBefore = Statement<[number, number], { id: string }>;

export class SqliteRunSweeps {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #expiredClaims: Statement<[number, number], RunRow>;
  readonly #claimsOfSilent: Statement<[number, number, number], RunRow>;
  readonly #runningRuns: Statement<[string, string | null, string | null, number], RunRow>;
  readonly #pastDeadline: IdsBefore;
  readonly #queueTimeouts: IdsBefore;
  readonly #lostHandlerRuns: IdsBefore;
  readonly #purgeRuns: Statement<[{ before: number; limit: number }]>;
  readonly #goneTasks: Statement<[number], { id: string }>;
  readonly #deleteRunsOf: Statement<[string]>;
  readonly #deleteTask: Statement<[string]>;
  readonly #wake: Statement<[], { wake: number | null }>;
  readonly #queueStats: Statement<
    [number],
    { queued: number; oldest_ready_at: number | null; active: number }
  >;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
  }) {
    const db = options.db;
    this.#tx = options.tx;
    this.#shared = options.statements;
    // The launching and running runs are run_active's rows (at most the budget): each sweep of them
    // reads those rows and probes each run by its key, never an index of the ledger (migration 17).
    const active = "id IN (SELECT run_id FROM run_active)";
    this.#expiredClaims = db.prepare(
      `${RUN_SELECT} WHERE ${active} AND status = 'launching' AND claim_expires_at < ?
       ORDER BY claim_expires_at, id LIMIT ?`,
    );
    // The claims not yet expired (a budget's worth at most) of replicas silent since the given
    // instant: reconciled at once rather than at their expiry.
    this.#claimsOfSilent = db.prepare(
      `${RUN_SELECT} WHERE ${active} AND status = 'launching' AND claim_expires_at >= ?
         AND claimed_by IN (SELECT id FROM replicas WHERE heartbeat_at < ?)
       ORDER BY claim_expires_at, id LIMIT ?`,
    );
    this.#runningRuns = db.prepare(
      `${RUN_SELECT} WHERE ${active} AND status = 'running'
         AND task_id IN (SELECT id FROM tasks WHERE target_kind = ?)
         AND (? IS NULL OR id > ?)
       ORDER BY id LIMIT ?`,
    );
    this.#pastDeadline = db.prepare(
      `SELECT id FROM runs WHERE ${active} AND status IN ${SLOT} AND deadline_at < ?
       ORDER BY deadline_at, id LIMIT ?`,
    );
    // The timeout is read from the task's current options (as the memory store does), not copied onto
    // the run: the scan reads the queued runs only (run_ready).
    this.#queueTimeouts = db.prepare(
      `SELECT q.run_id AS id FROM run_ready q JOIN tasks t ON t.id = q.task_id
       WHERE q.queued_at + json_extract(t.options, '$.queueTimeoutMs') < ?
       ORDER BY q.queued_at, q.run_id LIMIT ?`,
    );
    this.#lostHandlerRuns = db.prepare(
      `SELECT r.id FROM runs r
         JOIN tasks t ON t.id = r.task_id
         LEFT JOIN replicas p ON p.id = r.claimed_by
       WHERE r.id IN (SELECT run_id FROM run_active) AND r.status = 'running'
         AND t.target_kind = 'handler' AND (p.id IS NULL OR p.heartbeat_at < ?)
       ORDER BY r.launched_at, r.id LIMIT ?`,
    );
    // Walks runs_queued_at_idx up to the cutoff: a run is queued before it finishes, so every run
    // finished before the cutoff was queued before it; the rows passed over are the active ones and
    // the few that finished after the cutoff, never the history (docs/storage.md#retention-on-sqlite).
    this.#purgeRuns = db.prepare(
      `DELETE FROM runs WHERE id IN (
         SELECT id FROM runs
         WHERE queued_at < @before AND finished_at < @before AND status IN ${TERMINAL}
         ORDER BY queued_at LIMIT @limit)`,
    );
    this.#goneTasks = db.prepare(
      `SELECT id FROM tasks t
       WHERE deleted_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM run_ready q WHERE q.task_id = t.id)
         AND NOT EXISTS (SELECT 1 FROM run_active a WHERE a.task_id = t.id)
       ORDER BY deleted_at, id LIMIT ?`,
    );
    this.#deleteRunsOf = db.prepare("DELETE FROM runs WHERE task_id = ?");
    this.#deleteTask = db.prepare("DELETE FROM tasks WHERE id = ?");
    this.#wake = db.prepare(
      `SELECT min(at) AS wake FROM (
         SELECT min(not_before) AS at FROM run_ready
         UNION ALL
         SELECT min(claim_expires_at) FROM runs WHERE ${active} AND status = 'launching'
         UNION ALL
         SELECT min(deadline_at) FROM runs WHERE ${active} AND status = 'running')`,
    );
    this.#queueStats = db.prepare(
      `SELECT (SELECT count(*) FROM run_ready) AS queued,
         (SELECT min(not_before) FROM run_ready WHERE not_before <= ?) AS oldest_ready_at,
         (SELECT count(*) FROM run_active) AS active`,
    );
  }

  expiredClaims(now: Instant, limit: number, silentSince?: Instant): ClaimedRun[] {
    return this.#tx.read(() => {
      const rows = this.#expiredClaims.all(now, Math.max(0, limit));
      const room = Math.max(0, limit) - rows.length;
      if (silentSince !== undefined && room > 0) {
        rows.push(...this.#claimsOfSilent.all(now, silentSince, room));
      }
      return this.#withTasks(rows);
    });
  }

  /** The rows' runs, each with its task (a run whose task is gone is left out). */
  #withTasks(rows: readonly RunRow[]): ClaimedRun[] {
    const runs = rows.map(runFromRow);
    if (runs.length === 0) return [];
    const ids = JSON.stringify([...new Set(runs.map((run) => run.taskId))]);
    const tasks = new Map<string, Task>(
      this.#shared.tasksByIds
        .all(ids)
        .map((row) => [row.id, taskFromRow(row, this.#shared.secrets)]),
    );
    return runs.flatMap((run) => {
      const task = tasks.get(run.taskId);
      return task === undefined ? [] : [{ run, task }];
    });
  }

  runningRuns(targetKind: string, after: RunId | null, limit: number): ClaimedRun[] {
    return this.#tx.read(() =>
      this.#withTasks(this.#runningRuns.all(targetKind, after, after, Math.max(0, limit))),
    );
  }

  pastDeadline(now: Instant, limit: number): RunId[] {
    return ids(this.#pastDeadline.all(now, Math.max(0, limit)));
  }

  queueTimeouts(now: Instant, limit: number): RunId[] {
    return ids(this.#queueTimeouts.all(now, Math.max(0, limit)));
  }

  lostHandlerRuns(silentSince: Instant, limit: number): RunId[] {
    return ids(this.#lostHandlerRuns.all(silentSince, Math.max(0, limit)));
  }

  /** Terminal runs finished before `before`, then deleted tasks with no active run (and their runs). */
  purge(before: Instant, limit: number): number {
    const max = Math.max(0, limit);
    return this.#tx.write(() => {
      let deleted = this.#purgeRuns.run({ before, limit: max }).changes;
      for (const { id } of this.#goneTasks.all(max)) {
        deleted += this.#deleteRunsOf.run(id).changes;
        deleted += this.#deleteTask.run(id).changes;
      }
      return deleted;
    });
  }

  queueStats(now: Instant): QueueStats {
    const row = this.#queueStats.get(now);
    if (row === undefined) return { queued: 0, oldestReadyAt: null, active: 0 };
    return {
      queued: row.queued,
      oldestReadyAt: row.oldest_ready_at === null ? null : instant(row.oldest_ready_at),
      active: row.active,
    };
  }

  nextRunWakeAt(): Instant | null {
    const wake = this.#wake.get()?.wake ?? null;
    return wake === null ? null : instant(wake);
  }
}

function ids(rows: readonly { id: string }[]): RunId[] {
  return rows.map((row) => row.id as RunId);
}
