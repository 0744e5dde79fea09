/**
 * Fenced run writes on SQLite: `changeRuns` in one `BEGIN IMMEDIATE` transaction, each run read, its
 * claim token checked, the change decided and written with its task's bookkeeping under the single write
 * lock (docs/storage.md#the-run-model-on-sqlite).
 */
import type { RunId, TaskId } from "../../../domain/ids.js";
import type { RunChangeRequest, RunChangeResult } from "../../../domain/ports/run-repository.js";
import type { Run } from "../../../domain/run.js";
import type { RunTaskContext } from "../../../domain/run-change.js";
import { runTaskContext } from "../../../domain/run-change.js";
import type { Task } from "../../../domain/task.js";
import type { Statement } from "better-sqlite3";
import {
  applyRunChanges,
  batchExpectations,
  batchRunIds,
  wantsWholeTasks,
} from "../shared/run-change-batch.js";
import type { TaskBookkeeping } from "../shared/run-change-batch.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { runFromRow, runTaskContextFromRow } from "./sqlite-rows.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import { taskOfRun } from "./sqlite-task-definitions.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

/**
 * A launch and its verdict written together, bound by position (one per in-process fire: named
 * parameters read from an object cost about 0.15 µs each): last run instant, last run id, launches to
 * add, last error, [status,] the task's id.
 */
type LaunchVerdict = [number, string, number, string | null, string];
type LaunchVerdictStatus = [number, string, number, string | null, string, string];

/** What a decision on an expected run depends on, as held: id, status, attempt, claim token, cancel request, task version. */
type HeldFence = [string, string, number, string | null, number | null, number];

export class SqliteFencedRunWrites {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #recordLaunch: Statement<[{ id: string; at: number; run: string; add: number }]>;
  readonly #recordError: Statement<[{ id: string; error: string | null }]>;
  readonly #recordVerdict: Statement<[{ id: string; error: string | null; status: string }]>;
  readonly #recordLaunchError: Statement<LaunchVerdict>;
  readonly #recordLaunchVerdict: Statement<LaunchVerdictStatus>;
  readonly #fences: Statement<[string], HeldFence>;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
    definitions: SqliteTaskDefinitions;
  }) {
    const db = options.db;
    this.#tx = options.tx;
    this.#shared = options.statements;
    this.#definitions = options.definitions;
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
    this.#fences = db
      .prepare<[string], HeldFence>(
        `SELECT r.id, r.status, r.attempt, r.claim_token, r.cancel_requested_at, t.version
         FROM runs r JOIN tasks t ON t.id = r.task_id
         WHERE r.id IN (SELECT value FROM json_each(?))`,
      )
      .raw(true);
    const launch = "last_run_at = ?, last_run_id = ?, run_count = run_count + ?";
    this.#recordLaunchError = db.prepare<LaunchVerdict>(
      `UPDATE task_state SET ${launch}, last_error = ? WHERE task_id = ?`,
    );
    this.#recordLaunchVerdict = db.prepare<LaunchVerdictStatus>(
      `UPDATE task_state SET ${launch}, last_error = ?, status = ? WHERE task_id = ?`,
    );
  }

  changeRuns(requests: readonly RunChangeRequest[]): Promise<readonly RunChangeResult[]> {
    if (requests.length === 0) return Promise.resolve([]);
    return settle(() =>
      this.#tx.write(() => {
        const runs = new Map<RunId, Run>();
        const tasks = new Map<TaskId, RunTaskContext>();
        // A request with `withTask`: the whole tasks, read as the batch's contexts too.
        const whole = wantsWholeTasks(requests) ? new Map<TaskId, Task>() : undefined;
        const ids = batchRunIds(requests);
        const toRead = whole === undefined ? this.#takeExpected(requests, ids, runs, tasks) : ids;
        if (toRead.length > 0) {
          const readTasks = new Set<TaskId>();
          for (const row of this.#shared.runsByIds.all(JSON.stringify(toRead))) {
            const run = runFromRow(row);
            runs.set(run.id, run);
            if (!tasks.has(run.taskId)) readTasks.add(run.taskId);
          }
          if (whole === undefined) {
            if (readTasks.size > 0) {
              for (const row of this.#shared.taskContextsByIds.all(
                JSON.stringify([...readTasks]),
              )) {
                tasks.set(row.id as TaskId, runTaskContextFromRow(row));
              }
            }
          } else {
            for (const id of readTasks) {
              const task = this.#taskOf(id);
              whole.set(id, task);
              tasks.set(id, runTaskContext(task));
            }
          }
        }
        const applied = applyRunChanges(requests, runs, tasks, whole);
        for (const { before, after } of applied.runs) this.#shared.writeRunChange(before, after);
        for (const entry of applied.tasks) this.#recordOnTask(entry);
        return applied.results;
      }),
    );
  }

  /**
   * Takes the runs of `requests` whose writers know them (`RunChangeRequest.expect`: the run as this
   * replica claimed or last wrote it, its task's context at the version it launched with) where the
   * database still holds what a decision depends on: the run's status, attempt, claim token and cancel
   * request, and its task's version (an edit bumps it; a launching or running run holds its
   * `run_active` slot by its status, the triggers keep the two together). Checked under the write lock
   * by one narrow read instead of reading the whole runs and their tasks' contexts
   * (docs/storage.md#the-verdict-from-what-the-replica-knows-on-sqlite). Returns the ids left to read.
   */
  #takeExpected(
    requests: readonly RunChangeRequest[],
    ids: readonly RunId[],
    runs: Map<RunId, Run>,
    tasks: Map<TaskId, RunTaskContext>,
  ): readonly RunId[] {
    const expected = batchExpectations(requests);
    if (expected.runs.size === 0) return ids;
    const held = this.#fences.all(JSON.stringify([...expected.runs.keys()]));
    for (const [id, status, attempt, token, cancelAt, version] of held) {
      const run = expected.runs.get(id as RunId);
      if (
        run === undefined ||
        run.status !== status ||
        run.attempt !== attempt ||
        run.claimToken !== token ||
        run.cancelRequestedAt !== cancelAt ||
        expected.versions.get(run.id) !== version
      ) {
        continue;
      }
      runs.set(run.id, run);
      tasks.set(run.taskId, expected.tasks.get(run.taskId) as RunTaskContext);
    }
    return runs.size === ids.length ? [] : ids.filter((id) => !runs.has(id));
  }

  /** Launch bookkeeping and verdict fields only; `run_count` moves relatively. */
  #recordOnTask(entry: TaskBookkeeping): void {
    const verdict = entry.verdict;
    if (entry.launch !== null && verdict !== null) {
      // A launch and its verdict in one batch (an in-process handler's usual case): one statement.
      const { lastRunAt, lastRunId } = entry.launch;
      if (verdict.status != null) {
        this.#recordLaunchVerdict.run(
          lastRunAt,
          lastRunId,
          entry.launches,
          verdict.lastError,
          verdict.status,
          entry.taskId,
        );
      } else {
        this.#recordLaunchError.run(
          lastRunAt,
          lastRunId,
          entry.launches,
          verdict.lastError,
          entry.taskId,
        );
      }
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

  #taskOf(id: string): Task {
    return taskOfRun(this.#shared, this.#definitions, id, new Map());
  }
}
