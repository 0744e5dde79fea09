/**
 * A run read together with its task in one statement (claims, expired claims): the task's columns travel
 * under a `task__` prefix and are split off when the row is read.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { ClaimedRun } from "../../../domain/ports/run-repository.js";
import { taskSource } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import { TASK_COLUMNS, record, runFromRow, taskFromRow, taskSelectList } from "./postgres-rows.js";

const PREFIX = "task__";
const PREFIXED_TASK_COLUMNS = TASK_COLUMNS.map((c) => [c.name, `${PREFIX}${c.name}`] as const);

/**
 * `claimedRunSelect` over the runs of `ids` (a `text[]` parameter), each found by primary key and locked
 * `FOR UPDATE SKIP LOCKED` in a lateral subquery: by `id = ANY($1)` a table never analyzed was read whole.
 */
export function lockedClaimedRunSelect(ctx: PostgresContext, ids: string): string {
  return claimedRunSelect(
    ctx,
    `unnest(${ids}) AS w(id) CROSS JOIN LATERAL (SELECT * FROM ${ctx.runSql.table} AS p` +
      ` WHERE p.id = w.id FOR UPDATE SKIP LOCKED) AS r`,
  );
}

/**
 * `SELECT <run r>, <task t as task__*> FROM runs r` (or `runs`, a FROM item named r) with each run's task
 * found by primary key: append
 * `WHERE ...`. The task comes from a lateral subquery the planner cannot flatten (`OFFSET 0`), so it is
 * probed once per run read, however many tasks there are and whatever the statistics say (joined, the
 * planner hashed all 10,000 tasks of a burst to lock 200 runs).
 */
export function claimedRunSelect(ctx: PostgresContext, runs = `${ctx.runSql.table} AS r`): string {
  return `SELECT ${ctx.runSql.columns}, ${claimedTaskColumns("t")} FROM ${runs}${claimedTaskJoin(ctx, "t")}`;
}

/**
 * ` JOIN LATERAL (...) AS alias ON true`: the task of run `r` (its `tasks` and `task_state` rows, each by
 * primary key), its columns under the `task__` prefix.
 */
export function claimedTaskJoin(ctx: PostgresContext, alias: string): string {
  return (
    ` JOIN LATERAL (SELECT ${taskSelectList("k", "v", PREFIX)} FROM ${taskSource(ctx, "k", "v")}` +
    ` WHERE k.id = r.task_id OFFSET 0) AS ${alias} ON true`
  );
}

/** The task's columns of a claimed-run row, from `claimedTaskJoin`'s `alias`: what `claimedRunFromRow` reads. */
export function claimedTaskColumns(alias: string): string {
  return PREFIXED_TASK_COLUMNS.map(([, prefixed]) => `${alias}.${prefixed}`).join(", ");
}

export function claimedRunFromRow(value: unknown, secrets: SecretSealer): ClaimedRun {
  const row = record(value);
  // The run's columns are unprefixed: read from the row itself (the task__ columns are not looked at).
  const taskRow: Record<string, unknown> = {};
  for (const [name, prefixed] of PREFIXED_TASK_COLUMNS) taskRow[name] = row[prefixed];
  return { run: runFromRow(row), task: taskFromRow(taskRow, secrets) };
}
