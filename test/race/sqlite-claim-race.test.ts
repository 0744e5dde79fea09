/**
 * Eight replicas (eight processes, eight connections to one SQLite file) claim, launch and complete 60
 * queued runs under a global budget of 3. A trigger installed in the test database records the most
 * launching/running runs ever committed, so the budget is checked at every write, not only at the end.
 */
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { ALL, T0, HOUR, at, minute, reuseThread } from "../contract/fixtures.js";
import { backfillRuns, insertTask, ledger } from "../contract/store-steps.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-claim-race");
const CLAIMERS = 8;
const BUDGET = 3;

afterAll(() => {
  files.remove();
});

const WATCH = `
CREATE TABLE race_watch (max_slots INTEGER NOT NULL);
INSERT INTO race_watch VALUES (0);
CREATE TRIGGER race_watch_slots AFTER UPDATE OF status ON runs
WHEN NEW.status IN ('launching', 'running')
BEGIN
  UPDATE race_watch SET max_slots = max(max_slots,
    (SELECT count(*) FROM runs WHERE status IN ('launching', 'running')));
END;`;

describe("SQLite claims under 8 concurrent claimers", () => {
  it("never has more than 3 runs launching or running, and claims each run once", async () => {
    const path = files.path("claims");
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const wide = await insertTask(store, { options: { overlap: "allow_all" } });
      const exclusive = await insertTask(store, { options: { overlap: "buffer_all" } });
      const threaded = await insertTask(store, {
        context: reuseThread("one-thread"),
        options: { overlap: "allow_all" },
      });
      await backfillRuns(store, ALL, wide.id, { from: minute(-40), to: T0 }, at(0));
      await backfillRuns(store, ALL, exclusive.id, { from: minute(-10), to: T0 }, at(0));
      await backfillRuns(store, ALL, threaded.id, { from: minute(-10), to: T0 }, at(0));
      const watch = new Database(path);
      watch.exec(WATCH);

      const started = performance.now();
      const outcomes = await runWorkers(
        Array.from({ length: CLAIMERS }, () => ({
          op: "claim-loop" as const,
          path,
          now: at(HOUR),
          limit: 2,
          maxConcurrentRuns: BUDGET,
          holdMs: 3,
        })),
        { barrier: true },
      );
      const elapsed = performance.now() - started;

      const maxSlots = watch.prepare("SELECT max_slots AS n FROM race_watch").pluck().get();
      watch.close();
      expect(maxSlots).toBeLessThanOrEqual(BUDGET);
      expect(maxSlots).toBeGreaterThan(0);

      const runs = [
        ...(await ledger(store, wide.id)),
        ...(await ledger(store, exclusive.id)),
        ...(await ledger(store, threaded.id)),
      ];
      expect(runs).toHaveLength(60);
      for (const run of runs) expect(run).toMatchObject({ status: "succeeded", attempt: 1 });
      const claimed = outcomes.flatMap((outcome) =>
        outcome.op === "claim-loop" ? outcome.claimed : [],
      );
      expect(claimed).toHaveLength(60);
      expect(new Set(claimed)).toEqual(new Set(runs.map((run) => run.id)));
      const loops = outcomes.flatMap((o) => (o.op === "claim-loop" ? [o] : []));
      const slowest = Math.max(...loops.map((loop) => loop.elapsedMs));
      console.info(
        `sqlite claim race: ${CLAIMERS} claimers, claimed ${loops.map((l) => l.claimed.length).join("/")}` +
          ` runs, peak ${String(maxSlots)} launching/running (budget ${BUDGET}); claim loops ` +
          `${slowest.toFixed(0)} ms, ${elapsed.toFixed(0)} ms with process start-up`,
      );
    } finally {
      await store.close();
    }
  }, 120_000);
});
