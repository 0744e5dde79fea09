/**
 * An idle replica reads the tasks due at the next instant ahead of it
 * (docs/decisions.md#an-idle-replica-reads-the-next-instants-definitions-ahead-of-it): once per instant,
 * between `READ_AHEAD_MIN_LEAD_MS` and two ticks before it, never after a pass that admitted, and
 * nothing is admitted before the instant.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { TaskId } from "../../src/domain/ids.js";
import type { Store } from "../../src/domain/ports/store.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { READ_AHEAD_BATCHES, READ_AHEAD_MIN_LEAD_MS } from "../../src/runtime/read-ahead.js";
import { SECOND, createHarness } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

interface ReadCall {
  readonly at: Instant;
  readonly limit: number;
  /** The virtual instant the read was asked at. */
  readonly askedAt: Instant;
}

/** A memory store that can read ahead: each read is recorded and answers the tasks of `due`. */
function readingStore(clock: VirtualClock): { store: Store; reads: ReadCall[]; due: TaskId[] } {
  const store = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  const reads: ReadCall[] = [];
  const due: TaskId[] = [];
  Object.assign(store.tasks, {
    readDueAhead: async (at: Instant, limit: number): Promise<readonly Task[]> => {
      reads.push({ at, limit, askedAt: clock.now() });
      const tasks = await Promise.all(due.map((id) => store.tasks.findTask({ kind: "all" }, id)));
      return tasks.filter((task): task is Task => task !== null);
    },
  });
  return { store, reads, due };
}

/** Moves the clock in small steps so the loop runs every wake-up on the way. */
async function walk(clock: VirtualClock, ms: number, stepMs = 50): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += stepMs) await clock.advance(stepMs);
}

describe("Coordinator read-ahead", () => {
  it("reads the tasks due at the next instant once, within two ticks of it, and admits them only at it", async () => {
    const clock = new VirtualClock(t0);
    const { store, reads, due } = readingStore(clock);
    const h = createHarness({ clock, store });
    const dueAt = t0 + 10 * SECOND;
    for (let i = 0; i < 3; i++) {
      const task = await h.create({
        schedule: { type: "cron", cron: "10 * * * * *", timezone: "UTC" },
      });
      due.push(task.id as TaskId);
    }
    h.coordinator.start();
    await flushPromises();
    await walk(clock, dueAt - t0 - 50);
    // Idle passes every second: the first one within two ticks of the instant read ahead, once.
    expect(reads).toHaveLength(1);
    const read = reads[0]!;
    expect(read.at).toBe(dueAt);
    expect(read.limit).toBe(500 * READ_AHEAD_BATCHES);
    expect(dueAt - read.askedAt).toBeGreaterThanOrEqual(READ_AHEAD_MIN_LEAD_MS);
    expect(dueAt - read.askedAt).toBeLessThanOrEqual(2 * SECOND);
    // Nothing decided ahead of the instant.
    for (const id of due) expect(await h.runs(id)).toEqual([]);
    await walk(clock, 100);
    expect(h.launcher.calls.map((c) => c.at)).toEqual([dueAt, dueAt, dueAt]);
    await h.coordinator.stop();
  });

  it("does not read ahead after a pass that admitted: a busy replica holds its tasks already", async () => {
    const clock = new VirtualClock(t0);
    const { store, reads, due } = readingStore(clock);
    const h = createHarness({ clock, store });
    const task = await h.create({ schedule: { type: "interval", every: "PT1S" } });
    due.push(task.id as TaskId);
    h.coordinator.start();
    await flushPromises();
    await walk(clock, 5 * SECOND);
    // An occurrence decided every second (launched, or skipped while the first still runs).
    expect((await h.runs(task.id)).length).toBeGreaterThanOrEqual(4);
    // The first pass, before the first fire, was idle: that instant alone was read ahead for.
    expect(reads.map((r) => r.at)).toEqual([t0 + SECOND]);
    await h.coordinator.stop();
  });

  it("does not read ahead for an instant nearer than the least lead", async () => {
    const clock = new VirtualClock(t0);
    const { store, reads, due } = readingStore(clock);
    // Passes only when woken or due: the task's creation wakes the loop close to its instant.
    const h = createHarness({ clock, store, coordinator: { tickMs: 3_600_000 } });
    h.coordinator.start();
    await flushPromises();
    const dueAt = t0 + 10 * SECOND;
    await clock.set((dueAt - READ_AHEAD_MIN_LEAD_MS + 50) as Instant);
    const task = await h.create({
      schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
    });
    due.push(task.id as TaskId);
    await flushPromises();
    await walk(clock, 1 * SECOND);
    expect(reads).toEqual([]);
    expect(h.launcher.callsFor(task.id).map((c) => c.at)).toEqual([dueAt]);
    await h.coordinator.stop();
  });
});
