/**
 * The claim fused into admission raced by separate processes on one SQLite file
 * (docs/storage.md#fused-admit-and-claim-on-sqlite): each admission counts the budget's room under the
 * write lock it holds, so processes fusing at once never hold more runs active than the budget, and
 * never two active runs of one thread; what is not fused is queued.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { TaskId } from "../../src/domain/ids.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { agentTarget, minute, onceAt, reuseThread } from "../contract/fixtures.js";
import { insertTask, ledger } from "../contract/store-steps.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-fused-claim-race");
const PROCESSES = 4;

afterAll(() => {
  files.remove();
});

describe("sqlite: processes fusing the claim into admission at once", () => {
  it("keep the global budget exact and one active run per thread", async () => {
    const path = files.path();
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const ids: TaskId[] = [];
      for (let i = 0; i < 40; i++) {
        ids.push((await insertTask(store, { schedule: onceAt(minute(1)) })).id);
      }
      // Eight tasks on one shared thread: at most one of them may be active.
      const threaded: TaskId[] = [];
      for (let i = 0; i < 8; i++) {
        const task = await insertTask(store, {
          schedule: onceAt(minute(1)),
          target: agentTarget("main"),
          context: reuseThread("one"),
        });
        threaded.push(task.id);
      }
      const outcomes = await runWorkers(
        Array.from({ length: PROCESSES }, () => ({
          op: "admit" as const,
          path,
          rounds: [minute(1, 10), minute(1, 20), minute(1, 30)],
          limit: 5,
          launch: false,
          fused: { maxConcurrentRuns: 7, limit: 7 },
        })),
        { barrier: true },
      );
      const fused = outcomes.flatMap((o) => (o.op === "admit" ? o.launched : []));
      const all = [...ids, ...threaded];
      const runs = [];
      for (const id of all) runs.push(...(await ledger(store, id)));
      expect(runs).toHaveLength(all.length);
      const active = runs.filter((run) => run.status === "launching");
      expect(active).toHaveLength(7);
      expect(new Set(fused)).toEqual(new Set(active.map((run) => run.id)));
      expect(runs.filter((run) => run.status === "queued")).toHaveLength(all.length - 7);
      const threadActive = active.filter((run) => threaded.includes(run.taskId));
      expect(threadActive.length).toBeLessThanOrEqual(1);
    } finally {
      await store.close();
    }
  });
});
