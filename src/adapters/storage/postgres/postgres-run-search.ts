/**
 * `searchRuns` on PostgreSQL (docs/storage.md#runs-across-tasks): one statement per search, its index
 * path chosen by `runSearchPath` and written into the text so that each filter reaches its index. Values
 * are parameters; the statement is sent unnamed, so each is planned with its own values (a partial
 * index is only usable when the planner sees them).
 *
 * No index of `runs` names the status or finished_at (migration 24: a fire's status changes are then
 * heap-only). A search for active runs only (queued, launching, running) reads its candidates from
 * `run_ready` and `claim_slots`, bounded by the queue and the budget; any other status is a filter on
 * the owner's listing walk (`runs_owner_listing_idx (owner, target_kind, scheduled_for, id)` walked
 * backwards, ascending since migration 35, one branch per target kind), as is a finished-time range.
 */
import type { OwnerScope, Page, RunSearch } from "../../../domain/ports/queries.js";
import { ACTIVE_RUN_STATUSES } from "../../../domain/run.js";
import type { Run, RunStatus } from "../../../domain/run.js";
import { pageOf } from "../shared/page-cursor.js";
import { runSearchPath, searchCursor, statusFilter } from "../shared/run-search.js";
import type { PostgresQueryable } from "./postgres-pool.js";
import { runFromRow } from "./postgres-rows.js";
import type { RunSql } from "./postgres-run-writes.js";
import { msToTimestamp } from "./postgres-sql.js";

const ORDER = "ORDER BY scheduled_for DESC, id DESC";
/** `runs_owner_rare_idx`'s predicate, repeated word for word so the planner proves it. */
const RARE = "(r.late OR r.trigger <> 'scheduled')";

class Parameters {
  readonly values: unknown[] = [];

  /** `$n::type` for `value`. */
  add(value: unknown, type: string): string {
    this.values.push(value);
    return `$${String(this.values.length)}::${type}`;
  }
}

/** Conditions every path shares, on the run `r`. */
function conditions(scope: OwnerScope, search: RunSearch, p: Parameters): string[] {
  const where: string[] = [];
  const ts = (value: number): string => msToTimestamp(p.add(value, "int8"));
  if (scope.kind === "owner") where.push(`r.owner = ${p.add(scope.owner, "text")}`);
  if (search.taskId !== undefined) where.push(`r.task_id = ${p.add(search.taskId, "text")}`);
  if (search.trigger !== undefined) where.push(`r.trigger = ${p.add(search.trigger, "text")}`);
  if (search.late !== undefined) where.push(`r.late = ${p.add(search.late, "bool")}`);
  if (search.scheduledAfter !== undefined) {
    where.push(`r.scheduled_for >= ${ts(search.scheduledAfter)}`);
  }
  if (search.scheduledBefore !== undefined) {
    where.push(`r.scheduled_for < ${ts(search.scheduledBefore)}`);
  }
  if (search.finishedAfter !== undefined) {
    where.push(`r.finished_at >= ${ts(search.finishedAfter)}`);
  }
  if (search.finishedBefore !== undefined) {
    where.push(`r.finished_at < ${ts(search.finishedBefore)}`);
  }
  const cursor = searchCursor(search);
  if (cursor !== null) {
    where.push(`(r.scheduled_for, r.id) < (${ts(cursor[0])}, ${p.add(cursor[1], "text")})`);
  }
  return where;
}

/** The statement and its values for `search` in `scope`, reading one row past the page. */
export function runSearchStatement(
  sql: RunSql,
  scope: OwnerScope,
  search: RunSearch,
): { text: string; values: unknown[] } {
  const p = new Parameters();
  const owned = scope.kind === "owner";
  const found = runSearchPath(search, owned);
  // A finished-time range has no index of its own here: an owner's search walks its listing.
  const unfinished: RunSearch = { ...search };
  delete (unfinished as { finishedAfter?: unknown }).finishedAfter;
  delete (unfinished as { finishedBefore?: unknown }).finishedBefore;
  const path = found.kind === "finished" ? runSearchPath(unfinished, owned) : found;
  const where = conditions(scope, search, p);
  const statuses = statusFilter(search);
  if (statuses !== null) where.push(`r.status = ANY(${p.add(statuses, "text[]")})`);
  if (found.kind === "finished") where.push("r.finished_at IS NOT NULL");
  if (statuses !== null && path.kind !== "task" && onlyActive(statuses)) {
    where.push(activeIds(sql, scope, p));
  }
  const limit = p.add(search.limit + 1, "int4");
  const select = (extra: readonly string[]): string =>
    `SELECT ${sql.columns} FROM ${sql.table} AS r WHERE ${[...where, ...extra].join(" AND ") || "true"}` +
    ` ORDER BY r.scheduled_for DESC, r.id DESC LIMIT ${limit}`;
  if (path.kind === "branches") {
    const kinds = [...new Set(path.branches.map((b) => b.targetKind))];
    const branches = kinds.map((kind) => `(${select([`r.target_kind = ${p.add(kind, "text")}`])})`);
    // One branch is a plain select: a parenthesised one under a second ORDER BY is a syntax error.
    const [only, ...more] = branches;
    if (only !== undefined && more.length === 0)
      return { text: only.slice(1, -1), values: p.values };
    return { text: `${branches.join(" UNION ALL ")} ${ORDER} LIMIT ${limit}`, values: p.values };
  }
  const extra: string[] = [];
  if (search.targetKind !== undefined) {
    extra.push(`r.target_kind = ${p.add(search.targetKind, "text")}`);
  }
  if (path.kind === "rare") extra.push(RARE);
  return { text: select(extra), values: p.values };
}

function onlyActive(statuses: readonly RunStatus[]): boolean {
  return statuses.every((s) => (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(s));
}

/** The run is queued (`run_ready`) or holds a budget slot: the live set, never the ledger. */
function activeIds(sql: RunSql, scope: OwnerScope, p: Parameters): string {
  const owner = scope.kind === "owner" ? p.add(scope.owner, "text") : null;
  const mine = (alias: string) => (owner === null ? "" : ` WHERE ${alias}.owner = ${owner}`);
  return (
    `r.id IN (SELECT q.run_id FROM ${sql.schema}.run_ready AS q${mine("q")}` +
    ` UNION ALL SELECT s.run_id FROM ${sql.schema}.claim_slots AS s` +
    `${owner === null ? " WHERE s.run_id IS NOT NULL" : mine("s")})`
  );
}

/** Runs the search and pages its rows. */
export async function searchPostgresRuns(
  db: PostgresQueryable,
  sql: RunSql,
  scope: OwnerScope,
  search: RunSearch,
): Promise<Page<Run>> {
  const statement = runSearchStatement(sql, scope, search);
  const result = await db.query(statement.text, statement.values);
  const runs = result.rows.map(runFromRow);
  return pageOf(runs, search.limit, (run) => [run.scheduledFor, run.id]);
}
