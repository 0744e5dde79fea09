/**
 * Tasks on SQLite: creation, scoped reads, owner commands and admission. Every write runs in one
 * `BEGIN IMMEDIATE` transaction, which holds the database's single write lock: that is SQLite's row lock
 * and its `SKIP LOCKED` at once (other writers wait; there is nothing to skip).
 */
import type { TaskCountCheck } from "../../../domain/ports/task-repository.js";
import { addedByOwner } from "../shared/added-by-owner.js";
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import { calendarStamps, changedStamps, stampsByOwner } from "../../../domain/calendar.js";
import { KeyTakenError, NotFoundError } from "../../../domain/errors.js";
import { decideMutation } from "../shared/task-mutation.js";
import type { OwnerId, TaskId } from "../../../domain/ids.js";
import { runId as toRunId } from "../../../domain/ids.js";
import { newRunWithId } from "../../../domain/new-run.js";
import type { NewRun } from "../../../domain/new-run.js";
import type {
  AdmissionReport,
  LockedTask,
  MutateTaskOptions,
  TaskMutation,
  TaskRepository,
} from "../../../domain/ports/task-repository.js";
import type { OwnerScope, Page, TaskQuery } from "../../../domain/ports/queries.js";
import type { Run } from "../../../domain/run.js";
import type { Task } from "../../../domain/task.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { admissionReport } from "../shared/admission-report.js";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import { settle, StatementCache } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { SqliteCalendarStamps } from "./sqlite-calendar-repository.js";
import { brokenRunKey, isTaskKeyTaken } from "./sqlite-errors.js";
import { columnList, runFromRow, runToRow, runValues } from "./sqlite-rows.js";
import type { TargetKind } from "../../../domain/target.js";
import { TASK_DEFINITION_COLUMNS, TASK_STATE_COLUMNS } from "./sqlite-rows.js";
import { taskFromRow, taskToRow } from "./sqlite-rows.js";
import type { TaskRow } from "./sqlite-rows.js";
import { taskReadRowOf } from "./sqlite-row-shapes.js";
import { RowReader, TASK_FROM, TASK_READ_COLUMNS, TASK_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";

type ListParams = Record<string, string | number>;

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

export class SqliteTaskRepository implements TaskRepository {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
  readonly #definitions: SqliteTaskDefinitions;
  readonly #newId: () => string;
  readonly #stamps: SqliteCalendarStamps;
  readonly #insertTask: Statement<[TaskRow]>;
  readonly #insertState: Statement<[TaskRow]>;
  readonly #updateTask: Statement<[TaskRow]>;
  readonly #updateState: Statement<[TaskRow]>;
  readonly #countTasks: Statement<[string], number>;
  readonly #countRecentRuns: Statement<[string, number, string], number>;
  readonly #visibleTask: Statement<[{ id: string; owner: string | null }], TaskRow>;
  readonly #taskByKey: Statement<[{ owner: string; key: string }], TaskRow>;
  readonly #dueTasks: RowReader<[number, number], TaskRow>;
  readonly #writeAdmission: Statement<[ScheduleFieldsRow]>;
  readonly #nextDue: Statement<[], { next_run_at: number }>;
  readonly #markDefect: Statement<[{ id: string; at: number }]>;
  readonly #lists: StatementCache<[ListParams], TaskRow>;

  constructor(options: {
    db: SqliteDatabase;
    tx: SqliteTransactions;
    statements: SqliteStatements;
    definitions: SqliteTaskDefinitions;
    newId: () => string;
  }) {
    const db = options.db;
    this.#lists = new StatementCache(db);
    this.#tx = options.tx;
    this.#shared = options.statements;
    this.#definitions = options.definitions;
    this.#newId = options.newId;
    this.#stamps = new SqliteCalendarStamps(db);
    this.#countTasks = db
      .prepare<[string], number>(
        "SELECT count(*) FROM tasks WHERE owner = ? AND deleted_at IS NULL",
      )
      .pluck();
    this.#countRecentRuns = db
      .prepare<[string, number, string], number>(
        `SELECT count(*) FROM runs WHERE owner = ? AND queued_at >= ? AND "trigger" = ?`,
      )
      .pluck();
    // A task is two rows: its definition and its state (docs/storage.md#task-state-on-sqlite).
    this.#insertTask = db.prepare<[TaskRow]>(
      `INSERT INTO tasks (${columnList(TASK_DEFINITION_COLUMNS)})
       VALUES (${TASK_DEFINITION_COLUMNS.map((name) => `@${name}`).join(", ")})`,
    );
    this.#insertState = db.prepare<[TaskRow]>(
      `INSERT INTO task_state (task_id, ${columnList(TASK_STATE_COLUMNS)})
       VALUES (@id, ${TASK_STATE_COLUMNS.map((name) => `@${name}`).join(", ")})`,
    );
    this.#updateTask = db.prepare<[TaskRow]>(
      `UPDATE tasks SET ${TASK_DEFINITION_COLUMNS.filter((name) => name !== "id")
        .map((name) => `${name} = @${name}`)
        .join(", ")} WHERE id = @id`,
    );
    this.#updateState = db.prepare<[TaskRow]>(
      `UPDATE task_state SET ${TASK_STATE_COLUMNS.map((name) => `${name} = @${name}`).join(", ")}
       WHERE task_id = @id`,
    );
    this.#visibleTask = db.prepare(
      `${TASK_SELECT} WHERE id = @id AND deleted_at IS NULL AND (@owner IS NULL OR owner = @owner)`,
    );
    // Matches tasks_key_uq's predicate, so the lookup is one probe of that index.
    this.#taskByKey = db.prepare(
      `${TASK_SELECT} WHERE owner = @owner AND task_key = @key AND task_key IS NOT NULL
         AND deleted_at IS NULL`,
    );
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

  insertTask(task: Task, quota?: TaskCountCheck): Promise<void> {
    const stamps = calendarStamps(task.schedule);
    const insert = (): void => {
      try {
        this.#insertRow(taskToRow(task, this.#shared.secrets));
      } catch (error) {
        if (task.key !== null && isTaskKeyTaken(error)) {
          throw new KeyTakenError(task.key, { cause: error });
        }
        throw error;
      }
    };
    return settle(() => {
      this.#tx.write(() => {
        this.#checkCounts([task], quota);
        this.#stamps.check(task.owner, stamps);
        insert();
      });
    });
  }

  /** A task's two rows, definition and state; inside the caller's transaction. */
  #insertRow(row: TaskRow): void {
    this.#insertTask.run(row);
    this.#insertState.run(row);
  }

  /** The quota of each owner the insert adds to, in the inserting transaction (one writer at a time). */
  #checkCounts(tasks: readonly Task[], quota: TaskCountCheck | undefined): void {
    if (quota === undefined) return;
    for (const [owner, adding] of addedByOwner(tasks)) {
      quota(owner, this.#countTasks.get(owner) ?? 0, adding);
    }
  }

  insertTasks(tasks: readonly Task[], quota?: TaskCountCheck): Promise<void> {
    return settle(() => {
      if (tasks.length === 0) return;
      this.#tx.write(() => {
        this.#checkCounts(tasks, quota);
        for (const [owner, stamps] of stampsByOwner(tasks)) this.#stamps.check(owner, stamps);
        for (const task of tasks) {
          try {
            this.#insertRow(taskToRow(task, this.#shared.secrets));
          } catch (error) {
            if (task.key !== null && isTaskKeyTaken(error)) {
              throw new KeyTakenError(task.key, { cause: error });
            }
            throw error;
          }
        }
      });
    });
  }

  findTask(scope: OwnerScope, id: TaskId): Promise<Task | null> {
    return settle(() => this.#visible(scope, id));
  }

  countTasks(owner: OwnerId): Promise<number> {
    return settle(() => this.#countTasks.get(owner) ?? 0);
  }

  findTaskByKey(owner: OwnerId, key: string): Promise<Task | null> {
    return settle(() => {
      const row = this.#taskByKey.get({ owner, key });
      return row === undefined ? null : taskFromRow(row, this.#shared.secrets);
    });
  }

  listTasks(scope: OwnerScope, query: TaskQuery): Promise<Page<Task>> {
    return settle(() => {
      const where = ["deleted_at IS NULL"];
      const params: ListParams = { limit: query.limit + 1 };
      const newest = query.newestFirst === true;
      const filter = (clause: string, name: string, value: string | number): void => {
        where.push(clause);
        params[name] = value;
      };
      if (scope.kind === "owner") filter("owner = @owner", "owner", scope.owner);
      if (query.status !== undefined) filter("status = @status", "status", query.status);
      if (query.targetKind !== undefined) {
        filter("target_kind = @target_kind", "target_kind", query.targetKind);
      }
      if (query.key !== undefined) filter("task_key = @task_key", "task_key", query.key);
      if (query.group !== undefined) filter("task_group = @task_group", "task_group", query.group);
      if (query.search !== undefined) {
        // lower() folds ASCII letters only; the other stores fold the same way.
        filter(
          "(task_key = @search OR instr(lower(title), lower(@search)) > 0)",
          "search",
          query.search,
        );
      }
      if (query.thread !== undefined) {
        filter("thread_id = @thread_id", "thread_id", query.thread.threadId);
        const threadScope = query.thread.threadScope;
        if (threadScope !== undefined) {
          filter("thread_scope = @thread_scope", "thread_scope", threadScope);
        }
      }
      if (query.cursor !== undefined) {
        const [createdAt, id] = decodeCursor(query.cursor);
        where.push(`(created_at, id) ${newest ? "<" : ">"} (@after_at, @after_id)`);
        params["after_at"] = createdAt;
        params["after_id"] = id;
      }
      const order = newest ? "created_at DESC, id DESC" : "created_at, id";
      const sql = `${TASK_SELECT} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT @limit`;
      const rows = this.#lists
        .get(sql)
        .all(params)
        .map((row) => taskFromRow(row, this.#shared.secrets));
      return pageOf(rows, query.limit, (task) => [task.createdAt, task.id]);
    });
  }

  mutateTask<T>(
    scope: OwnerScope,
    id: TaskId,
    decide: (locked: LockedTask) => TaskMutation<T>,
    options: MutateTaskOptions = {},
  ): Promise<T> {
    return settle(() =>
      this.#tx.write(() => {
        const task = this.#visible(scope, id);
        if (task === null) throw new NotFoundError("task", id);
        const activeRuns = this.#activeRunsOf([id]);
        const row = options.run === undefined ? undefined : this.#shared.runById.get(options.run);
        const run = row === undefined || row.task_id !== id ? null : runFromRow(row);
        // In the write transaction: SQLite's single writer makes the count and the write one step.
        const recent = options.recentRuns;
        const locked: LockedTask = {
          task,
          activeRuns,
          ...(options.run === undefined ? {} : { run }),
          ...(recent === undefined
            ? {}
            : {
                recentRuns:
                  this.#countRecentRuns.get(task.owner, recent.since, recent.trigger) ?? 0,
              }),
        };
        const mutation = decideMutation(locked, decide);
        if (mutation.task !== undefined) {
          this.#stamps.check(task.owner, changedStamps(task.schedule, mutation.task.schedule));
          const row = taskToRow({ ...mutation.task, id }, this.#shared.secrets);
          this.#updateTask.run(row);
          this.#updateState.run(row);
        }
        // The target kind as stored by now (an update above may have changed it).
        const targetKind = (mutation.task ?? task).target.kind;
        const inserted = (mutation.newRuns ?? []).map((newRun) =>
          this.#insertUnlessRepeated(newRun, targetKind),
        );
        const read = run === null ? activeRuns : [...activeRuns, run];
        for (const update of mutation.runUpdates ?? []) this.#rewrite(update, read);
        return mutation.result(inserted);
      }),
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
    const active = groupByTask(this.#activeRunsOf(due.map((task) => task.id)));
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
        return this.#insert(newRun, task.target.kind);
      } catch (error) {
        if (brokenRunKey(error, newRun.trigger) === "runs_scheduled_occurrence_uq") {
          throw new OccurrenceDecided("occurrence already decided", { cause: error });
        }
        throw error;
      }
    });
    const cancellations = write.runUpdates.filter((run) => this.#rewrite(run, activeRuns) > 0);
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

  /** Rewrites a run read under this lock (only the columns that changed); 0 when it is not there. */
  #rewrite(run: Run, activeRuns: readonly Run[]): number {
    const before = activeRuns.find((active) => active.id === run.id);
    return this.#shared.writeRun(
      runToRow(run),
      before === undefined ? undefined : runToRow(before),
    );
  }

  #visible(scope: OwnerScope, id: TaskId): Task | null {
    const owner = scope.kind === "owner" ? scope.owner : null;
    const row = this.#visibleTask.get({ id, owner });
    return row === undefined ? null : taskFromRow(row, this.#shared.secrets);
  }

  #activeRunsOf(taskIds: readonly string[]): Run[] {
    if (taskIds.length === 0) return [];
    return this.#shared.activeRunsOf.all(JSON.stringify(taskIds)).map(runFromRow);
  }

  /** Inserts a run of a task whose target is of `targetKind` (copied onto the run). */
  #insert(newRun: NewRun, targetKind: TargetKind): Run {
    const run = newRunWithId(newRun, toRunId(this.#newId()));
    const values = runValues(run);
    values.push(targetKind);
    this.#shared.insertRun(values);
    return run;
  }

  /** A repeated backfill time or manual key is not an error: that run is simply not inserted. */
  #insertUnlessRepeated(newRun: NewRun, targetKind: TargetKind): Run | null {
    try {
      return this.#insert(newRun, targetKind);
    } catch (error) {
      const key = brokenRunKey(error, newRun.trigger);
      if (key === "runs_backfill_occurrence_uq" || key === "runs_manual_key_uq") return null;
      throw error;
    }
  }
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
