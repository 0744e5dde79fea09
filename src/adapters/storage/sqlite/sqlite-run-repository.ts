/**
 * Runs on SQLite: scoped reads, the claim round (sqlite-claim.ts) and the fenced run writes
 * (sqlite-fenced-run-writes.ts), each in one `BEGIN IMMEDIATE` transaction, the sweeps' reads
 * (sqlite-run-sweeps.ts) and retention.
 */
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import type {
  ClaimedRun,
  ClaimRequest,
  RunChangeRequest,
  RunChangeResult,
  QueueStats,
  RunRepository,
  UnservedRun,
} from "../../../domain/ports/run-repository.js";
import type { OwnerScope, Page, RunQuery, RunSearch } from "../../../domain/ports/queries.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Run, RunTrigger } from "../../../domain/run.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import { settle, StatementCache } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { runFromRow } from "./sqlite-rows.js";
import type { RunRow } from "./sqlite-rows.js";
import { SqliteClaim } from "./sqlite-claim.js";
import { SqliteFencedRunWrites } from "./sqlite-fenced-run-writes.js";
import { SqliteRunSweeps } from "./sqlite-run-sweeps.js";
import { SqliteUnservedRuns } from "./sqlite-unserved-runs.js";
import { sqliteRunSearch } from "./sqlite-run-search.js";
import { RUN_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import { taskOfRun } from "./sqlite-task-definitions.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

type ListParams = Record<string, string | number>;

export class SqliteRunRepository implements RunRepository {
  readonly #sweeps: SqliteRunSweeps;
  readonly #unserved: SqliteUnservedRuns;
  readonly #claim: SqliteClaim;
  readonly #fenced: SqliteFencedRunWrites;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #visibleRun: Statement<[{ id: string; owner: string | null }], RunRow>;
  readonly #manualRun: Statement<[string, string], RunRow>;
  readonly #recentRuns: Statement<[string, number, string], number>;
  readonly #recentScheduledRuns: Statement<[string, number], number>;
  readonly #lists: StatementCache<[ListParams], RunRow>;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
    definitions: SqliteTaskDefinitions;
  }) {
    const db = options.db;
    this.#sweeps = new SqliteRunSweeps(options);
    this.#unserved = new SqliteUnservedRuns(db);
    this.#lists = new StatementCache(db);
    this.#claim = new SqliteClaim(options);
    this.#fenced = new SqliteFencedRunWrites(options);
    this.#shared = options.statements;
    this.#definitions = options.definitions;
    this.#visibleRun = db.prepare(
      `${RUN_SELECT} WHERE id = @id AND (@owner IS NULL OR owner = @owner)`,
    );
    // Requested runs walk runs_owner_requested_idx's range for the owner (its predicate is written out);
    // scheduled ones, which no quota counts, the owner's listing index.
    this.#recentRuns = db
      .prepare<[string, number, string], number>(
        `SELECT count(*) FROM runs WHERE owner = ? AND queued_at >= ? AND "trigger" = ?` +
          ` AND "trigger" <> 'scheduled'`,
      )
      .pluck();
    this.#recentScheduledRuns = db
      .prepare<[string, number], number>(
        `SELECT count(*) FROM runs WHERE owner = ? AND queued_at >= ? AND "trigger" = 'scheduled'`,
      )
      .pluck();
    this.#manualRun = db.prepare<[string, string], RunRow>(
      `${RUN_SELECT} WHERE task_id = ? AND idempotency_key = ? AND "trigger" = 'manual'`,
    );
  }

  findRun(scope: OwnerScope, id: RunId): Promise<Run | null> {
    return settle(() => {
      const row = this.#visibleRun.get({ id, owner: scope.kind === "owner" ? scope.owner : null });
      return row === undefined ? null : runFromRow(row);
    });
  }

  countRecentRuns(owner: OwnerId, trigger: RunTrigger, since: Instant): Promise<number> {
    return settle(() =>
      trigger === "scheduled"
        ? (this.#recentScheduledRuns.get(owner, since) ?? 0)
        : (this.#recentRuns.get(owner, since, trigger) ?? 0),
    );
  }

  findManualRun(taskId: TaskId, idempotencyKey: string): Promise<Run | null> {
    return settle(() => {
      const row = this.#manualRun.get(taskId, idempotencyKey);
      return row === undefined ? null : runFromRow(row);
    });
  }

  findRunWithTask(id: RunId): Promise<ClaimedRun | null> {
    return settle(() => {
      const row = this.#shared.runById.get(id);
      if (row === undefined) return null;
      const run = runFromRow(row);
      return { run, task: taskOfRun(this.#shared, this.#definitions, run.taskId, new Map()) };
    });
  }

  listRuns(scope: OwnerScope, taskId: TaskId, query: RunQuery): Promise<Page<Run>> {
    return settle(() => {
      const where = ["task_id = @task_id"];
      const params: ListParams = { task_id: taskId, limit: query.limit + 1 };
      const filter = (clause: string, name: string, value: string): void => {
        where.push(clause);
        params[name] = value;
      };
      if (scope.kind === "owner") filter("owner = @owner", "owner", scope.owner);
      if (query.status !== undefined) filter("status = @status", "status", query.status);
      if (query.trigger !== undefined) filter(`"trigger" = @trigger`, "trigger", query.trigger);
      if (query.cursor !== undefined) {
        const [scheduledFor, id] = decodeCursor(query.cursor);
        where.push("(scheduled_for, id) < (@before_at, @before_id)");
        params["before_at"] = scheduledFor;
        params["before_id"] = id;
      }
      const sql = `${RUN_SELECT} WHERE ${where.join(" AND ")}
        ORDER BY scheduled_for DESC, id DESC LIMIT @limit`;
      const rows = this.#lists.get(sql).all(params).map(runFromRow);
      return pageOf(rows, query.limit, (run) => [run.scheduledFor, run.id]);
    });
  }

  searchRuns(scope: OwnerScope, search: RunSearch): Promise<Page<Run>> {
    return settle(() => {
      const { sql, params } = sqliteRunSearch(scope, search);
      const rows = this.#lists.get(sql).all(params).map(runFromRow);
      return pageOf(rows, search.limit, (run) => [run.scheduledFor, run.id]);
    });
  }

  claimRuns(
    request: ClaimRequest,
    select: Parameters<RunRepository["claimRuns"]>[1],
    claim: Parameters<RunRepository["claimRuns"]>[2],
  ): Promise<readonly ClaimedRun[]> {
    return this.#claim.claimRuns(request, select, claim);
  }

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    return this.#fenced.changeRuns(requests);
  }

  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return settle(() => this.#sweeps.runningRuns(targetKind, after, limit));
  }

  findExpiredClaims(
    now: Instant,
    limit: number,
    silentSince?: Instant,
  ): Promise<readonly ClaimedRun[]> {
    return settle(() => this.#sweeps.expiredClaims(now, limit, silentSince));
  }

  findPastDeadline(now: Instant, limit: number): Promise<readonly RunId[]> {
    return settle(() => this.#sweeps.pastDeadline(now, limit));
  }

  findQueueTimeouts(now: Instant, limit: number): Promise<readonly RunId[]> {
    return settle(() => this.#sweeps.queueTimeouts(now, limit));
  }

  findLostHandlerRuns(silentSince: Instant, limit: number): Promise<readonly RunId[]> {
    return settle(() => this.#sweeps.lostHandlerRuns(silentSince, limit));
  }

  findUnservedHandlerRuns(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]> {
    return settle(() => this.#unserved.find(dueBefore, served, limit));
  }

  purge(before: Instant, limit: number): Promise<number> {
    return settle(() => this.#sweeps.purge(before, limit));
  }

  nextRunWakeAt(): Promise<Instant | null> {
    return settle(() => this.#sweeps.nextRunWakeAt());
  }

  queueStats(now: Instant): Promise<QueueStats> {
    return settle(() => this.#sweeps.queueStats(now));
  }
}
