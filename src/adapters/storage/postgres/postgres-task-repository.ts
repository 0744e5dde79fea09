/**
 * `TaskRepository` on PostgreSQL: task rows, owner commands under `SELECT ... FOR UPDATE` of the task and
 * its active runs, and admission (postgres-admission.ts). Owner commands that create work notify the wake
 * channel at commit.
 */
import type { TaskCountCheck } from "../../../domain/ports/task-repository.js";
import { addedByOwner } from "../shared/added-by-owner.js";
import type { AdmissionWrite } from "../../../domain/admit-task.js";
import { calendarStamps, changedStamps, stampsByOwner } from "../../../domain/calendar.js";
import { KeyTakenError, NotFoundError } from "../../../domain/errors.js";
import { decideMutation } from "../shared/task-mutation.js";
import type { OwnerId, RunId, TaskId } from "../../../domain/ids.js";
import { runId } from "../../../domain/ids.js";
import { newRunWithId } from "../../../domain/new-run.js";
import type { NewRun } from "../../../domain/new-run.js";
import type {
  AdmissionClaim,
  AdmissionRate,
  AdmissionReport,
  LockedTask,
  MutateTaskOptions,
  TaskMutation,
  TaskRepository,
} from "../../../domain/ports/task-repository.js";
import type { OwnerScope, Page, TaskQuery } from "../../../domain/ports/queries.js";
import type { Run } from "../../../domain/run.js";
import type { TargetKind } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import { PostgresAdmission } from "./postgres-admission.js";
import { PostgresClaim } from "./postgres-claim.js";
import { HeldGates, PostgresAdmissionRate, admitAgainWhenNear } from "./postgres-admission-rate.js";
import { checkPostgresStamps } from "./postgres-calendar-repository.js";
import { WAKE_CHANNEL, taskSource, wake } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import { decodeCursor, pageOf } from "../shared/page-cursor.js";
import type { PostgresClient } from "./postgres-pool.js";
import {
  TASK_COLUMNS,
  instantOrNull,
  integer,
  record,
  runFromRow,
  taskFromRow,
  taskSelectList,
  calendarItemsColumn,
  taskValues,
  taskWrite,
} from "./postgres-rows.js";
import type { InsertConflict } from "./postgres-run-writes.js";
import { columnArrays, msToTimestamp } from "./postgres-sql.js";
import { withTransaction } from "./with-transaction.js";
import { uniqueViolation } from "./postgres-errors.js";

/** The unique index keeping one task per owner and key (migration 6). */
const TASK_KEY_INDEX = "tasks_key_uq";

/** The owner a query is limited to, or null for every owner (bound as `$n::text IS NULL OR owner = $n`). */
export function ownerOf(scope: OwnerScope): string | null {
  return scope.kind === "all" ? null : scope.owner;
}

const CONFLICT_BY_TRIGGER: Readonly<Record<Run["trigger"], InsertConflict>> = {
  // A scheduled occurrence written by an owner command (resume) is decided under the task lock after
  // `decided_through`: a duplicate is a bug, so it stays an error.
  scheduled: "none",
  manual: "manual_key",
  backfill: "backfill_occurrence",
};

/** Rows per bulk insert statement; 5,000 tasks make parameters of a few MB at most. */
const INSERT_CHUNK = 5_000;

export class PostgresTaskRepository implements TaskRepository {
  readonly #ctx: PostgresContext;
  readonly #insert: string;
  readonly #insertAndWake: string;
  readonly #rewrite: string;
  readonly #find: string;
  readonly #findByKey: string;
  readonly #lock: string;
  readonly #lockTaskRun: string;
  readonly #list: string;
  readonly #listNewest: string;
  readonly #nextDue: string;
  readonly #admission: PostgresAdmission;
  readonly #rate: PostgresAdmissionRate;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#rate = new PostgresAdmissionRate(ctx);
    this.#admission = new PostgresAdmission(ctx, this.#rate, new PostgresClaim(ctx));
    const tasks = ctx.tasksTable;
    const state = ctx.taskStateTable;
    // Every task read joins the items of the calendar versions it names (docs/storage.md#calendar-versions).
    const columns = `${taskSelectList("t", "s")}, ${calendarItemsColumn(`${ctx.schema.quoted}.calendar_versions`, "t")}`;
    const from = taskSource(ctx);
    // A task is two rows written together, in one statement (docs/storage.md#tasks-and-task_state).
    this.#insert = taskWrite("insert", tasks, state);
    this.#rewrite = taskWrite("rewrite", tasks, state);
    // One statement: the rows and their wake-up commit together.
    const channel = TASK_COLUMNS.length + 1;
    this.#insertAndWake = taskWrite(
      "insert",
      tasks,
      state,
      `SELECT pg_notify($${channel}::text, $${channel + 1}::text) FROM inserted`,
    );
    const visible =
      "t.id = $1::text AND t.deleted_at IS NULL AND ($2::text IS NULL OR t.owner = $2)";
    this.#find = `SELECT ${columns} FROM ${from} WHERE ${visible}`;
    // Both rows: the state row is what admission and the verdict lock, the definition what edits rewrite.
    this.#lock = `${this.#find} FOR UPDATE`;
    this.#lockTaskRun =
      `SELECT ${ctx.runSql.columns} FROM ${ctx.runSql.table} AS r` +
      ` WHERE r.id = $1::text AND r.task_id = $2::text FOR UPDATE`;
    this.#findByKey =
      `SELECT ${columns} FROM ${from} WHERE t.owner = $1::text AND t.task_key = $2::text` +
      ` AND t.task_key IS NOT NULL AND t.deleted_at IS NULL`;
    const list = (newest: boolean) =>
      `SELECT ${columns} FROM ${from} WHERE t.deleted_at IS NULL` +
      ` AND ($1::text IS NULL OR t.owner = $1)` +
      ` AND ($2::text IS NULL OR s.status = $2)` +
      ` AND ($3::text IS NULL OR t.target_kind = $3)` +
      ` AND ($4::text IS NULL OR t.thread_id = $4)` +
      ` AND ($5::text IS NULL OR t.thread_scope = $5)` +
      ` AND ($6::int8 IS NULL OR (t.created_at, t.id) ${newest ? "<" : ">"} (${msToTimestamp("$6::int8")}, $7::text))` +
      ` AND ($9::text IS NULL OR t.task_key = $9)` +
      ` AND ($10::text IS NULL OR t.task_group = $10)` +
      // ASCII case folding, as SQLite's lower() and the memory store fold (one answer on every store).
      ` AND ($11::text IS NULL OR t.task_key = $11 OR strpos(lower(t.title COLLATE "C"),` +
      ` lower($11::text COLLATE "C")) > 0)` +
      ` ORDER BY ${newest ? "t.created_at DESC, t.id DESC" : "t.created_at, t.id"} LIMIT $8::int4`;
    this.#list = list(false);
    this.#listNewest = list(true);
    // The first entry of task_state_due_idx: `due_at` is NULL for a task that is not due. Sent unnamed,
    // so planned at each call against the table as it is: named, its plan was made once per connection,
    // on a new database's empty table, and stayed a read of task_state whole (22 ms a call at 100,000
    // tasks, twice a second; docs/storage.md#plans-made-while-runs-looked-empty).
    this.#nextDue =
      `SELECT (extract(epoch from min(s.due_at)) * 1000)::int8 AS at FROM ${state} AS s` +
      ` WHERE s.due_at IS NOT NULL`;
  }

  async insertTask(task: Task, quota?: TaskCountCheck): Promise<void> {
    try {
      await this.#insertTask(task, quota);
    } catch (error) {
      if (task.key !== null && uniqueViolation(error) === TASK_KEY_INDEX) {
        throw new KeyTakenError(task.key, { cause: error });
      }
      throw error;
    }
  }

  async countTasks(owner: OwnerId): Promise<number> {
    const result = await this.#ctx.pool.query(
      `SELECT count(*)::int8 AS n FROM ${this.#ctx.tasksTable}
        WHERE owner = $1::text AND deleted_at IS NULL`,
      [owner],
    );
    return integer(record(result.rows[0]), "n");
  }

  async findTaskByKey(owner: OwnerId, key: string): Promise<Task | null> {
    const result = await this.#ctx.pool.query(this.#findByKey, [owner, key]);
    const row = result.rows[0];
    return row === undefined ? null : taskFromRow(row, this.#ctx.secrets);
  }

  /**
   * The `tasks_per_owner` check of an insert, in its transaction: a transaction-scoped advisory lock
   * keyed by the schema and the owner makes every replica's inserts for one owner take turns between
   * the count and the commit, so the count each sees includes every insert before it. Only inserts
   * with a quota take it; other statements never wait for it.
   */
  async #checkCounts(
    client: PostgresClient,
    tasks: readonly Task[],
    quota: TaskCountCheck | undefined,
  ): Promise<void> {
    if (quota === undefined) return;
    const owners = [...addedByOwner(tasks)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [owner, adding] of owners) {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [
        `punctual.tasks_per_owner:${this.#ctx.schema.name}:${owner}`,
      ]);
      const result = await client.query(
        `SELECT count(*)::int8 AS n FROM ${this.#ctx.tasksTable}
          WHERE owner = $1::text AND deleted_at IS NULL`,
        [owner],
      );
      quota(owner, integer(record(result.rows[0]), "n"), adding);
    }
  }

  /**
   * The owner's runs of a trigger since an instant, counted under a transaction-scoped advisory lock
   * keyed by the schema, the owner and the trigger: every replica's counting commands for one owner
   * take turns between this count and their commit, so each sees the runs of those before it. Taken
   * after the task's row lock, and nothing waits for a row lock while holding it: no deadlock.
   */
  async #countRecentRuns(
    client: PostgresClient,
    owner: OwnerId,
    recent: NonNullable<MutateTaskOptions["recentRuns"]>,
  ): Promise<number> {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [
      `punctual.recent_runs:${this.#ctx.schema.name}:${owner}:${recent.trigger}`,
    ]);
    const requested = recent.trigger === "scheduled" ? "" : ` AND "trigger" <> 'scheduled'`;
    // A new statement after the lock: it sees every run committed by the lock's previous holder.
    const result = await client.query(
      `SELECT count(*)::int8 AS n FROM ${this.#ctx.runSql.table}
        WHERE owner = $1::text AND queued_at >= ${msToTimestamp("$2::int8")}
          AND "trigger" = $3::text${requested}`,
      [owner, recent.since, recent.trigger],
    );
    return integer(record(result.rows[0]), "n");
  }

  async #insertTask(task: Task, quota?: TaskCountCheck): Promise<void> {
    const values = this.#rows([task]);
    const stamps = calendarStamps(task.schedule);
    if (stamps.length > 0 || quota !== undefined) {
      // Its calendars' rows stay share-locked until the task is in: see postgres-calendar-repository.ts.
      await withTransaction(this.#ctx.pool, async (client) => {
        await this.#checkCounts(client, [task], quota);
        await checkPostgresStamps(this.#ctx, client, task.owner, stamps);
        await client.query(this.#insert, values);
        await wake(this.#ctx, client, `task:${task.id}`);
      });
      return;
    }
    if (!this.#ctx.notifies) {
      await this.#ctx.pool.query(this.#insert, values);
      return;
    }
    await this.#ctx.pool.query(this.#insertAndWake, [...values, WAKE_CHANNEL, `task:${task.id}`]);
  }

  async insertTasks(tasks: readonly Task[], quota?: TaskCountCheck): Promise<void> {
    try {
      await this.#insertTasks(tasks, quota);
    } catch (error) {
      if (uniqueViolation(error) !== TASK_KEY_INDEX) throw error;
      // The statement inserts many rows at once: the key is in the server's detail text only.
      const detail = (error as { detail?: unknown }).detail;
      const found =
        typeof detail === "string" ? /\)=\([^,]*, (.*)\) already exists/.exec(detail) : null;
      throw new KeyTakenError(found?.[1] ?? "(a key of the batch)", { cause: error });
    }
  }

  async #insertTasks(tasks: readonly Task[], quota?: TaskCountCheck): Promise<void> {
    if (tasks.length === 0) return;
    await withTransaction(this.#ctx.pool, async (client) => {
      await this.#checkCounts(client, tasks, quota);
      for (const [owner, stamps] of stampsByOwner(tasks)) {
        await checkPostgresStamps(this.#ctx, client, owner, stamps);
      }
      // One unnest per chunk: the arrays travel as text parameters, so a chunk bounds their size.
      for (let start = 0; start < tasks.length; start += INSERT_CHUNK) {
        await client.query(this.#insert, this.#rows(tasks.slice(start, start + INSERT_CHUNK)));
      }
      await wake(this.#ctx, client, `tasks:${String(tasks.length)}`);
    });
  }

  /** The parameters of `#insert` and `#rewrite`. */
  #rows(tasks: readonly Task[]): string[] {
    return columnArrays(
      TASK_COLUMNS,
      tasks.map((task) => taskValues(task, this.#ctx.secrets)),
    );
  }

  async findTask(scope: OwnerScope, id: TaskId): Promise<Task | null> {
    const result = await this.#ctx.pool.query(this.#find, [id, ownerOf(scope)]);
    const row = result.rows[0];
    return row === undefined ? null : taskFromRow(row, this.#ctx.secrets);
  }

  async listTasks(scope: OwnerScope, query: TaskQuery): Promise<Page<Task>> {
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const sql = query.newestFirst === true ? this.#listNewest : this.#list;
    const result = await this.#ctx.pool.query(sql, [
      ownerOf(scope),
      query.status ?? null,
      query.targetKind ?? null,
      query.thread?.threadId ?? null,
      query.thread?.threadScope ?? null,
      after?.[0] ?? null,
      after?.[1] ?? null,
      query.limit + 1,
      query.key ?? null,
      query.group ?? null,
      query.search ?? null,
    ]);
    const tasks = result.rows.map((row) => taskFromRow(row, this.#ctx.secrets));
    return pageOf(tasks, query.limit, (item) => [item.createdAt, item.id]);
  }

  mutateTask<T>(
    scope: OwnerScope,
    id: TaskId,
    decide: (locked: LockedTask) => TaskMutation<T>,
    options: MutateTaskOptions = {},
  ): Promise<T> {
    return admitAgainWhenNear(() => this.#mutateTask(scope, id, decide, options));
  }

  #mutateTask<T>(
    scope: OwnerScope,
    id: TaskId,
    decide: (locked: LockedTask) => TaskMutation<T>,
    options: MutateTaskOptions,
  ): Promise<T> {
    const gates = new HeldGates();
    return withTransaction(this.#ctx.pool, async (client) => {
      const found = await client.query(this.#lock, [id, ownerOf(scope)]);
      if (found.rows[0] === undefined) throw new NotFoundError("task", id);
      const task = taskFromRow(found.rows[0], this.#ctx.secrets);
      // The active runs are locked too, so a concurrent claim cannot launch a run this command cancels.
      const activeRuns = await this.#ctx.runSql.lockActive(client, [task.id]);
      const recent = options.recentRuns;
      const rated = options.admissions;
      const gate =
        rated === undefined
          ? null
          : gates.hold(
              await this.#rate.open(client, new Map([[task.owner, rated.perMinute]]), rated.now),
            );
      const admitted = gate?.admitted(task.owner);
      const locked: LockedTask = {
        task,
        activeRuns,
        ...(options.run === undefined
          ? {}
          : { run: await this.#lockRun(client, task.id, options.run) }),
        ...(recent === undefined
          ? {}
          : { recentRuns: await this.#countRecentRuns(client, task.owner, recent) }),
        ...(admitted === undefined ? {} : { admittedLastMinute: admitted }),
      };
      const mutation = decideMutation(locked, decide);
      gate?.add(mutation.newRuns ?? []);
      gate?.check();
      if (mutation.task !== undefined) {
        const stamps = changedStamps(task.schedule, mutation.task.schedule);
        await checkPostgresStamps(this.#ctx, client, task.owner, stamps);
        await client.query(this.#rewrite, this.#rows([mutation.task]));
      }
      const kind = (mutation.task ?? task).target.kind;
      const inserted = await this.#insertNewRuns(client, mutation.newRuns ?? [], kind);
      await gate?.record(
        client,
        inserted.filter((run) => run !== null),
      );
      await this.#ctx.runSql.rewrite(client, mutation.runUpdates ?? []);
      const requeued = (mutation.runUpdates ?? []).some((run) => run.status === "queued");
      if (mutation.task !== undefined || requeued || inserted.some((run) => run !== null)) {
        await wake(this.#ctx, client, `task:${task.id}`);
      }
      return mutation.result(inserted);
    }).finally(() => {
      gates.close();
    });
  }

  /** The task's run `id`, locked after the task (the order every writer locks in), or null. */
  async #lockRun(client: PostgresClient, task: TaskId, id: RunId): Promise<Run | null> {
    const result = await client.query(this.#lockTaskRun, [id, task]);
    return result.rows[0] === undefined ? null : runFromRow(result.rows[0]);
  }

  /** Inserts in order, one statement per run of consecutive rows with the same trigger. */
  async #insertNewRuns(
    client: PostgresClient,
    newRuns: readonly NewRun[],
    kind: TargetKind,
  ): Promise<(Run | null)[]> {
    const runs = newRuns.map((newRun) => newRunWithId(newRun, runId(this.#ctx.newId())));
    const written = new Set<string>();
    let start = 0;
    while (start < runs.length) {
      const trigger = runs[start]?.trigger ?? "scheduled";
      let end = start;
      while (end < runs.length && runs[end]?.trigger === trigger) end++;
      const ids = await this.#ctx.runSql.insert(
        client,
        runs.slice(start, end),
        () => kind,
        CONFLICT_BY_TRIGGER[trigger],
      );
      for (const id of ids) written.add(id);
      start = end;
    }
    return runs.map((run) => (written.has(run.id) ? run : null));
  }

  admitDueTasks(
    now: Instant,
    limit: number,
    decide: (task: Task, activeRuns: readonly Run[], admitted?: number) => AdmissionWrite,
    rate?: AdmissionRate,
    claim?: AdmissionClaim,
  ): Promise<AdmissionReport> {
    return this.#admission.admit({ now, limit, decide, rate, claim });
  }

  async nextDueAt(): Promise<Instant | null> {
    const result = await this.#ctx.pool.query(this.#nextDue);
    return instantOrNull(record(result.rows[0]), "at");
  }
}
