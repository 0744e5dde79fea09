/**
 * A claim answered after this replica's heartbeats stopped vouching for it
 * (docs/operations.md#a-partitioned-replica): the database answered the claim, but so late (a partition
 * that held the answer, a stalled process) that the other replicas may have judged this one silent and
 * taken its claims over meanwhile. Such claims are never launched; each is handed back, fenced by its
 * token, and the run is launched once, later, by whoever claims it next.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import type { Store } from "../../src/domain/ports/store.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { SECOND, createHarness, withRunMethods } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

/** A memory store whose next claim answers only once `release()` is called. */
function heldClaimStore(clock: VirtualClock): { store: Store; hold: () => () => void } {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  let gate: Promise<void> | null = null;
  const claimRuns: Store["runs"]["claimRuns"] = async (request, select, claim) => {
    const claimed = await base.runs.claimRuns(request, select, claim);
    const held = gate;
    gate = null;
    if (held !== null) await held;
    return claimed;
  };
  return {
    store: withRunMethods(base, { claimRuns }),
    hold: () => {
      let release: () => void = () => undefined;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

describe("Coordinator with a claim answered late", () => {
  it("launches nothing it claimed after its liveness cover ran out, and hands the runs back", async () => {
    const clock = new VirtualClock(t0);
    const { store, hold } = heldClaimStore(clock);
    const h = createHarness({ clock, store });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
    const release = hold();
    const pass = h.coordinator.tick();
    await flushPromises();
    // The claim's answer is held past the liveness timeout (10 s by default).
    await clock.advance(11 * SECOND);
    release();
    await pass;
    await flushPromises();
    expect(h.launcher.callsFor(task.id)).toHaveLength(0);
    expect(h.logger.at("warn").some((m) => m.includes("not launched, handed back"))).toBe(true);
    const [handedBack] = await h.runs(task.id);
    expect(handedBack).toMatchObject({ status: "queued", claimToken: null, failures: 0 });
    // Launched once when claimed again in time.
    await h.runUntil(clock.now() + 5 * SECOND);
    expect(h.launcher.callsFor(task.id)).toHaveLength(1);
    await h.coordinator.stop();
  });

  it("launches a claim answered within its cover", async () => {
    const clock = new VirtualClock(t0);
    const { store, hold } = heldClaimStore(clock);
    const h = createHarness({ clock, store });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
    const release = hold();
    const pass = h.coordinator.tick();
    await flushPromises();
    await clock.advance(5 * SECOND);
    release();
    await pass;
    await flushPromises();
    expect(h.launcher.callsFor(task.id)).toHaveLength(1);
    await h.coordinator.stop();
  });
});
