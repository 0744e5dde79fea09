/**
 * Eight replicas (eight processes, eight connections to one SQLite file) admit the same due tasks at the
 * same time, each at its own cadence: every nominal time still gets exactly one decision, and every
 * decision a replica reports is one row of the ledger.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { Run } from "../../src/domain/run.js";
import type { Instant } from "../../src/domain/time.js";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { MINUTE, minute, onceAt } from "../contract/fixtures.js";
import { insertTask, reload, scheduledDecisions } from "../contract/store-steps.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-admission-race");
const ADMITTERS = 8;
const LAST = 30;

afterAll(() => {
  files.remove();
});

/** The nominal times a decision covers: one, or a whole `missed` range. */
function covered(run: Run): Instant[] {
  if (run.status !== "missed") return [run.scheduledFor];
  const times: Instant[] = [];
  for (let at = run.scheduledFor; at <= run.missedUntil!; at = (at + MINUTE) as Instant) {
    times.push(at);
  }
  expect(times).toHaveLength(run.missedCount!);
  return times;
}

/** Replica `i` ticks every `i + 1` minutes (and at the last minute), so they overlap and fall behind. */
function rounds(replica: number): number[] {
  const ticks: number[] = [];
  for (let m = replica + 1; m < LAST; m += replica + 1) ticks.push(minute(m));
  ticks.push(minute(LAST));
  return ticks;
}

describe("SQLite admission under 8 concurrent admitters", () => {
  it("decides every nominal time of every task exactly once", async () => {
    const path = files.path("admission");
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const queueing = await insertTask(store, { options: { overlap: "allow_all" } });
      const skipping = await insertTask(store, {});
      const once = await insertTask(store, { schedule: onceAt(minute(10)) });

      const outcomes = await runWorkers(
        Array.from({ length: ADMITTERS }, (_, replica) => ({
          op: "admit" as const,
          path,
          rounds: rounds(replica),
          limit: 10,
          launch: false,
        })),
        { barrier: true },
      );

      const expected = Array.from({ length: LAST }, (_, i) => minute(i + 1));
      for (const task of [queueing, skipping]) {
        const ledger = await scheduledDecisions(store, task.id);
        expect(ledger.flatMap(covered).sort((a, b) => a - b)).toEqual(expected);
        await expect(reload(store, task.id)).resolves.toMatchObject({
          decidedThrough: minute(LAST),
          nextRunAt: minute(LAST + 1),
        });
      }
      const onceLedger = await scheduledDecisions(store, once.id);
      expect(onceLedger.map((run) => [run.scheduledFor, run.status])).toEqual([
        [minute(10), "queued"],
      ]);
      const skippingLedger = await scheduledDecisions(store, skipping.id);
      expect(skippingLedger.filter((run) => run.status === "queued")).toHaveLength(1);

      const reported = outcomes.reduce(
        (sum, outcome) => sum + (outcome.op === "admit" ? outcome.decisions : 0),
        0,
      );
      const written = [queueing, skipping, once].map(
        async (task) => (await scheduledDecisions(store, task.id)).length,
      );
      const total = (await Promise.all(written)).reduce((a, b) => a + b, 0);
      expect(reported).toBe(total);
    } finally {
      await store.close();
    }
  }, 60_000);
});
