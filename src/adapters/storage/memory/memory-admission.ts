/**
 * Admission in memory (docs/semantics.md#the-life-of-an-occurrence): in one atomic transaction over
 * `MemoryTables`, the due tasks in `next_run_at` order, each one's active runs, the domain's decision and
 * its write (new runs, cancellations, schedule fields), a savepoint per task so that an occurrence already
 * decided rolls back that task's work only. Also the run writes admission shares with the owner commands
 * of `memory-task-repository.ts`: a run inserted, a run rewritten, a task's active runs.
 */
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import type { TaskId } from "../../../domain/ids.js";
import { runId as toRunId } from "../../../domain/ids.js";
import type { NewRun } from "../../../domain/new-run.js";
import type { AdmissionReport } from "../../../domain/ports/task-repository.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { admissionReport } from "../shared/admission-report.js";
import { compareKeys } from "../shared/page-cursor.js";
import { newRunRow, runRow, taskRow } from "./memory-rows.js";
import { ConstraintViolationError } from "./memory-tables.js";
import type { MemoryTables } from "./memory-tables.js";

/** Enabled, not deleted and not marked defective: what the SQL stores' due index holds. */
function isDueCandidate(task: Task): boolean {
  return (
    task.status === "enabled" &&
    task.deletedAt === null &&
    (task.defect === null || task.defect.detectedAt === null)
  );
}

function byQueueOrder(a: Run, b: Run): number {
  return compareKeys([a.queuedAt, a.id], [b.queuedAt, b.id]);
}

export class MemoryAdmission {
  readonly #tables: MemoryTables;
  readonly #newId: () => string;

  constructor(tables: MemoryTables, newId: () => string) {
    this.#tables = tables;
    this.#newId = newId;
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport> {
    return this.#tables.atomically(() => {
      const read = [...this.#tables.tasks()]
        .filter((task) => isDueCandidate(task))
        .filter((task) => task.nextRunAt !== null && task.nextRunAt <= now)
        .sort((a, b) => compareKeys([a.nextRunAt ?? 0, a.id], [b.nextRunAt ?? 0, b.id]))
        .slice(0, Math.max(0, limit));
      const due = read.filter((task) => task.defect === null);
      const defective = read.flatMap((task) => {
        if (task.defect === null) return [];
        // Taken out of the due set, once (the SQL stores' `defect_at`).
        const marked = taskRow({ ...task, defect: { ...task.defect, detectedAt: now } });
        this.#tables.putTask(marked);
        return [marked];
      });
      const written = { tasks: 0, inserted: [] as Run[], cancellations: [] as Run[] };
      for (const task of due) {
        const activeRuns = activeRunsOf(this.#tables, task.id);
        const write = decide(task, activeRuns);
        try {
          // A savepoint per task: an occurrence already decided rolls back this task's work only.
          const outcome = this.#tables.transaction(() => this.#admit(task, write));
          written.tasks++;
          written.inserted.push(...outcome.inserted);
          written.cancellations.push(...outcome.cancellations);
        } catch (error) {
          const decided =
            error instanceof ConstraintViolationError &&
            error.constraint === "runs_scheduled_occurrence_uq";
          if (!decided) throw error;
        }
      }
      return admissionReport(written.tasks, written.inserted, written.cancellations, defective);
    });
  }

  nextDueAt(): Promise<Instant | null> {
    return this.#tables.atomically(() => {
      let earliest: Instant | null = null;
      for (const task of this.#tables.tasks()) {
        if (!isDueCandidate(task) || task.nextRunAt === null) continue;
        if (earliest === null || task.nextRunAt < earliest) earliest = task.nextRunAt;
      }
      return earliest;
    });
  }

  /** Writes one task's admission: its decisions, its cancellations and its schedule fields only. */
  #admit(task: Task, write: AdmissionWrite): { inserted: Run[]; cancellations: Run[] } {
    const inserted = write.newRuns.map((newRun) => insertRun(this.#tables, this.#newId, newRun));
    const cancellations = write.runUpdates.map((run) => updateRun(this.#tables, run));
    const fields = write.fields;
    this.#tables.putTask(
      taskRow({
        ...task,
        status: fields.status,
        nextRunAt: fields.nextRunAt,
        decidedThrough: fields.decidedThrough,
        admittedCount: fields.admittedCount,
        lastError: fields.lastError ?? task.lastError,
      }),
    );
    return { inserted, cancellations: cancellations.filter((run) => run !== null) };
  }
}

/** A task's active runs (queued, launching, running), in queue order. */
export function activeRunsOf(tables: MemoryTables, id: TaskId): Run[] {
  return tables.activeRuns(id).sort(byQueueOrder);
}

/** Inserts a new run with a fresh id. */
export function insertRun(tables: MemoryTables, newId: () => string, newRun: NewRun): Run {
  const row = newRunRow(newRun, toRunId(newId()));
  tables.insertRun(row);
  return row;
}

/** Rewrites an existing run row (an UPDATE: a run that is not there is not created). */
export function updateRun(tables: MemoryTables, run: Run): Run | null {
  if (tables.run(run.id) === undefined) return null;
  const row = runRow(run);
  tables.putRun(row);
  return row;
}
