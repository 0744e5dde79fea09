/**
 * `searchRuns` on SQLite (docs/storage.md#runs-across-tasks): one statement per search, its index path
 * chosen by `runSearchPath` and written into the text so that each filter reaches its index (SQLite uses
 * a partial index only when the query repeats its predicate). Statements are cached by text.
 *
 * Since migration 17 no index of `runs` names the status or `finished_at`, as on PostgreSQL: a search for
 * active runs only reads its candidates from `run_ready` and `run_active` (bounded by the queue and the
 * budget); any other status, and a finished-time range, is a filter on the owner's walk of
 * `runs_owner_listing_idx (owner, target_kind, scheduled_for, id)`, one branch per kind, walked backwards
 * (ascending since migration 22, so that a new run is appended to it).
 */
import type { OwnerScope, RunSearch } from "../../../domain/ports/queries.js";
import { runSearchPath, searchCursor, statusFilter } from "../shared/run-search.js";
import { ACTIVE_RUN_STATUSES } from "../../../domain/run.js";
import type { RunStatus } from "../../../domain/run.js";
import { RUN_SELECT } from "./sqlite-statements.js";

/** `runs_owner_rare_idx`'s predicate, word for word. */
const RARE = `(late = 1 OR "trigger" <> 'scheduled')`;
const ORDER = "ORDER BY scheduled_for DESC, id DESC";

type Params = Record<string, string | number>;

function conditions(scope: OwnerScope, search: RunSearch, params: Params): string[] {
  const where: string[] = [];
  const add = (clause: string, name: string, value: string | number): void => {
    where.push(clause);
    params[name] = value;
  };
  if (scope.kind === "owner") add("owner = @owner", "owner", scope.owner);
  if (search.taskId !== undefined) add("task_id = @task_id", "task_id", search.taskId);
  if (search.trigger !== undefined) add(`"trigger" = @trigger`, "trigger", search.trigger);
  if (search.late !== undefined) add("late = @late", "late", search.late ? 1 : 0);
  if (search.scheduledAfter !== undefined) {
    add("scheduled_for >= @scheduled_after", "scheduled_after", search.scheduledAfter);
  }
  if (search.scheduledBefore !== undefined) {
    add("scheduled_for < @scheduled_before", "scheduled_before", search.scheduledBefore);
  }
  if (search.finishedAfter !== undefined) {
    add("finished_at >= @finished_after", "finished_after", search.finishedAfter);
  }
  if (search.finishedBefore !== undefined) {
    add("finished_at < @finished_before", "finished_before", search.finishedBefore);
  }
  const cursor = searchCursor(search);
  if (cursor !== null) {
    where.push("(scheduled_for, id) < (@before_at, @before_id)");
    params["before_at"] = cursor[0];
    params["before_id"] = cursor[1];
  }
  return where;
}

/** The statement text and its named parameters, reading one row past the page. */
export function sqliteRunSearch(
  scope: OwnerScope,
  search: RunSearch,
): { sql: string; params: Params } {
  const params: Params = { limit: search.limit + 1 };
  const owned = scope.kind === "owner";
  const found = runSearchPath(search, owned);
  // A finished-time range has no index of its own since migration 17: an owner's search walks its
  // listing, checking the range on each row.
  const unfinished: RunSearch = { ...search };
  delete (unfinished as { finishedAfter?: unknown }).finishedAfter;
  delete (unfinished as { finishedBefore?: unknown }).finishedBefore;
  const path = found.kind === "finished" ? runSearchPath(unfinished, owned) : found;
  const where = conditions(scope, search, params);
  const statuses = statusFilter(search);
  if (statuses !== null) {
    const names = statuses.map((status, i) => {
      params[`status_${String(i)}`] = status;
      return `@status_${String(i)}`;
    });
    where.push(`status IN (${names.join(", ")})`);
  }
  if (found.kind === "finished") where.push("finished_at IS NOT NULL");
  if (statuses !== null && path.kind !== "task" && onlyActive(statuses)) {
    where.push(activeIds(owned));
  }
  const select = (extra: readonly string[]): string => {
    const all = [...where, ...extra];
    return `${RUN_SELECT}${all.length === 0 ? "" : ` WHERE ${all.join(" AND ")}`} ${ORDER} LIMIT @limit`;
  };
  if (path.kind === "branches") {
    // One ordered walk of runs_owner_listing_idx per target kind asked for, merged.
    const kinds = [...new Set(path.branches.map((b) => b.targetKind))];
    const branches = kinds.map((kind, i) => {
      params[`kind_${String(i)}`] = kind;
      return `SELECT * FROM (${select([`target_kind = @kind_${String(i)}`])})`;
    });
    return { sql: `${branches.join(" UNION ALL ")} ${ORDER} LIMIT @limit`, params };
  }
  const extra: string[] = [];
  if (search.targetKind !== undefined) {
    extra.push("target_kind = @target_kind");
    params["target_kind"] = search.targetKind;
  }
  if (path.kind === "rare") extra.push(RARE);
  return { sql: select(extra), params };
}

function onlyActive(statuses: readonly RunStatus[]): boolean {
  return statuses.every((s) => (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(s));
}

/** The run is queued (`run_ready`) or holds a slot (`run_active`): the live set, never the ledger. */
function activeIds(owned: boolean): string {
  const mine = (alias: string): string => (owned ? ` WHERE ${alias}.owner = @owner` : "");
  return (
    `id IN (SELECT q.run_id FROM run_ready q${mine("q")}` +
    ` UNION ALL SELECT a.run_id FROM run_active a${mine("a")})`
  );
}
