/** The memory store's per-task history index: kept in `scheduled_for, id` order whatever the insert order. */
import { describe, expect, it } from "vitest";
import { MemoryRunHistory } from "../../../../src/adapters/storage/memory/memory-run-history.js";
import { runId, taskId } from "../../../../src/domain/ids.js";
import type { Instant } from "../../../../src/domain/time.js";

const TASK = taskId("task-1");
const at = (n: number): Instant => (1_000_000 + n * 1000) as Instant;

function history(entries: readonly (readonly [number, string])[]): MemoryRunHistory {
  const index = new MemoryRunHistory();
  for (const [n, id] of entries) index.add(TASK, at(n), runId(id));
  return index;
}

describe("MemoryRunHistory", () => {
  it("walks newest first whatever order the runs arrived in", () => {
    const index = history([
      [2, "b"],
      [3, "c"],
      [1, "z"],
      [2, "a"],
      [5, "e"],
    ]);
    expect([...index.newestFirst(TASK, null)]).toEqual(["e", "c", "b", "a", "z"]);
    expect(index.idsOf(TASK)).toEqual(["z", "a", "b", "c", "e"]);
  });

  it("starts strictly below a cursor, even one naming a run that is gone", () => {
    const index = history([
      [1, "a"],
      [2, "b"],
      [2, "d"],
      [3, "c"],
    ]);
    expect([...index.newestFirst(TASK, [at(2), "d"])]).toEqual(["b", "a"]);
    expect([...index.newestFirst(TASK, [at(2), "c"])]).toEqual(["b", "a"]);
    expect([...index.newestFirst(TASK, [at(0), "a"])]).toEqual([]);
  });

  it("forgets removed runs, the newest and the oldest alike, and ignores one it never held", () => {
    const index = history([
      [1, "a"],
      [2, "b"],
      [3, "c"],
    ]);
    index.remove(TASK, at(3), runId("c"));
    index.remove(TASK, at(1), runId("a"));
    index.remove(TASK, at(2), runId("x"));
    expect(index.idsOf(TASK)).toEqual(["b"]);
    index.remove(TASK, at(2), runId("b"));
    expect(index.idsOf(TASK)).toEqual([]);
    expect([...index.newestFirst(TASK, null)]).toEqual([]);
  });
});
