import { afterAll, describe, expect, it } from "vitest";
import {
  openPostgresStore,
  WAKE_CHANNEL,
} from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { selectClaimable } from "../../../../src/domain/claim.js";
import { claimRun } from "../../../../src/domain/run-transitions.js";
import { instant } from "../../../../src/domain/time.js";
import type { Instant } from "../../../../src/domain/time.js";
import { ALL, T0, buildTask, minute, reuseThread } from "../../../contract/fixtures.js";
import {
  POLICY,
  REPLICA,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  recordLaunch,
  triggerRun,
} from "../../../contract/store-steps.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const onServer = database.kind === "server";

/** Polls `check` until it holds, failing after `timeoutMs`. */
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("postgres store", () => {
  it("states its kind and the optional ports it offers", async () => {
    const store = await database.openStore();
    expect(store.kind).toBe("postgres");
    // The optional ports it offers (docs/architecture.md#stores).
    expect({
      wakes: "wakes" in store,
      referenceClock: "referenceClock" in store,
    }).toEqual({
      wakes: true,
      referenceClock: true,
    });
    await store.close();
    await store.close();
  });

  it("round-trips instants exactly, to the millisecond, across the timestamptz range", async () => {
    const store = await database.openStore();
    const edges: Instant[] = [
      instant(0),
      instant(1),
      instant(-1),
      instant(T0 + 999),
      instant(253_402_300_799_999),
      instant(-62_135_596_800_001),
      instant(8_640_000_000_000_000),
    ];
    for (const [i, edge] of edges.entries()) {
      const task = {
        ...buildTask({ title: `edge ${i}` }),
        createdAt: edge,
        updatedAt: edge,
        nextRunAt: edge,
        decidedThrough: edge,
        lastRunAt: edge,
        deletedAt: null,
      };
      await store.tasks.insertTask(task);
      expect(await store.tasks.findTask(ALL, task.id)).toEqual(task);
    }
    await store.close();
  });

  it("reads the database clock in epoch milliseconds", async () => {
    const store = await database.openStore();
    const before = Date.now();
    const now = await store.dbNow();
    expect(Number.isSafeInteger(now)).toBe(true);
    // Same machine: the database clock and ours agree within a generous margin.
    expect(Math.abs(now - before)).toBeLessThan(60_000);
    await store.close();
  });

  it("skips a run whose thread slot is taken instead of failing the whole claim", async () => {
    const store = await database.openStore();
    const options = { overlap: "allow_all" as const };
    const first = await insertTask(store, { context: reuseThread("shared"), options });
    const second = await insertTask(store, { context: reuseThread("shared"), options });
    const third = await insertTask(store, { options });
    await triggerRun(store, ALL, first.id, "k", minute(0, 1));
    const [launching] = await claimDue(store, minute(0, 2));
    expect(launching?.run.taskId).toBe(first.id);
    await triggerRun(store, ALL, second.id, "k", minute(0, 3));
    await triggerRun(store, ALL, third.id, "k", minute(0, 4));
    const now = minute(0, 5);
    // A `select` that ignores the busy threads: the thread slot index is the last line of defence.
    const claimed = await store.runs.claimRuns(
      {
        now,
        replicaId: REPLICA,
        leaseMs: POLICY.leaseMs,
        maxConcurrentRuns: 10,
        limit: 10,
        handlerNames: new Set(),
      },
      (input) =>
        selectClaimable({ ...input, busyThreads: new Set(), now, handlerNames: new Set() }),
      (run, task, token) =>
        claimRun(run, { now, token, leaseMs: POLICY.leaseMs, replicaId: REPLICA }, task.options),
    );
    expect(claimed.map((c) => c.task.id)).toEqual([third.id]);
    expect((await ledger(store, second.id)).map((r) => r.status)).toEqual(["queued"]);
    await store.close();
  });

  it.skipIf(!onServer)("opens from a url, owns that pool, and ends it on close", async () => {
    const store = await openPostgresStore({
      url: database.url!,
      newId: createIdGenerator(),
      schema: database.freshSchema(),
      poolSize: 2,
    });
    await expect(store.ping()).resolves.toBeUndefined();
    await Promise.all([store.close(), store.close()]);
    await expect(store.ping()).rejects.toThrow();
  });

  it.skipIf(!onServer)(
    "notifies the wake channel on create, trigger and a freed launch slot",
    async () => {
      const store = await database.openStore({ ownPool: true });
      const heard: string[] = [];
      const listener = await store.listen(WAKE_CHANNEL, (payload) => heard.push(payload));
      const task = await insertTask(store);
      await eventually(() => heard.includes(`task:${task.id}`));
      const run = await triggerRun(store, ALL, task.id, "k", minute(0, 1));
      const [claimed] = await claimDue(store, minute(0, 2));
      await recordLaunch(store, claimed!, minute(0, 3));
      await recordCompletion(store, run!.id, { status: "succeeded" }, minute(0, 4));
      await eventually(() => heard.includes(`run:${run!.id}`));
      await store.notify(WAKE_CHANNEL, "hello");
      await eventually(() => heard.includes("hello"));
      await listener.close();
      await store.close();
    },
  );
});
