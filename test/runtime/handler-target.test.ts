/**
 * The `handler` target through the library's composition on the virtual clock (docs/semantics.md#completion, docs/semantics.md#cancellation, docs/library.md):
 * what a handler receives, results, failures and retries, cancellation through its AbortSignal,
 * heartbeats, handler names per replica, and what a graceful stop does to handler runs.
 */
import { describe, expect, it } from "vitest";
import type {
  Handler,
  HandlerContext,
} from "../../src/adapters/launchers/handler/handler-definition.js";
import type { StoreFactory } from "../../src/domain/ports/store.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { flushPromises } from "../../src/runtime/clock.js";
import { createTestScheduler } from "../../src/testing.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const SECOND = 1000;
const MINUTE = 60_000;

/** A handler that records its context and waits until the test (or its signal) ends it. */
function controlledHandler() {
  const contexts: HandlerContext[] = [];
  const finishers: ((result: unknown) => void)[] = [];
  const handler: Handler = (context) => {
    contexts.push(context);
    return new Promise((resolve, reject) => {
      finishers.push(resolve);
      context.signal.addEventListener("abort", () => {
        reject(new Error(`aborted: ${String(context.signal.reason)}`));
      });
    });
  };
  return { handler, contexts, finishers };
}

const inOneMinute = { type: "once", run_at: new Date(t0 + MINUTE).toISOString() };

describe("handler target", () => {
  it("gives the handler its run, task, input, signal and heartbeat, and records its result", async () => {
    const seen: HandlerContext[] = [];
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        greet: (context) => {
          seen.push(context);
          return { greeted: (context.input as { name: string }).name };
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "greet",
      schedule: inOneMinute,
      target: { kind: "handler", name: "greet", input: { name: "Ada" } },
    });
    await scheduler.advanceBy(2 * MINUTE);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      input: { name: "Ada" },
      task: { id: task.id, title: "greet" },
      run: { scheduled_for: "2026-01-05T00:01:00Z", fire_at: "2026-01-05T00:01:00Z", late: false },
    });
    expect(seen[0]!.signal.aborted).toBe(false);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "succeeded", result: { greeted: "Ada" } });
    expect(await scheduler.tasks.get(task.id)).toMatchObject({ status: "completed" });
    await scheduler.stop();
  });

  it("fails a run whose handler throws, and retries it under retry.max_attempts with the same key", async () => {
    let calls = 0;
    const keys: string[] = [];
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        flaky: ({ run }) => {
          calls++;
          keys.push(run.idempotency_key);
          if (calls < 3) throw new Error(`attempt ${run.attempt} broke`);
          return "ok";
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "flaky",
      schedule: inOneMinute,
      target: { kind: "handler", name: "flaky" },
      options: { retry: { max_attempts: 3, initial: "PT10S" } },
    });
    await scheduler.advanceBy(5 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "succeeded", attempt: 3, failures: 2, result: "ok" });
    expect(new Set(keys).size).toBe(1);
    await scheduler.stop();
  });

  it("ends a run failed (target_failed) when its handler throws and no attempt is left", async () => {
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        broken: () => {
          throw new Error("no such customer");
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "broken",
      schedule: inOneMinute,
      target: { kind: "handler", name: "broken" },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({
      status: "failed",
      reason: "target_failed",
      error: "no such customer",
    });
    expect(await scheduler.tasks.get(task.id)).toMatchObject({
      status: "failed",
      last_error: "no such customer",
    });
    await scheduler.stop();
  });

  it("fails a run whose handler returns a result over 64 KiB, and stores no result", async () => {
    const scheduler = createTestScheduler({
      start: T0,
      handlers: { chatty: () => ({ text: "x".repeat(65 * 1024) }) },
    });
    const { task } = await scheduler.tasks.create({
      title: "chatty",
      schedule: inOneMinute,
      target: { kind: "handler", name: "chatty" },
    });
    await scheduler.advanceBy(2 * MINUTE);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "failed", reason: "target_failed", result: null });
    expect(run!.error).toContain("64 KiB");
    await scheduler.stop();
  });

  it("aborts the handler's signal when its running run is cancelled; the run ends cancelled", async () => {
    const { handler, contexts } = controlledHandler();
    const scheduler = createTestScheduler({ start: T0, handlers: { slow: handler } });
    const { task } = await scheduler.tasks.create({
      title: "slow",
      schedule: inOneMinute,
      target: { kind: "handler", name: "slow" },
    });
    await scheduler.advanceBy(MINUTE);
    const [running] = await scheduler.ledger(task.id);
    expect(running).toMatchObject({ status: "running" });
    await scheduler.runs.cancel(running!.id);
    await flushPromises();
    expect(contexts[0]!.signal.aborted).toBe(true);
    await scheduler.advanceBy(SECOND);
    const [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "cancelled", reason: "cancel_requested" });
    expect(run!.launched_at).toBe("2026-01-05T00:01:00Z");
    await scheduler.stop();
  });

  it("cancels a queued handler run before it starts: the handler is never called", async () => {
    let calls = 0;
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        job: () => {
          calls++;
        },
      },
    });
    const { task } = await scheduler.tasks.create({
      title: "daily",
      schedule: { type: "interval", every: "P1D" },
      target: { kind: "handler", name: "job" },
    });
    const run = await scheduler.tasks.trigger(task.id);
    await scheduler.runs.cancel(run.id);
    await scheduler.advanceBy(MINUTE);
    expect(calls).toBe(0);
    expect(await scheduler.runs.get(run.id)).toMatchObject({ status: "cancelled" });
    await scheduler.stop();
  });

  it("moves the deadline with each heartbeat; a silent handler times out and its signal aborts", async () => {
    const { handler, contexts } = controlledHandler();
    const scheduler = createTestScheduler({ start: T0, handlers: { slow: handler } });
    const { task } = await scheduler.tasks.create({
      title: "slow",
      schedule: inOneMinute,
      target: { kind: "handler", name: "slow" },
      options: { run_timeout: "PT1M" },
    });
    await scheduler.advanceBy(MINUTE);
    await scheduler.advanceBy(50 * SECOND);
    await contexts[0]!.heartbeat();
    await scheduler.advanceBy(50 * SECOND);
    let [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "running", deadline_at: "2026-01-05T00:02:50Z" });
    await scheduler.advanceBy(70 * SECOND);
    [run] = await scheduler.ledger(task.id);
    expect(run).toMatchObject({ status: "timed_out", reason: "run_timeout" });
    expect(contexts[0]!.signal.aborted).toBe(true);
    await scheduler.stop();
  });

  it("refuses a task naming a handler that is not registered", async () => {
    const scheduler = createTestScheduler({ start: T0 });
    await expect(
      scheduler.tasks.create({
        title: "unknown",
        schedule: inOneMinute,
        target: { kind: "handler", name: "nope" },
      }),
    ).rejects.toMatchObject({ code: "validation_failed" });
    await scheduler.stop();
  });

  it("lets a replica claim only handler runs it has a handler for", async () => {
    const shared = createMemoryStore({ newId: createIdGenerator() });
    const factory: StoreFactory = { open: () => Promise.resolve(shared) };
    const ran: string[] = [];
    const alpha = createTestScheduler({
      start: T0,
      store: factory,
      replicaId: "alpha",
      handlers: { a: () => void ran.push("alpha") },
    });
    const beta = createTestScheduler({
      start: T0,
      store: factory,
      replicaId: "beta",
      handlers: { b: () => void ran.push("beta") },
    });
    const { task } = await beta.tasks.create({
      title: "b only",
      schedule: inOneMinute,
      target: { kind: "handler", name: "b" },
    });
    // Due at +1 min: alpha passes over it for 5 s, less than the liveness timeout (10 s) after which a
    // run no live replica serves would end no_handler (beta, on a clock of its own here, never beats
    // while alpha runs; coordinator-no-handler.test.ts covers that rule).
    await alpha.advanceBy(MINUTE + 5 * SECOND);
    expect(ran).toEqual([]);
    expect((await alpha.ledger(task.id))[0]).toMatchObject({ status: "queued" });
    await beta.advanceBy(2 * MINUTE);
    expect(ran).toEqual(["beta"]);
    expect((await beta.ledger(task.id))[0]).toMatchObject({ status: "succeeded" });
  });

  it("lets running handlers finish within the shutdown timeout when the scheduler stops", async () => {
    const { handler, finishers } = controlledHandler();
    const scheduler = createTestScheduler({ start: T0, handlers: { slow: handler } });
    const { task } = await scheduler.tasks.create({
      title: "slow",
      schedule: inOneMinute,
      target: { kind: "handler", name: "slow" },
    });
    await scheduler.advanceBy(MINUTE);
    const rt = await scheduler.runtime();
    const stopped = rt.coordinator.stop();
    await scheduler.clock.advance(2 * SECOND);
    finishers[0]!("done");
    await stopped;
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({ status: "succeeded" });
    await scheduler.stop();
  });

  it("hands back a handler still running at the shutdown timeout: its signal aborts, no retry is used", async () => {
    const { handler, contexts } = controlledHandler();
    const scheduler = createTestScheduler({ start: T0, handlers: { slow: handler } });
    const { task } = await scheduler.tasks.create({
      title: "slow",
      schedule: inOneMinute,
      target: { kind: "handler", name: "slow" },
    });
    await scheduler.advanceBy(MINUTE);
    const rt = await scheduler.runtime();
    const stopped = rt.coordinator.stop();
    await flushPromises();
    await scheduler.clock.advance(10 * SECOND);
    await stopped;
    expect(contexts[0]!.signal.aborted).toBe(true);
    // Handed back: queued again for another replica; a shutdown is not a failure (docs/semantics.md#launch).
    expect((await scheduler.ledger(task.id))[0]).toMatchObject({
      status: "queued",
      failures: 0,
      error: expect.stringContaining("replica shut down") as unknown,
    });
    await scheduler.stop();
  });
});
