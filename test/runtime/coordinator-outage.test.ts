/**
 * A store outage between a launch and its record (docs/semantics.md#guarantees, docs/semantics.md#launch): the coordinator retries the write with
 * back-off instead of dropping it, so a launched run is not stranded until its run timeout.
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/domain/ports/store.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { SECOND, createHarness, withRunMethods } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

/** A memory store whose run writes (launch records, completions) fail the next `failures` times. */
function outageStore(clock: VirtualClock): { store: Store; fail: (count: number) => void } {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  let failures = 0;
  // The coordinator writes launch answers and verdicts in batches, and single changes as batches of one.
  const changeRuns: Store["runs"]["changeRuns"] = (requests) => {
    if (failures > 0) {
      failures--;
      return Promise.reject(new Error("connection terminated"));
    }
    return base.runs.changeRuns(requests);
  };
  return {
    store: withRunMethods(base, { changeRuns }),
    fail: (count) => {
      failures = count;
    },
  };
}

describe("Coordinator during a store outage", () => {
  it("records a launch whose first writes fail, once the store answers again", async () => {
    const clock = new VirtualClock(t0);
    const { store, fail } = outageStore(clock);
    const h = createHarness({ clock, store });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
    fail(3);
    await h.tick();
    expect(h.launcher.callsFor(task.id)).toHaveLength(1);
    for (let i = 0; i < 20; i++) await clock.advance(SECOND);
    await flushPromises();
    const [run] = (await h.tasks.listRuns(LOCAL_ACTOR, task.id, { limit: 10 })).items;
    expect(run).toMatchObject({ status: "running", attempt: 1 });
    expect((await h.tasks.get(LOCAL_ACTOR, task.id)).run_count).toBe(1);
    // Logged once for the streak, not once per attempt.
    expect(h.logger.at("warn").filter((m) => m.includes("store write failed"))).toHaveLength(1);
    await h.coordinator.stop();
  });
});
