/**
 * Tasks on SQLite: creation, scoped reads and owner commands; admission is `sqlite-admission.ts`. Every write runs in one
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
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import { settle, StatementCache } from "./sqlite-database.js";
import type { SqliteDatabase, SqliteTransactions } from "./sqlite-database.js";
import { SqliteCalendarStamps } from "./sqlite-calendar-repository.js";
import { brokenRunKey, isTaskKeyTaken } from "./sqlite-errors.js";
import { columnList, runFromRow } from "./sqlite-rows.js";
import type { TargetKind } from "../../../domain/target.js";
import { TASK_DEFINITION_COLUMNS, TASK_STATE_COLUMNS } from "./sqlite-rows.js";
import { taskFromRow, taskToRow } from "./sqlite-rows.js";
import type { TaskRow } from "./sqlite-rows.js";
import { TASK_SELECT } from "./sqlite-statements.js";
import type { SqliteStatements } from "./sqlite-statements.js";
import type { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";
import { activeRunsOf, insertRun, rewriteRun, SqliteAdmission } from "./sqlite-admission.js";

type ListParams = Record<string, string | number>;

export class SqliteTaskRepository implements TaskRepository {
  readonly #tx: SqliteTransactions;
  readonly #shared: SqliteStatements;
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
  readonly #lists: StatementCache<[ListParams], TaskRow>;
  readonly #admission: SqliteAdmission;

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
    this.#newId = options.newId;
    this.#stamps = new SqliteCalendarStamps(db);
    this.#admission = new SqliteAdmission(options);
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
        const activeRuns = activeRunsOf(this.#shared, [id]);
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
        for (const update of mutation.runUpdates ?? []) rewriteRun(this.#shared, update, read);
        return mutation.result(inserted);
      }),
    );
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[]) => AdmissionWrite,
  ): Promise<AdmissionReport> {
    return this.#admission.admitDueTasks(now, limit, decide);
  }

  nextDueAt(): Promise<Instant | null> {
    return this.#admission.nextDueAt();
  }

  #visible(scope: OwnerScope, id: TaskId): Task | null {
    const owner = scope.kind === "owner" ? scope.owner : null;
    const row = this.#visibleTask.get({ id, owner });
    return row === undefined ? null : taskFromRow(row, this.#shared.secrets);
  }

  /** A repeated backfill time or manual key is not an error: that run is simply not inserted. */
  #insertUnlessRepeated(newRun: NewRun, targetKind: TargetKind): Run | null {
    try {
      return insertRun(this.#shared, this.#newId, newRun, targetKind);
    } catch (error) {
      const key = brokenRunKey(error, newRun.trigger);
      if (key === "runs_backfill_occurrence_uq" || key === "runs_manual_key_uq") return null;
      throw error;
    }
  }
}
