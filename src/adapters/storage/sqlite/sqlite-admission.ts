/**
 * Admission on SQLite (docs/semantics.md#the-life-of-an-occurrence): one `BEGIN IMMEDIATE` transaction
 * per batch, which holds the database's single write lock. Due tasks are read through
 * `task_state_due_idx`, their active runs with them, the domain decides, and the decisions,
 * cancellations and schedule fields are written (docs/storage.md#task-state-on-sqlite). Also the run
 * writes admission shares with the owner commands of `sqlite-task-repository.ts`: a run inserted, a run
 * rewritten under the write lock, a task's active runs.
 */
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import type { TaskId } from "../../../domain/ids.js";
import { runId as toRunId } from "../../../domain/ids.js";
import { newRunWithId } from "../../../domain/new-run.js";
import type { NewRun } from "../../../domain/new-run.js";
import type { AdmissionReport } from "../../../domain/ports/task-repository.js";
import type { Run } from "../../../domain/run.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { admissionReport } from "../shared/admission-report.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { brokenRunKey } from "./sqlite-errors.js";
import { runFromRow, runToRow, runValues } from "./sqlite-rows.js";
import type { TaskRow } from "./sqlite-rows.js";
import { taskReadRowOf } from "./sqlite-row-shapes.js";
import { RowReader, TASK_FROM, TASK_READ_COLUMNS, TASK_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

/** Thrown when an admission finds an occurrence that already has its decision. */
class OccurrenceDecided extends Error {}

interface ScheduleFieldsRow {
  readonly id: string;
  readonly status: string;
  readonly next_run_at: number | null;
  readonly decided_through: number;
  readonly admitted_count: number;
  readonly set_last_error: number;
  readonly last_error: string | null;
}

export class SqliteAdmission {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #newId: () => string;
  readonly #dueTasks: RowReader<[number, number], TaskRow>;
  readonly #writeAdmission: Statement<[ScheduleFieldsRow]>;
  readonly #nextDue: Statement<[], { next_run_at: number }>;
  readonly #markDefect: Statement<[{ id: string; at: number }]>;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
    definitions: SqliteTaskDefinitions;
    newId: () => string;
  }) {
    const db = options.db;
    this.#tx = options.tx;
    this.#shared = options.statements;
    this.#definitions = options.definitions;
    this.#newId = options.newId;
    // Repeats task_state_due_idx's predicate, so the scan walks that partial index in order; a deleted
    // task has no next run (docs/semantics.md), and `deleted_at` is checked on its definition row anyway.
    this.#dueTasks = new RowReader(
      db,
      `${TASK_SELECT} WHERE status = 'enabled' AND defect_at IS NULL AND next_run_at <= ?
         AND deleted_at IS NULL
       ORDER BY next_run_at, task_id LIMIT ?`,
      TASK_READ_COLUMNS,
      taskReadRowOf,
    );
    this.#writeAdmission = db.prepare<[ScheduleFieldsRow]>(
      `UPDATE task_state SET status = @status, next_run_at = @next_run_at,
         decided_through = @decided_through, admitted_count = @admitted_count,
         last_error = CASE WHEN @set_last_error = 1 THEN @last_error ELSE last_error END
       WHERE task_id = @id`,
    );
    this.#markDefect = db.prepare<[{ id: string; at: number }]>(
      "UPDATE task_state SET defect_at = @at WHERE task_id = @id AND defect_at IS NULL",
    );
    this.#nextDue = db.prepare<[], { next_run_at: number }>(
      `SELECT next_run_at FROM ${TASK_FROM}
       WHERE status = 'enabled' AND defect_at IS NULL AND next_run_at IS NOT NULL
         AND deleted_at IS NULL
       ORDER BY next_run_at LIMIT 1`,
    );
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport> {
    return settle(() => {
      try {
        return this.#tx.write(() => this.#admitBatch(now, limit, decide, false));
      } catch (error) {
        if (!(error instanceof OccurrenceDecided)) throw error;
        // Some task's occurrence is already decided: that transaction wrote nothing. Again, a savepoint
        // per task, so that only those tasks' work is dropped.
        return this.#tx.write(() => this.#admitBatch(now, limit, decide, true));
      }
    });
  }

  /**
   * One admission batch, inside the write transaction. Without `perTaskSavepoints`, an occurrence
   * already decided aborts the batch (OccurrenceDecided); with them, it rolls back that task's work only.
   * The fast way is the usual one: a savepoint per task made every run insert write its pages to a
   * statement journal too, and cost about twice as much (measured: 15 us against 29 us per insert).
   */
  #admitBatch(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
    perTaskSavepoints: boolean,
  ): AdmissionReport {
    // Each definition decoded once per stamp, and left for the claim that follows.
    const read = this.#dueTasks
      .all(now, Math.max(0, limit))
      .map((row) => this.#definitions.taskFromRow(row));
    const due = read.filter((task) => task.defect === null);
    const defective = read
      .filter((task) => task.defect !== null)
      .map((task) => this.#markDefective(task, now));
    const active = groupByTask(
      activeRunsOf(
        this.#shared,
        due.map((task) => task.id),
      ),
    );
    const written = { tasks: 0, inserted: [] as Run[], cancellations: [] as Run[] };
    for (const task of due) {
      const activeRuns = active.get(task.id) ?? [];
      const write = decide(task, activeRuns);
      const admit = (): { inserted: Run[]; cancellations: Run[] } =>
        this.#admit(task, activeRuns, write);
      let outcome;
      if (!perTaskSavepoints) {
        outcome = admit();
      } else {
        try {
          outcome = this.#tx.savepoint(admit);
        } catch (error) {
          if (!(error instanceof OccurrenceDecided)) throw error;
          continue;
        }
      }
      written.tasks++;
      written.inserted.push(...outcome.inserted);
      written.cancellations.push(...outcome.cancellations);
    }
    return admissionReport(written.tasks, written.inserted, written.cancellations, defective);
  }

  /** Takes a task whose stored fields do not parse out of the due set, once. */
  #markDefective(task: Task, now: Instant): Task {
    this.#markDefect.run({ id: task.id, at: now });
    return task.defect === null ? task : { ...task, defect: { ...task.defect, detectedAt: now } };
  }

  nextDueAt(): Promise<Instant | null> {
    return settle(() => {
      const row = this.#nextDue.get();
      return row === undefined ? null : instant(row.next_run_at);
    });
  }

  /** Writes one task's admission: its decisions, its cancellations and its schedule fields only. */
  #admit(
    task: Task,
    activeRuns: readonly Run[],
    write: AdmissionWrite,
  ): { inserted: Run[]; cancellations: Run[] } {
    const inserted = write.newRuns.map((newRun) => {
      try {
        return insertRun(this.#shared, this.#newId, newRun, task.target.kind);
      } catch (error) {
        if (brokenRunKey(error, newRun.trigger) === "runs_scheduled_occurrence_uq") {
          throw new OccurrenceDecided("occurrence already decided", { cause: error });
        }
        throw error;
      }
    });
    const cancellations = write.runUpdates.filter(
      (run) => rewriteRun(this.#shared, run, activeRuns) > 0,
    );
    const fields = write.fields;
    this.#writeAdmission.run({
      id: task.id,
      status: fields.status,
      next_run_at: fields.nextRunAt,
      decided_through: fields.decidedThrough,
      admitted_count: fields.admittedCount,
      set_last_error: fields.lastError === undefined ? 0 : 1,
      last_error: fields.lastError ?? null,
    });
    return { inserted, cancellations };
  }
}

/** Rewrites a run read under the write lock (only the columns that changed); 0 when it is not there. */
export function rewriteRun(shared: SqliteStatements, run: Run, activeRuns: readonly Run[]): number {
  const before = activeRuns.find((active) => active.id === run.id);
  return shared.writeRun(runToRow(run), before === undefined ? undefined : runToRow(before));
}

/** The given tasks' active runs (queued, launching, running), in queue order. */
export function activeRunsOf(shared: SqliteStatements, taskIds: readonly string[]): Run[] {
  if (taskIds.length === 0) return [];
  return shared.activeRunsOf.all(JSON.stringify(taskIds)).map(runFromRow);
}

/** Inserts a run of a task whose target is of `targetKind` (copied onto the run). */
export function insertRun(
  shared: SqliteStatements,
  newId: () => string,
  newRun: NewRun,
  targetKind: TargetKind,
): Run {
  const run = newRunWithId(newRun, toRunId(newId()));
  const values = runValues(run);
  values.push(targetKind);
  shared.insertRun(values);
  return run;
}

function groupByTask(runs: readonly Run[]): Map<TaskId, Run[]> {
  const groups = new Map<TaskId, Run[]>();
  for (const run of runs) {
    const group = groups.get(run.taskId);
    if (group === undefined) groups.set(run.taskId, [run]);
    else group.push(run);
  }
  return groups;
}
