/**
 * Each task's runs in history order (`scheduled_for, id` ascending): the memory store's index behind
 * `listRuns`, so a page is a binary search and a short walk rather than a sort of the task's every run.
 * Occurrences are decided in time order, so an insert nearly always appends.
 */
import type { RunId, TaskId } from "../../../domain/ids.js";
import type { Instant } from "../../../domain/time.js";
import { compareKeys } from "../shared/page-cursor.js";
import type { CursorKey } from "../shared/page-cursor.js";

type HistoryKey = readonly [Instant, RunId];

/** The first index whose key is not below `key` (`keys.length` when every key is). */
function lowerBound(keys: readonly HistoryKey[], key: CursorKey): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const at = keys[mid];
    if (at !== undefined && compareKeys(at, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

export class MemoryRunHistory {
  readonly #byTask = new Map<TaskId, HistoryKey[]>();

  add(taskId: TaskId, scheduledFor: Instant, id: RunId): void {
    const key: HistoryKey = [scheduledFor, id];
    let keys = this.#byTask.get(taskId);
    if (keys === undefined) {
      keys = [];
      this.#byTask.set(taskId, keys);
    }
    const last = keys.at(-1);
    if (last === undefined || compareKeys(last, key) < 0) keys.push(key);
    else keys.splice(lowerBound(keys, key), 0, key);
  }

  remove(taskId: TaskId, scheduledFor: Instant, id: RunId): void {
    const keys = this.#byTask.get(taskId);
    if (keys === undefined) return;
    const at = lowerBound(keys, [scheduledFor, id]);
    if (keys[at]?.[1] !== id) return;
    if (at === keys.length - 1) keys.pop();
    else keys.splice(at, 1);
    if (keys.length === 0) this.#byTask.delete(taskId);
  }

  /** The task's run ids, newest first, starting below `before` (exclusive) when given. */
  *newestFirst(taskId: TaskId, before: CursorKey | null): Generator<RunId, void, undefined> {
    const keys = this.#byTask.get(taskId);
    if (keys === undefined) return;
    const start = before === null ? keys.length : lowerBound(keys, before);
    for (let i = start - 1; i >= 0; i--) {
      const key = keys[i];
      if (key !== undefined) yield key[1];
    }
  }

  /** The task's run ids, oldest first. */
  idsOf(taskId: TaskId): RunId[] {
    return (this.#byTask.get(taskId) ?? []).map((key) => key[1]);
  }
}
