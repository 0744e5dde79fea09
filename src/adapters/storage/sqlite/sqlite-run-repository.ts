/**
 * Runs on SQLite: scoped reads, claims within the global budget, fenced changes. Claims and changes run
 * in one `BEGIN IMMEDIATE` transaction each, so the budget count, the busy threads and tasks and the
 * writes all happen under the single write lock; the partial unique indexes back that up.
 */
import { randomUUID } from "node:crypto";
import type { ClaimCandidate, ClaimSelectionInput, OwnerShare } from "../../../domain/claim.js";
import { ownerMaxActiveRuns, threadKey } from "../../../domain/claim.js";
import { LeaseLostError, NotFoundError } from "../../../domain/errors.js";
import type { FencingToken, OwnerId, RunId, TaskId, ThreadId } from "../../../domain/ids.js";
import { fencingToken } from "../../../domain/ids.js";
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
import type { RunChange, RunTaskContext } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import { applyRunChanges, batchRunIds, taskBookkeepingOf } from "../shared/run-change-batch.js";
import { firstClaimWindow, fullClaimWindow, needsWiderWindow } from "../shared/claim-window.js";
import type { TaskBookkeeping } from "../shared/run-change-batch.js";
import { settle, StatementCache } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { brokenRunKey } from "./sqlite-errors.js";
import { runFromRow, runTaskContextFromRow, runToRow } from "./sqlite-rows.js";
import type { RunRow } from "./sqlite-rows.js";
import { SqliteRunSweeps } from "./sqlite-run-sweeps.js";
import { SqliteUnservedRuns } from "./sqlite-unserved-runs.js";
import { sqliteRunSearch } from "./sqlite-run-search.js";
import { RUN_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

type ListParams = Record<string, string | number>;

interface LaunchFields {
  readonly id: string;
  readonly at: number;
  readonly run: string;
  readonly add: number;
  readonly error: string | null;
}

interface CandidateRow {
  readonly id: string;
  readonly task_id: string;
  readonly owner: string;
  readonly thread_scope: string;
  readonly thread_id: string;
  readonly exclusive: number;
  readonly not_before: number;
  readonly queued_at: number;
  readonly handler_name: string | null;
  /** 1 when the run's thread holds a slot. */
  readonly thread_busy: number;
  /** 1 when the run is exclusive and its task holds a slot. */
  readonly task_busy: number;
  /** 1 when an earlier queued run of its thread exists (of another owner: see `#ownerHeads`). */
  readonly queued_behind: number;
}

export class SqliteRunRepository implements RunRepository {
  readonly #sweeps: SqliteRunSweeps;
  readonly #unserved: SqliteUnservedRuns;
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #visibleRun: Statement<[{ id: string; owner: string | null }], RunRow>;
  readonly #manualRun: Statement<[string, string], RunRow>;
  readonly #recentRuns: Statement<[string, number, string], number>;
  readonly #recentScheduledRuns: Statement<[string, number], number>;
  readonly #slotsHeld: Statement<[], number>;
  readonly #candidates: Statement<[{ owner: string; window: number; now: number }], CandidateRow>;
  readonly #queuedOwners: Statement<[], string>;
  readonly #ownerSlots: Statement<[], { owner: string; held: number }>;
  readonly #recordLaunch: Statement<[{ id: string; at: number; run: string; add: number }]>;
  readonly #recordError: Statement<[{ id: string; error: string | null }]>;
  readonly #recordVerdict: Statement<[{ id: string; error: string | null; status: string }]>;
  readonly #recordLaunchError: Statement<[LaunchFields]>;
  readonly #recordLaunchVerdict: Statement<[LaunchFields & { status: string }]>;
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
    this.#tx = options.tx;
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
    // The budget's slots held: the rows of run_active (migration 17).
    this.#slotsHeld = db.prepare<[], number>(`SELECT count(*) FROM run_active`).pluck(true);
    // One owner's head of the queue (run_ready's key), each run with whether its thread (and, exclusive,
    // its task) holds a slot, and whether an earlier queued run of its thread exists: the lookups probe
    // run_active's key and run_active_task_uq, and run_ready_thread_idx for shared threads (a thread
    // named like a run is that run's own: its key is probed in runs) (docs/storage.md#fair-share-across-owners).
    // A cancelled run whose target was not told holds its thread and task until its deadline
    // (run_holds: docs/semantics.md#cancellation).
    this.#candidates = db.prepare<[{ owner: string; window: number; now: number }], CandidateRow>(
      `SELECT q.run_id AS id, q.task_id, q.owner, q.thread_scope, q.thread_id, q."exclusive",
              q.not_before, q.queued_at, t.handler_name,
              (EXISTS (SELECT 1 FROM run_active a
                        WHERE a.thread_scope = q.thread_scope AND a.thread_id = q.thread_id)
               OR EXISTS (SELECT 1 FROM run_holds h WHERE h.thread_scope = q.thread_scope
                        AND h.thread_id = q.thread_id AND h.deadline_at > @now)) AS thread_busy,
              (q."exclusive" = 1 AND (EXISTS (SELECT 1 FROM run_active a
                        WHERE a.task_id = q.task_id AND a."exclusive" = 1)
               OR EXISTS (SELECT 1 FROM run_holds h WHERE h.task_id = q.task_id
                        AND h.task_id IS NOT NULL AND h.deadline_at > @now))) AS task_busy,
              (EXISTS (SELECT 1 FROM run_ready b
                        WHERE b.thread_scope = q.thread_scope AND b.thread_id = q.thread_id
                          AND b.thread_id <> b.run_id
                          AND (b.queued_at < q.queued_at
                               OR (b.queued_at = q.queued_at AND b.run_id < q.run_id)))
               OR (q.thread_id <> q.run_id AND EXISTS (SELECT 1 FROM runs x WHERE x.id = q.thread_id
                          AND x.thread_scope = q.thread_scope AND x.thread_id = x.id
                          AND x.status = 'queued'
                          AND (x.queued_at < q.queued_at
                               OR (x.queued_at = q.queued_at AND x.id < q.run_id)))))
                AS queued_behind
       FROM run_ready q JOIN tasks t ON t.id = q.task_id
       WHERE q.owner = @owner
       ORDER BY q.queued_at, q.run_id LIMIT @window`,
    );
    // The owners with queued runs: a skip scan of run_ready's key, one probe per owner.
    this.#queuedOwners = db
      .prepare<[], string>(
        `WITH RECURSIVE o(owner) AS (
           SELECT (SELECT owner FROM run_ready ORDER BY owner LIMIT 1)
           UNION ALL
           SELECT (SELECT r.owner FROM run_ready r WHERE r.owner > o.owner ORDER BY r.owner LIMIT 1)
             FROM o WHERE o.owner IS NOT NULL)
         SELECT owner FROM o WHERE owner IS NOT NULL`,
      )
      .pluck(true);
    this.#ownerSlots = db.prepare<[], { owner: string; held: number }>(
      `SELECT owner, count(*) AS held FROM run_active GROUP BY owner`,
    );
    // Relative: a launch never writes back a run_count it read (docs/semantics.md#completion, disjoint writers).
    this.#recordLaunch = db.prepare(
      `UPDATE task_state SET last_run_at = @at, last_run_id = @run, run_count = run_count + @add
       WHERE task_id = @id`,
    );
    // Two statements: a verdict without a status must not touch task_state_due_idx (its predicate
    // names status).
    this.#recordError = db.prepare("UPDATE task_state SET last_error = @error WHERE task_id = @id");
    this.#recordVerdict = db.prepare(
      "UPDATE task_state SET last_error = @error, status = @status WHERE task_id = @id",
    );
    const launch = "last_run_at = @at, last_run_id = @run, run_count = run_count + @add";
    this.#recordLaunchError = db.prepare(
      `UPDATE task_state SET ${launch}, last_error = @error WHERE task_id = @id`,
    );
    this.#recordLaunchVerdict = db.prepare(
      `UPDATE task_state SET ${launch}, last_error = @error, status = @status WHERE task_id = @id`,
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
      return { run, task: this.#taskOf(run.taskId, new Map()) };
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
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
    claim: (run: Run, task: Task, token: FencingToken) => Run,
  ): Promise<readonly ClaimedRun[]> {
    return settle(() =>
      this.#tx.write(() => {
        // Read under the write lock: no other claimer can change the count until this commits.
        const budget = Math.max(
          0,
          Math.min(request.maxConcurrentRuns - (this.#slotsHeld.get() ?? 0), request.limit),
        );
        if (budget === 0) return [];
        const picked = this.#choose(request.limit, budget, request.share, request.now, select);
        if (picked.length === 0) return [];
        // The chosen runs and their tasks in one statement each: a point read per run cost about twice
        // as much per row (measured on 2,000-run bursts). Claiming one run changes no other run's row.
        const rows = new Map<string, RunRow>();
        for (const row of this.#shared.runsByIds.all(JSON.stringify(picked.map((c) => c.id)))) {
          rows.set(row.id, row);
        }
        // Each task's state read narrow, its definition held or read whole when its row changed
        // (docs/storage.md#the-claim-reads-narrow-rows).
        const tasks = this.#definitions.tasksOf([
          ...new Set([...rows.values()].map((row) => row.task_id)),
        ]);
        const claimed: ClaimedRun[] = [];
        for (const candidate of picked) {
          // The budget is the store's to keep: never more than it, whatever `select` returned.
          if (claimed.length >= budget) break;
          const row = rows.get(candidate.id);
          if (row?.status !== "queued") continue;
          const task = this.#taskOf(row.task_id, tasks);
          const run = claim(runFromRow(row), task, fencingToken(randomUUID()));
          if (this.#writeClaim(run, row)) claimed.push({ run, task });
        }
        return claimed;
      }),
    );
  }

  changeRun(
    id: RunId,
    guard: { readonly token?: FencingToken },
    decide: (run: Run, task: Task) => RunChange | null,
  ): Promise<RunChange | null> {
    return settle(() =>
      this.#tx.write(() => {
        const row = this.#shared.runById.get(id);
        if (row === undefined) throw new NotFoundError("run", id);
        const run = runFromRow(row);
        if (guard.token !== undefined && run.claimToken !== guard.token) {
          throw new LeaseLostError(`the claim on run ${id} was superseded or released`);
        }
        const task = this.#taskOf(run.taskId, new Map());
        const change = decide(run, task);
        if (change === null) return null;
        const next: Run = { ...change.run, id };
        this.#shared.writeRun(runToRow(next), row);
        this.#recordOnTask(taskBookkeepingOf(task.id, change));
        return { ...change, run: next };
      }),
    );
  }

  findRunningRuns(
    targetKind: TargetKind,
    after: RunId | null,
    limit: number,
  ): Promise<readonly ClaimedRun[]> {
    return settle(() => this.#sweeps.runningRuns(targetKind, after, limit));
  }

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    if (requests.length === 0) return Promise.resolve([]);
    return settle(() =>
      this.#tx.write(() => {
        const ids = JSON.stringify(batchRunIds(requests));
        const rows = new Map<string, RunRow>();
        const runs = new Map<RunId, Run>();
        for (const row of this.#shared.runsByIds.all(ids)) {
          const run = runFromRow(row);
          rows.set(run.id, row);
          runs.set(run.id, run);
        }
        const taskIds = JSON.stringify([...new Set([...runs.values()].map((r) => r.taskId))]);
        const tasks = new Map<TaskId, RunTaskContext>();
        for (const row of this.#shared.taskContextsByIds.all(taskIds)) {
          tasks.set(row.id as TaskId, runTaskContextFromRow(row));
        }
        const applied = applyRunChanges(requests, runs, tasks);
        for (const { after } of applied.runs) {
          this.#shared.writeRun(runToRow(after), rows.get(after.id));
        }
        for (const entry of applied.tasks) this.#recordOnTask(entry);
        return applied.results;
      }),
    );
  }

  /** Launch bookkeeping and verdict fields only; `run_count` moves relatively. */
  #recordOnTask(entry: TaskBookkeeping): void {
    const verdict = entry.verdict;
    if (entry.launch !== null && verdict !== null) {
      // A launch and its verdict in one batch (an in-process handler's usual case): one statement.
      const fields = {
        id: entry.taskId,
        at: entry.launch.lastRunAt,
        run: entry.launch.lastRunId,
        add: entry.launches,
        error: verdict.lastError,
      };
      if (verdict.status != null)
        this.#recordLaunchVerdict.run({ ...fields, status: verdict.status });
      else this.#recordLaunchError.run(fields);
      return;
    }
    if (entry.launch !== null) {
      this.#recordLaunch.run({
        id: entry.taskId,
        at: entry.launch.lastRunAt,
        run: entry.launch.lastRunId,
        add: entry.launches,
      });
    }
    if (verdict?.status != null) {
      this.#recordVerdict.run({
        id: entry.taskId,
        error: verdict.lastError,
        status: verdict.status,
      });
    } else if (verdict !== null) {
      this.#recordError.run({ id: entry.taskId, error: verdict.lastError });
    }
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

  /**
   * The queued runs `select` chose, in its order, each once and only offered ones: from the first
   * `limit` queued runs, or from the wider window when those left room (claim-window.ts).
   */
  #choose(
    limit: number,
    budget: number,
    share: OwnerShare | undefined,
    now: Instant,
    select: (input: Omit<ClaimSelectionInput, "now" | "handlerNames">) => readonly ClaimCandidate[],
  ): ClaimCandidate[] {
    let window = firstClaimWindow(limit);
    const owners = this.#queuedOwners.all();
    const ownerActive = new Map<string, number>();
    // Counted only when some owner may be capped (the library's default caps nobody).
    if (share !== undefined) {
      for (const row of this.#ownerSlots.all()) ownerActive.set(row.owner, row.held);
    }
    for (;;) {
      // Each owner's head of the queue (docs/semantics.md#fair-share): with several owners a run's
      // thread may have an earlier run outside the rows read, which `queued_behind` tells.
      // `window` runs in all, at least one per owner: the rows read stay bounded by the claim.
      const perOwner = Math.max(1, Math.ceil(window / Math.max(1, owners.length)));
      const rows = owners.flatMap((owner) =>
        this.#candidates.all({ owner, window: perOwner, now }),
      );
      const busyThreads = new Set<string>();
      const busyTasks = new Set<TaskId>();
      for (const row of rows) {
        if (row.thread_busy === 1) busyThreads.add(threadKey(row.thread_scope, row.thread_id));
        if (row.task_busy === 1) busyTasks.add(row.task_id as TaskId);
      }
      const candidates = rows.map(candidateFromRow);
      const offered = new Set<string>(candidates.map((candidate) => candidate.id));
      const counted = new Map(ownerActive);
      const picked = select({ candidates, busyThreads, busyTasks, budget, ownerActive })
        .filter((candidate) => offered.delete(candidate.id))
        .filter((candidate) => {
          // The owners' shares are the store's to keep too, whatever `select` returned.
          if (share === undefined) return true;
          const held = counted.get(candidate.owner) ?? 0;
          if (held >= ownerMaxActiveRuns(share, candidate.owner)) return false;
          counted.set(candidate.owner, held + 1);
          return true;
        });
      // Full when some owner's read came back full: more of its runs are queued behind it.
      const fullest = Math.max(0, ...countBy(rows, (row) => row.owner).values());
      const read = fullest >= perOwner ? window : 0;
      if (!needsWiderWindow({ limit, window, read, chosen: picked.length, room: budget })) {
        return picked;
      }
      window = fullClaimWindow(limit);
    }
  }

  /** Writes a claimed run; false when a slot index refuses it (that run is skipped, not an error). */
  #writeClaim(run: Run, before: RunRow): boolean {
    try {
      return this.#shared.writeRun(runToRow(run), before, true) === 1;
    } catch (error) {
      const key = brokenRunKey(error, run.trigger);
      if (key === "runs_task_slot_uq" || key === "runs_thread_slot_uq") return false;
      throw error;
    }
  }

  #taskOf(id: string, cache: Map<string, Task>): Task {
    const known = cache.get(id);
    if (known !== undefined) return known;
    const row = this.#shared.taskById.get(id);
    // The foreign key keeps a task row for every run (purge deletes a task's runs with it).
    if (row === undefined) throw new Error(`sqlite store: no task ${id} for its run`);
    const task = this.#definitions.taskFromRow(row);
    cache.set(id, task);
    return task;
  }
}

/** How many of `items` fall under each key. */
function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function candidateFromRow(row: CandidateRow): ClaimCandidate {
  return {
    id: row.id as RunId,
    taskId: row.task_id as TaskId,
    owner: row.owner as OwnerId,
    threadScope: row.thread_scope,
    threadId: row.thread_id as ThreadId,
    exclusive: row.exclusive === 1,
    notBefore: instant(row.not_before),
    queuedAt: instant(row.queued_at),
    handlerName: row.handler_name,
    ...(row.queued_behind === 1 ? { queuedBehind: true } : {}),
  };
}
