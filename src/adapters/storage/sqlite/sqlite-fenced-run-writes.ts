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
import { applyRunChanges, batchRunIds, wantsWholeTasks } from "../shared/run-change-batch.js";
import type { TaskBookkeeping } from "../shared/run-change-batch.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { runFromRow, runTaskContextFromRow, runToRow } from "./sqlite-rows.js";
import type { RunRow } from "./sqlite-rows.js";
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

export class SqliteFencedRunWrites {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #recordLaunch: Statement<[{ id: string; at: number; run: string; add: number }]>;
  readonly #recordError: Statement<[{ id: string; error: string | null }]>;
  readonly #recordVerdict: Statement<[{ id: string; error: string | null; status: string }]>;
  readonly #recordLaunchError: Statement<LaunchVerdict>;
  readonly #recordLaunchVerdict: Statement<LaunchVerdictStatus>;

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
        const ids = JSON.stringify(batchRunIds(requests));
        const rows = new Map<string, RunRow>();
        const runs = new Map<RunId, Run>();
        for (const row of this.#shared.runsByIds.all(ids)) {
          const run = runFromRow(row);
          rows.set(run.id, row);
          runs.set(run.id, run);
        }
        const taskIds = [...new Set([...runs.values()].map((r) => r.taskId))];
        const tasks = new Map<TaskId, RunTaskContext>();
        // A request with `withTask`: the whole tasks, read as the batch's contexts too.
        const whole = wantsWholeTasks(requests) ? new Map<TaskId, Task>() : undefined;
        if (whole === undefined) {
          for (const row of this.#shared.taskContextsByIds.all(JSON.stringify(taskIds))) {
            tasks.set(row.id as TaskId, runTaskContextFromRow(row));
          }
        } else {
          for (const id of taskIds) {
            const task = this.#taskOf(id);
            whole.set(id, task);
            tasks.set(id, runTaskContext(task));
          }
        }
        const applied = applyRunChanges(requests, runs, tasks, whole);
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
