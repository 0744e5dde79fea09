/**
 * `searchRuns` in memory: the reference answer the SQL stores' index paths must give
 * (docs/storage.md#runs-across-tasks), read from every run, newest first.
 */
import type { OwnerScope, Page, RunSearch } from "../../../domain/ports/queries.js";
import type { Run } from "../../../domain/run.js";
import { compareKeys, pageOf } from "../shared/page-cursor.js";
import type { CursorKey } from "../shared/page-cursor.js";
import { searchCursor } from "../shared/run-search.js";
import type { MemoryTables } from "./memory-tables.js";
import { isVisibleTo } from "./memory-scope.js";

function within(value: number | null, after?: number, before?: number): boolean {
  if (after === undefined && before === undefined) return true;
  if (value === null) return false;
  return (after === undefined || value >= after) && (before === undefined || value < before);
}

function matches(tables: MemoryTables, scope: OwnerScope, search: RunSearch, run: Run): boolean {
  return (
    isVisibleTo(scope, run.owner) &&
    (search.statuses === undefined ||
      search.statuses.length === 0 ||
      search.statuses.includes(run.status)) &&
    (search.taskId === undefined || run.taskId === search.taskId) &&
    (search.targetKind === undefined || tables.runTargetKind(run.id) === search.targetKind) &&
    (search.trigger === undefined || run.trigger === search.trigger) &&
    (search.late === undefined || run.late === search.late) &&
    within(run.scheduledFor, search.scheduledAfter, search.scheduledBefore) &&
    within(run.finishedAt, search.finishedAfter, search.finishedBefore)
  );
}

const keyOf = (run: Run): CursorKey => [run.scheduledFor, run.id];

export function searchMemoryRuns(
  tables: MemoryTables,
  scope: OwnerScope,
  search: RunSearch,
): Page<Run> {
  const before = searchCursor(search);
  const rows = [...tables.runs()]
    .filter((run) => matches(tables, scope, search, run))
    .filter((run) => before === null || compareKeys(keyOf(run), before) < 0)
    .sort((a, b) => compareKeys(keyOf(b), keyOf(a)))
    .slice(0, search.limit + 1);
  return pageOf(rows, search.limit, keyOf);
}
