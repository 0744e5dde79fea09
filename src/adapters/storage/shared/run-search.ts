/**
 * How both SQL stores answer `RunRepository.searchRuns` (docs/storage.md#runs-across-tasks): which index
 * path a search takes, decided from its filters alone so that the statement, not the planner's
 * statistics, says which index serves it. The stores write the SQL; this never branches on a dialect.
 *
 * Paths, in order of preference:
 *   task     a task's runs: `runs_occurrence_uq (task_id, scheduled_for, trigger or id)` walked backwards,
 *            each instant's few runs sorted by id (PostgreSQL since migration 34, SQLite since 21);
 *   finished a finished-time range: `runs_retention_idx (finished_at)`, bounded by the range;
 *   rare     late runs, or manual or backfill ones: the partial `runs_owner_rare_idx`;
 *   branches everything else of one owner: one ordered range of `runs_owner_listing_idx (owner, status,
 *            target_kind, scheduled_for DESC, id DESC)` per status and kind asked for, each cut at the
 *            page size, then merged: at most 9 x 3 short index walks instead of one walk of every run.
 * A search across every owner (an admin token) that names no task and no finished range has no index
 * led by owner to walk: it reads `runs` in order of `scheduled_for` (docs/storage.md#runs-across-tasks).
 */
import type { RunSearch } from "../../../domain/ports/queries.js";
import { RUN_STATUSES } from "../../../domain/run.js";
import type { RunStatus } from "../../../domain/run.js";
import { TARGET_KINDS } from "../../../domain/target.js";
import type { TargetKind } from "../../../domain/target.js";
import { decodeCursor } from "./page-cursor.js";
import type { CursorKey } from "./page-cursor.js";

export type RunSearchPath =
  | { readonly kind: "task" | "finished" | "rare" | "single" }
  | {
      readonly kind: "branches";
      readonly branches: readonly { readonly status: RunStatus; readonly targetKind: TargetKind }[];
    };

/** The index path for `search` seen by an owner (`owned`) or across owners. */
export function runSearchPath(search: RunSearch, owned: boolean): RunSearchPath {
  if (search.taskId !== undefined) return { kind: "task" };
  if (search.finishedAfter !== undefined || search.finishedBefore !== undefined) {
    return { kind: "finished" };
  }
  if (search.late === true || (search.trigger !== undefined && search.trigger !== "scheduled")) {
    return { kind: "rare" };
  }
  if (!owned) return { kind: "single" };
  const statuses =
    search.statuses === undefined || search.statuses.length === 0
      ? RUN_STATUSES
      : [...new Set(search.statuses)];
  const kinds = search.targetKind === undefined ? TARGET_KINDS : [search.targetKind];
  return {
    kind: "branches",
    branches: statuses.flatMap((status) => kinds.map((targetKind) => ({ status, targetKind }))),
  };
}

/** The cursor's sort key (`scheduled_for, id` of the last row shown), if any. */
export function searchCursor(search: RunSearch): CursorKey | null {
  return search.cursor === undefined ? null : decodeCursor(search.cursor);
}

/** The statuses to filter on outside the branches (none: every status). */
export function statusFilter(search: RunSearch): readonly RunStatus[] | null {
  return search.statuses === undefined || search.statuses.length === 0 ? null : search.statuses;
}
