/**
 * Admission against a manual trigger of the same task, forced on the real PostgreSQL server (issue 36;
 * SPEC 1: one decision per occurrence, per-thread FIFO, one active run per thread).
 *
 * Admission locks its due tasks with `SKIP LOCKED`, so a trigger that holds the task first is simply
 * left to the next tick (postgres-dispatch-race.test.ts). The interleaving that can go wrong is the other
 * one: admission holds the task's row and is between its steps when the trigger arrives. It is forced
 * isolation-tester style: a coordinating connection holds the row lock of an active run of the task;
 * admission takes the task's row and is seen waiting on that run (its `lockActive` step); the trigger
 * starts and is seen waiting on the task's row, held by admission; only then does the coordinator let
 * go. Both transactions are inside their contended steps at once, every round, by construction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { Run } from "../../src/domain/run.js";
import { ALL, minute, reuseThread } from "../contract/fixtures.js";
import {
  admitDue,
  claimAndLaunch,
  insertTask,
  ledger,
  recordCompletion,
  triggerRun,
} from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { holdLock } from "../helpers/postgres-barrier.js";

const runnable = await raceTestsRunnable("test/race/postgres-admission-trigger-race.test.ts");

const ACTIVE = ["queued", "launching", "running"];
const IN_SLOT = ["launching", "running"];

/** FIFO order of a thread: by queue time, then id (docs/semantics.md#threads). */
const fifo = (runs: readonly Run[]): Run[] =>
  [...runs].sort((a, b) => a.queuedAt - b.queuedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

describe.skipIf(!runnable)("postgres: admission against a manual trigger, forced", () => {
  let database: PostgresTestDatabase;
  let schema = "";
  let replicas: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    schema = database.freshSchema();
    replicas = await openReplicaStores(database, 2, schema);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((store) => store.close()));
    await database.drop();
  });

  it("a trigger arriving while admission holds the task: one decision for the occurrence, then one run at a time on the thread, in FIFO order", async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = replicas;
      const thread = `thread-${round}`;
      const task = await insertTask(a!, {
        context: reuseThread(thread),
        options: { overlap: "allow_all" },
      });
      // An earlier manual run, still queued: the active run admission locks after the task.
      const earlier = await triggerRun(a!, ALL, task.id, `earlier-${round}`, minute(0, 30_000));
      expect(earlier?.status).toBe("queued");
      const barrier = await holdLock(
        database.url!,
        `SELECT 1 FROM "${schema}".runs WHERE id = $1::text FOR UPDATE`,
        [earlier!.id],
      );
      const now = minute(1, 5);
      let racing: Promise<[PromiseSettledResult<unknown>, PromiseSettledResult<Run | null>]>;
      try {
        const admitted = admitDue(a!, now);
        // Admission holds the task's row and waits on the held run...
        await barrier.waitForWaiters(1, "row");
        const triggered = triggerRun(b!, ALL, task.id, `manual-${round}`, now);
        // ...and the trigger waits on the task's row, behind admission.
        await barrier.waitForWaiters(2, "row");
        racing = Promise.allSettled([admitted, triggered]);
        await barrier.release();
      } finally {
        await barrier.close();
      }
      const [admission, trigger] = await racing;
      expect(admission.status).toBe("fulfilled");
      expect(trigger.status).toBe("fulfilled");
      const manual = (trigger as PromiseFulfilledResult<Run | null>).value;
      expect(manual?.status).toBe("queued");

      const runs = await ledger(a!, task.id);
      // One decision for the one occurrence due (09:01), queued beside the manual runs.
      const scheduled = runs.filter((r) => r.trigger === "scheduled");
      expect(scheduled.map((r) => [r.scheduledFor, r.status])).toEqual([[minute(1), "queued"]]);
      expect(
        runs
          .filter((r) => r.trigger === "manual")
          .map((r) => r.id)
          .sort(),
      ).toEqual([earlier!.id, manual!.id].sort());
      expect(new Set(runs.map((r) => String(r.threadId)))).toEqual(new Set([thread]));

      // Drain with both replicas claiming at once: never two runs in the slot of the thread, and
      // they launch in the thread's FIFO order.
      const expected = fifo(runs).map((r) => r.id);
      expect(expected[0]).toBe(earlier!.id);
      const launchedOrder: string[] = [];
      for (let step = 0; step < 6 && launchedOrder.length < 3; step++) {
        const t = minute(2, step * 1000);
        const launched = (
          await Promise.all([
            claimAndLaunch(a!, t, { replicaId: "a" }),
            claimAndLaunch(b!, t, { replicaId: "b" }),
          ])
        ).flat();
        const mine = launched.filter((r) => r.taskId === task.id);
        expect(mine.length).toBeLessThanOrEqual(1);
        const inSlot = (await ledger(a!, task.id)).filter((r) => IN_SLOT.includes(r.status));
        expect(inSlot.length).toBeLessThanOrEqual(1);
        for (const run of mine) {
          launchedOrder.push(run.id);
          await recordCompletion(a!, run.id, { status: "succeeded" }, minute(2, step * 1000 + 500));
        }
      }
      expect(launchedOrder).toEqual(expected);
      const settled = await ledger(a!, task.id);
      expect(settled.filter((r) => ACTIVE.includes(r.status))).toEqual([]);
    }
  });
});
