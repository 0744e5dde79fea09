/**
 * A run read together with its task in one statement (claims, expired claims): the task's columns travel
 * under a `task__` prefix and are split off when the row is read.
 */
import type { SecretSealer } from "../../../domain/ports/store.js";
import type { ClaimedRun } from "../../../domain/ports/run-repository.js";
import { taskSource } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import type { Task } from "../../../domain/task.js";
import type { PostgresClient } from "./postgres-pool.js";
import {
  TASK_COLUMNS,
  TASK_STATE_COLUMNS,
  record,
  runFromRow,
  taskFromRow,
  taskSelectList,
  taskStateNames,
} from "./postgres-rows.js";
import { timestampToMs } from "./postgres-sql.js";
import { DEFINITION_STAMP } from "./postgres-task-definitions.js";

const PREFIX = "task__";
const PREFIXED_TASK_COLUMNS = TASK_COLUMNS.map((c) => [c.name, `${PREFIX}${c.name}`] as const);

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

const STATE_COLUMNS = TASK_STATE_COLUMNS.filter((c) => c.name !== "task_id");

/** The `task_state` columns a claim reads of each run's task, under the `task__` prefix. */
export const CLAIM_STATE_NAMES = taskStateNames(PREFIX);

/** The claim's row names the task's definition stamp (`tasks.xmin`) by this. */
export const CLAIM_STAMP_COLUMN = `${PREFIX}${DEFINITION_STAMP}`;

/**
 * ` JOIN LATERAL (...) AS alias ON true`: what a claim reads of run `r`'s task (docs/storage.md#the-claim-reads-narrow-rows):
 * its `task_state` row, its definition's stamp and its handler's name, each under the `task__` prefix;
 * the definition itself comes from `TaskDefinitions`. By primary key, once per run (`OFFSET 0`), as in
 * `claimedTaskJoin`.
 */
export function claimStateJoin(ctx: PostgresContext, alias: string): string {
  // The task's id is the run's `task_id`.
  const state = STATE_COLUMNS.map((c) =>
    c.type === "ts"
      ? `${timestampToMs(`v.${c.name}`)} AS ${PREFIX}${c.name}`
      : `v.${c.name} AS ${PREFIX}${c.name}`,
  ).join(", ");
  return (
    ` JOIN LATERAL (SELECT ${state}, k.xmin::text AS ${CLAIM_STAMP_COLUMN},` +
    ` k.handler_name AS ${PREFIX}handler_name FROM ${taskSource(ctx, "k", "v")}` +
    ` WHERE k.id = r.task_id OFFSET 0) AS ${alias} ON true`
  );
}

/** The columns of `claimStateJoin`'s `alias` a claim selects (the handler's name aside). */
export function claimStateColumns(alias: string): string {
  return [...STATE_COLUMNS.map((c) => `${PREFIX}${c.name}`), CLAIM_STAMP_COLUMN]
    .map((name) => `${alias}.${name}`)
    .join(", ");
}

/**
 * `SELECT <run r>, <claimStateColumns t>` over the runs of `ids` (a `text[]` parameter), locked
 * `FOR UPDATE SKIP LOCKED`, in no particular order. By `id = ANY (ids)`, one scan of `runs` per call: an
 * index scan by primary key with statistics; with a generic plan made while `runs` looked empty, one
 * pass over `runs` per call, where a lookup per id (a lateral subquery) read `runs` whole once per id
 * (docs/storage.md#plans-made-while-runs-looked-empty). `SKIP LOCKED` never waits, so the order the
 * rows are locked in does not matter.
 */
export function lockedClaimSelect(ctx: PostgresContext, ids: string): string {
  return (
    `SELECT ${ctx.runSql.columns}, ${claimStateColumns("t")} FROM (SELECT * FROM ${ctx.runSql.table}` +
    ` AS p WHERE p.id = ANY (${ids}) FOR UPDATE SKIP LOCKED) AS r${claimStateJoin(ctx, "t")}`
  );
}

/**
 * Claimed runs from narrow rows (`lockedClaimSelect`, or the queue head's): each run mapped from its
 * row, its task from the definitions held and its state, the definitions not held read in one statement.
 */
export async function claimedRunsFromStateRows(
  ctx: PostgresContext,
  client: PostgresClient,
  rows: readonly Record<string, unknown>[],
): Promise<ClaimedRun[]> {
  const tasks = await ctx.definitions.tasksOf(client, rows, {
    idColumn: "task_id",
    stampColumn: CLAIM_STAMP_COLUMN,
    names: CLAIM_STATE_NAMES,
  });
  return rows.map((row, i) => ({ run: runFromRow(row), task: tasks[i] as Task }));
}
