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
import type { ClaimedRun } from "../../../domain/ports/run-repository.js";
import type { AdmissionClaim, AdmissionReport } from "../../../domain/ports/task-repository.js";
import type { Run } from "../../../domain/run.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { admissionReport } from "../shared/admission-report.js";
import { fusableRuns } from "../shared/claim-round.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { SqliteClaim } from "./sqlite-claim.js";
import { brokenRunKey } from "./sqlite-errors.js";
import { runFromRow, runToRow, runValues } from "./sqlite-rows.js";
import type { TaskRow } from "./sqlite-rows.js";
import { taskReadRowOf } from "./sqlite-row-shapes.js";
import { RowReader, TASK_FROM, TASK_READ_COLUMNS, TASK_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

/** Thrown when an admission finds an occurrence that already has its decision. */
class OccurrenceDecided extends Error {}

/** A fused claim's slot key refused a run: the batch is admitted again, unfused (its runs queued). */
class FusedSlotClash extends Error {}

/** One task's admission as decided, its new runs with their ids. */
interface TaskAdmission {
  readonly task: Task;
  readonly activeRuns: readonly Run[];
  readonly write: AdmissionWrite;
  readonly newRuns: readonly Run[];
}

/**
 * An admission's `task_state` write, bound by position (one per fire: named parameters read from an
 * object cost about 0.15 µs each): status, next run, watermark, admitted count, whether the last error
 * is set (1 or 0), the last error, the task's id.
 */
type ScheduleFields = [string, number | null, number, number, number, string | null, string];

export class SqliteAdmission {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #newId: () => string;
  readonly #dueTasks: RowReader<[number, number], TaskRow>;
  readonly #writeAdmission: Statement<ScheduleFields>;
  readonly #nextDue: Statement<[], { next_run_at: number }>;
  readonly #markDefect: Statement<[{ id: string; at: number }]>;
  readonly #claims: SqliteClaim;

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
    this.#claims = new SqliteClaim(options);
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
    this.#writeAdmission = db.prepare<ScheduleFields>(
      `UPDATE task_state SET status = ?, next_run_at = ?, decided_through = ?, admitted_count = ?,
         last_error = CASE WHEN ? = 1 THEN ? ELSE last_error END
       WHERE task_id = ?`,
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
    claim?: AdmissionClaim,
  ): Promise<AdmissionReport> {
    return settle(() => {
      let careful = false;
      let fuse = claim !== undefined;
      for (;;) {
        try {
          const report = this.#tx.write(() =>
            this.#admitBatch(now, limit, decide, careful, fuse ? claim : undefined),
          );
          // Given (empty when nothing was claimed) whenever a claim was asked: this store fuses.
          return claim === undefined ? report : { ...report, claimed: report.claimed ?? [] };
        } catch (error) {
          // That transaction wrote nothing. Some task's occurrence is already decided: again, a
          // savepoint per task, so that only those tasks' work is dropped. A fused claim's slot key
          // clashed: again without the fused claim (the runs are then queued).
          if (error instanceof OccurrenceDecided && !careful) careful = true;
          else if (error instanceof FusedSlotClash && fuse) fuse = false;
          else throw error;
        }
      }
    });
  }

  /**
   * One admission batch, inside the write transaction. Without `perTaskSavepoints`, an occurrence
   * already decided aborts the batch (OccurrenceDecided); with them, it rolls back that task's work only.
   * The fast way is the usual one: a savepoint per task made every run insert write its pages to a
   * statement journal too, and cost about twice as much (measured: 15 us against 29 us per insert).
   * With `claim`, the new runs this replica may launch at once are inserted claimed, launching
   * (docs/storage.md#fused-admit-and-claim-on-sqlite): every task is decided first, then the claim
   * fused over the batch's new queued runs, then each task written.
   */
  #admitBatch(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
    perTaskSavepoints: boolean,
    claim: AdmissionClaim | undefined,
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
    const admissions = due.map((task): TaskAdmission => {
      const activeRuns = active.get(task.id) ?? [];
      const write = decide(task, activeRuns);
      const newRuns = write.newRuns.map((newRun) => newRunWithId(newRun, toRunId(this.#newId())));
      return { task, activeRuns, write, newRuns };
    });
    const claimed =
      claim === undefined || admissions.length === 0
        ? new Map<string, ClaimedRun>()
        : this.#fuse(claim, admissions);
    const written = {
      tasks: 0,
      inserted: [] as Run[],
      cancellations: [] as Run[],
      claimed: [] as ClaimedRun[],
    };
    for (const admission of admissions) {
      const admit = (): { inserted: Run[]; cancellations: Run[]; claimed: ClaimedRun[] } =>
        this.#admit(admission, claimed);
      let outcome;
      if (!perTaskSavepoints) {
        outcome = admit();
      } else {
        try {
          outcome = this.#tx.savepoint(admit);
        } catch (error) {
          // That task's work is dropped, its fused claims with it; the others keep theirs.
          if (!(error instanceof OccurrenceDecided)) throw error;
          continue;
        }
      }
      written.tasks++;
      written.inserted.push(...outcome.inserted);
      written.cancellations.push(...outcome.cancellations);
      written.claimed.push(...outcome.claimed);
    }
    const report = admissionReport(
      written.tasks,
      written.inserted,
      written.cancellations,
      defective,
    );
    return claim === undefined ? report : { ...report, claimed: written.claimed };
  }

  /**
   * The fused claim over the batch's new queued runs, each with its task as admission leaves it: the
   * runs claimed by id (`SqliteClaim.fuse`).
   */
  #fuse(claim: AdmissionClaim, admissions: readonly TaskAdmission[]): Map<string, ClaimedRun> {
    const entries = fusableRuns(
      admissions.map(({ task, write, newRuns }) => ({ task, fields: write.fields, newRuns })),
    );
    const claimed = this.#claims.fuse(claim.request, claim.select, claim.claim, entries);
    return new Map(claimed.map((c) => [c.run.id as string, c] as const));
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

  /**
   * Writes one task's admission: its decisions (a run `claimed` holds inserted claimed, launching), its
   * cancellations and its schedule fields only.
   */
  #admit(
    { task, activeRuns, write, newRuns }: TaskAdmission,
    claimed: ReadonlyMap<string, ClaimedRun>,
  ): { inserted: Run[]; cancellations: Run[]; claimed: ClaimedRun[] } {
    const taken: ClaimedRun[] = [];
    for (const run of newRuns) {
      const fused = claimed.get(run.id);
      const stored = fused?.run ?? run;
      try {
        insertStoredRun(this.#shared, stored, task.target.kind);
      } catch (error) {
        const key = brokenRunKey(error, run.trigger);
        if (key === "runs_scheduled_occurrence_uq") {
          throw new OccurrenceDecided("occurrence already decided", { cause: error });
        }
        if (fused !== undefined && (key === "runs_task_slot_uq" || key === "runs_thread_slot_uq")) {
          throw new FusedSlotClash("a fused claim's slot is taken", { cause: error });
        }
        throw error;
      }
      if (fused !== undefined) taken.push(fused);
    }
    const cancellations = write.runUpdates.filter(
      (run) => rewriteRun(this.#shared, run, activeRuns) > 0,
    );
    const fields = write.fields;
    this.#writeAdmission.run(
      fields.status,
      fields.nextRunAt,
      fields.decidedThrough,
      fields.admittedCount,
      fields.lastError === undefined ? 0 : 1,
      fields.lastError ?? null,
      task.id,
    );
    // The runs as decided (queued), as the report gives them; the claimed ones apart.
    return { inserted: [...newRuns], cancellations, claimed: taken };
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
  insertStoredRun(shared, run, targetKind);
  return run;
}

/** Inserts `run` (with its id) of a task whose target is of `targetKind`, with its place. */
function insertStoredRun(shared: SqliteStatements, run: Run, targetKind: TargetKind): void {
  const values = runValues(run);
  values.push(targetKind);
  shared.insertRun(values);
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
