/**
 * A write the store refuses for a reason that will not go away (a constraint, a value it does not take)
 * fails that one run with a recorded error, at once; the rest of its batch and of the queue is written
 * without waiting. Only outages are retried (docs/storage.md#writes-the-store-refuses).
 */
import { afterEach, describe, expect, it } from "vitest";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import type { RunWrite } from "../../src/application/dispatch/run-writes.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import type { SqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { RunId } from "../../src/domain/ids.js";
import type { RunChangeResult } from "../../src/domain/ports/run-repository.js";
import type { JsonValue } from "../../src/domain/target.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { RunWriteQueue } from "../../src/runtime/run-write-queue.js";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite.js";
import { createTestScheduler } from "../../src/testing.js";
import { json, startReceiver } from "../helpers/webhook-receiver.js";
import { createHarness } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

class Refusal extends Error {}
class Outage extends Error {}

const completion = (id: string, result: JsonValue = "ok"): RunWrite => ({
  kind: "completion",
  runId: id as RunId,
  verdict: { status: "succeeded", result },
});

/** A queue over a fake store that refuses any batch holding a write of `refused`, and logs batches. */
function queueOver(refused: ReadonlySet<string>, outages = 0) {
  const clock = new VirtualClock(t0);
  const batches: RunWrite[][] = [];
  let failuresLeft = outages;
  const refusals: string[] = [];
  const queue = new RunWriteQueue({
    clock,
    maxBatch: 50,
    giveUp: new AbortController().signal,
    write: (writes) => {
      batches.push([...writes]);
      if (failuresLeft > 0) {
        failuresLeft--;
        return Promise.reject(new Outage("connection refused"));
      }
      const bad = writes.find(
        (w) =>
          refused.has(w.runId) && (w.kind !== "completion" || w.verdict.status === "succeeded"),
      );
      if (bad !== undefined)
        return Promise.reject(new Refusal(`CHECK constraint failed: ${bad.runId}`));
      return Promise.resolve(
        writes.map((): RunChangeResult => ({ kind: "changed", change: {} as never })),
      );
    },
    isRefusal: (error) => error instanceof Refusal,
    onRefusal: (write) => refusals.push(write.runId),
    onFailure: () => undefined,
    onSuccess: () => undefined,
  });
  return { clock, queue, batches, refusals };
}

describe("RunWriteQueue refusals", () => {
  it("writes the rest of a refused batch at once, and the refused write as a failure without its result", async () => {
    const { queue, batches, refusals, clock } = queueOver(new Set(["run-b"]));
    const results = Promise.all(
      ["run-a", "run-b", "run-c"].map((id) => queue.enqueue(completion(id), null)),
    );
    await flushPromises();
    // Written without the clock moving: no back-off.
    expect(clock.nextWakeAt()).toBeNull();
    expect((await results).map((r) => r.kind)).toEqual(["changed", "changed", "changed"]);
    expect(refusals).toEqual(["run-b"]);
    const failure = batches[3]?.[0];
    expect(failure).toMatchObject({
      runId: "run-b",
      verdict: {
        status: "failed",
        result: null,
        retry: { kind: "never", reason: "non_retryable" },
      },
    });
    const words = failure?.kind === "completion" ? failure.verdict.error : null;
    expect(words).toMatch(/^the store refused this run's verdict \(CHECK constraint failed/);
    // One batch of three, then each alone, the refused one followed by its failure.
    expect(batches.map((b) => b.map((w) => w.runId))).toEqual([
      ["run-a", "run-b", "run-c"],
      ["run-a"],
      ["run-b"],
      ["run-b"],
      ["run-c"],
    ]);
  });

  it("does not hold up writes queued behind a refused one", async () => {
    const { queue, clock } = queueOver(new Set(["run-bad"]));
    const bad = queue.enqueue(completion("run-bad"), null);
    await flushPromises();
    const next = queue.enqueue(completion("run-next"), null);
    await flushPromises();
    expect(clock.nextWakeAt()).toBeNull();
    await expect(bad).resolves.toMatchObject({ kind: "changed" });
    await expect(next).resolves.toMatchObject({ kind: "changed" });
  });

  it("rejects a bare launch answer the store refuses (nothing to drop: its claim is reconciled)", async () => {
    const { queue } = queueOver(new Set(["run-l"]));
    const launch: RunWrite = {
      kind: "launch",
      runId: "run-l" as RunId,
      token: "tok" as never,
      answer: { outcome: { kind: "launched" } as never },
    };
    await expect(queue.enqueue(launch, null)).rejects.toBeInstanceOf(Refusal);
  });

  it("still retries an outage with back-off", async () => {
    const { queue, clock, batches } = queueOver(new Set(), 1);
    const written = queue.enqueue(completion("run-a"), null);
    await flushPromises();
    expect(batches).toHaveLength(1);
    expect(clock.nextWakeAt()).not.toBeNull();
    await clock.advance(10_000);
    await expect(written).resolves.toMatchObject({ kind: "changed" });
    expect(batches).toHaveLength(2);
  });
});

describe("SQLite refusing a result (json_valid), through the coordinator", () => {
  let store: SqliteStore | null = null;
  afterEach(async () => {
    await store?.close();
    store = null;
  });

  it("fails the one run whose result SQLite refuses and records the others' verdicts at once", async () => {
    const clock = new VirtualClock(t0);
    store = await openSqliteStore({
      path: ":memory:",
      newId: createIdGenerator(() => clock.now()),
    });
    await store.migrate();
    const h = createHarness({ clock, store });
    // 1,001 nested arrays: SQLite's json_valid refuses them (the verdict reaches the store unchecked,
    // as one from a launcher that did not check it would).
    let deep: JsonValue = 1;
    for (let i = 0; i < 1_001; i++) deep = [deep];
    const tasks = [];
    for (let i = 0; i < 4; i++) {
      const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
      await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
      tasks.push(task);
    }
    const poisoned = tasks[1]!.id;
    h.launcher.behaviour = (call) => {
      call.resolve();
      const result = call.task.id === poisoned ? deep : "done";
      void h.coordinator.reportCompletion(call.run.id, { status: "succeeded", result });
    };
    await h.tick();
    await h.coordinator.settle();
    expect(clock.nextWakeAt() === null || clock.nextWakeAt()! > t0 + 60_000).toBe(true);
    for (const task of tasks) {
      const [run] = await h.runs(task.id);
      if (task.id === poisoned) {
        expect(run).toMatchObject({ status: "failed", result: null });
        expect(run!.error).toMatch(/the store refused this run's verdict/);
      } else {
        expect(run).toMatchObject({ status: "succeeded", result: "done" });
      }
    }
    expect(h.logger.lines.some((e) => /store refused/.test(e.msg))).toBe(true);
  });
});

describe("a webhook answering 200 with a result 1,001 deep, on SQLite (issue 21)", () => {
  it("fails that run at once, saying why, while another owner's webhook run succeeds", async () => {
    let deep = "1";
    for (let i = 0; i < 1_001; i++) deep = `[${deep}]`;
    const receiver = await startReceiver({
      "/deep": (_request, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"status":"succeeded","result":${deep}}`);
      },
      "/fine": json(200, { status: "succeeded", result: { ok: true } }),
    });
    const scheduler = createTestScheduler({
      start: t0,
      store: sqlite(":memory:"),
      webhookAllow: ["127.0.0.1"],
    });
    try {
      const runAt = { type: "once", run_at: new Date(t0 + 60_000).toISOString() };
      const deepTask = await scheduler.tasks.create({
        title: "deep",
        schedule: runAt,
        target: { kind: "webhook", url: receiver.url("/deep") },
      });
      const fineTask = await scheduler.tasks.create({
        title: "fine",
        schedule: runAt,
        target: { kind: "webhook", url: receiver.url("/fine") },
      });
      // One minute and one tick past the fire: no back-off window is stepped through.
      await scheduler.advanceBy(61_000);
      const [deepRun] = await scheduler.ledger(deepTask.task.id);
      const [fineRun] = await scheduler.ledger(fineTask.task.id);
      expect(deepRun).toMatchObject({ status: "failed", result: null });
      expect(deepRun!.error).toMatch(/nests deeper than 64 levels/);
      expect(fineRun).toMatchObject({ status: "succeeded", result: { ok: true } });
    } finally {
      await scheduler.stop();
      await receiver.close();
    }
  });

  it("tells every waiter of a batch even when one throws, and never writes the batch again for it", async () => {
    const clock = new VirtualClock(t0);
    const batches: number[] = [];
    const waiterErrors: unknown[] = [];
    const queue = new RunWriteQueue({
      clock,
      maxBatch: 50,
      giveUp: new AbortController().signal,
      write: (writes) => {
        batches.push(writes.length);
        return Promise.resolve(
          writes.map((): RunChangeResult => ({ kind: "changed", change: {} as never })),
        );
      },
      onFailure: () => undefined,
      onSuccess: () => undefined,
      onWaiterError: (error) => waiterErrors.push(error),
    });
    const heard: string[] = [];
    const bug = new Error("a waiter's bug");
    for (const id of ["run-a", "run-b", "run-c"]) {
      queue.push({
        write: completion(id),
        until: null,
        written: () => {
          heard.push(id);
          if (id === "run-a") throw bug;
        },
        notWritten: () => {
          heard.push(`${id} not written`);
        },
      });
    }
    await flushPromises();
    expect(batches).toEqual([3]);
    expect(heard).toEqual(["run-a", "run-b", "run-c"]);
    expect(waiterErrors).toEqual([bug]);
    expect(clock.nextWakeAt()).toBeNull();
  });
});
