/**
 * A freed launch slot wakes a claim, not a whole pass, and frees are gathered into a useful batch
 * (docs/architecture.md#cadence): a quarter of the budget, at once when nothing else is in flight, else
 * after a short linger.
 */
import { describe, expect, it } from "vitest";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { Store, WakeHint, WakeSource } from "../../src/domain/ports/store.js";
import type { RunId } from "../../src/domain/ids.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { CLAIM_LINGER_MS } from "../../src/runtime/claim-trigger.js";
import type { InProcessRuns } from "../../src/runtime/coordinator-deps.js";
import { createHarness, leavePending, withRunMethods } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");
const HOUR = 3_600_000;

/** A memory store counting admissions (one per pass) and claims. */
function countingStore(clock: VirtualClock): {
  store: Store;
  counts: { admissions: number; claims: number };
} {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  const counts = { admissions: 0, claims: 0 };
  const withClaims = withRunMethods(base, {
    claimRuns: (...args) => {
      counts.claims++;
      return base.runs.claimRuns(...args);
    },
  });
  const tasks = new Proxy(base.tasks, {
    get: (target, property) => {
      if (property === "admitDueTasks") {
        return (...args: Parameters<Store["tasks"]["admitDueTasks"]>) => {
          counts.admissions++;
          return (target as Store["tasks"]).admitDueTasks(...args);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
  return { store: { ...withClaims, tasks }, counts };
}

/** Runs "executing in this process" as far as the coordinator can tell (its idle rule). */
function inProcess(running: () => number): InProcessRuns {
  return {
    get running() {
      return running();
    },
    settled: () => Promise.resolve(),
    abandon: () => undefined,
    runsHere: () => false,
  };
}

async function triggerMany(h: ReturnType<typeof createHarness>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const task = await h.create({ schedule: { type: "interval", every: "P1D" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, h.clock.now());
  }
}

describe("Coordinator claim wake-ups", () => {
  it("claims the next run when a verdict frees the budget, without another pass", async () => {
    const clock = new VirtualClock(t0);
    const { store, counts } = countingStore(clock);
    const h = createHarness({
      clock,
      store,
      coordinator: { tickMs: HOUR, sweepMs: HOUR },
      policy: { maxConcurrentRuns: 1 },
    });
    h.launcher.behaviour = (call) => {
      call.resolve();
      void h.coordinator.reportCompletion(call.run.id, { status: "succeeded", result: null });
    };
    await triggerMany(h, 3);
    h.coordinator.start();
    for (let i = 0; i < 20 && h.launcher.calls.length < 3; i++) await flushPromises();
    expect(h.launcher.calls).toHaveLength(3);
    // One pass (the start's); each verdict woke a claim, not a pass.
    expect(counts.admissions).toBe(1);
    await h.coordinator.stop();
  });

  it("gathers frees into a quarter of the budget while other runs are in flight, and lingers briefly for fewer", async () => {
    const clock = new VirtualClock(t0);
    const { store, counts } = countingStore(clock);
    const running = new Set<RunId>();
    const h = createHarness({
      clock,
      store,
      coordinator: { tickMs: HOUR, sweepMs: HOUR },
      // A budget of 8: a useful batch is 2 frees.
      policy: { maxConcurrentRuns: 8 },
      inProcess: inProcess(() => running.size),
    });
    h.launcher.behaviour = (call) => {
      running.add(call.run.id);
      call.resolve();
    };
    await triggerMany(h, 12);
    h.coordinator.start();
    for (let i = 0; i < 20 && h.launcher.calls.length < 8; i++) await flushPromises();
    await flushPromises();
    expect(h.launcher.calls).toHaveLength(8);
    const claimsAfterPass = counts.claims;
    const finish = async (index: number): Promise<void> => {
      const id = h.launcher.calls[index]!.run.id;
      const reported = h.coordinator.reportCompletion(id, { status: "succeeded", result: null });
      await reported;
      running.delete(id);
      await flushPromises();
    };
    // One free while seven runs are in flight: no claim yet.
    await finish(0);
    expect(counts.claims).toBe(claimsAfterPass);
    expect(h.launcher.calls).toHaveLength(8);
    // The second makes a useful batch: one claim takes two runs.
    await finish(1);
    expect(counts.claims).toBeGreaterThan(claimsAfterPass);
    expect(h.launcher.calls).toHaveLength(10);
    // A lone free is claimed after the linger, not at the tick.
    const claimsBefore = counts.claims;
    await finish(2);
    expect(counts.claims).toBe(claimsBefore);
    await clock.advance(CLAIM_LINGER_MS);
    for (let i = 0; i < 5; i++) await flushPromises();
    expect(h.launcher.calls).toHaveLength(11);
    expect(counts.admissions).toBe(1);
    await h.coordinator.stop();
  });

  it("an admission that queued more than its replica then claimed wakes the other replicas to claim; fewer wake none", async () => {
    const clock = new VirtualClock(t0);
    const store = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
    const bus = new WakeBus();
    const admitter = createHarness({
      clock,
      store,
      replicaId: "admitter",
      wakes: bus,
      coordinator: { tickMs: HOUR, sweepMs: HOUR, maxInFlight: 2, claimBatch: 2 },
      policy: { maxConcurrentRuns: 10 },
    });
    const sleeper = createHarness({
      clock,
      store,
      replicaId: "sleeper",
      wakes: bus,
      coordinator: { tickMs: HOUR, sweepMs: HOUR },
      policy: { maxConcurrentRuns: 10 },
    });
    // Launches stay in flight: no verdict frees a slot (and wakes a claim) during the test.
    admitter.launcher.behaviour = leavePending;
    sleeper.launcher.behaviour = leavePending;
    await sleeper.coordinator.listen();
    await admitter.coordinator.listen();
    // The sleeper's first pass finds nothing due: it sleeps until its tick, an hour away.
    sleeper.coordinator.start();
    await flushPromises();
    const dueAt = t0 + 1_000;
    for (let i = 0; i < 6; i++) {
      await admitter.create({ schedule: { type: "once", run_at: new Date(dueAt).toISOString() } });
    }
    await admitter.at(dueAt);
    for (let i = 0; i < 20 && sleeper.launcher.calls.length < 4; i++) await flushPromises();
    // Six queued, two claimed by the admitter: it told the others once, and the sleeper took the rest.
    expect(bus.sent).toEqual(["admitter"]);
    expect(admitter.launcher.calls).toHaveLength(2);
    expect(sleeper.launcher.calls).toHaveLength(4);
    // An admission whose runs its replica claimed all (the sleeper's: one run, six free) announces
    // nothing.
    await sleeper.create({
      schedule: { type: "once", run_at: new Date(dueAt + 1_000).toISOString() },
    });
    await sleeper.at(dueAt + 1_000);
    for (let i = 0; i < 5; i++) await flushPromises();
    expect(bus.sent).toEqual(["admitter"]);
    expect(sleeper.launcher.calls).toHaveLength(5);
    for (const call of [...admitter.launcher.calls, ...sleeper.launcher.calls]) call.resolve();
    await flushPromises();
    await Promise.all([admitter.coordinator.stop(), sleeper.coordinator.stop()]);
  });
});

/** Wake-ups between replicas in one process: every announcement reaches every subscriber, the sender's too. */
class WakeBus implements WakeSource {
  readonly sent: string[] = [];
  readonly #listeners = new Set<(hint?: WakeHint, from?: string) => void>();

  subscribe(onWake: (hint?: WakeHint, from?: string) => void): Promise<() => Promise<void>> {
    this.#listeners.add(onWake);
    return Promise.resolve(() => {
      this.#listeners.delete(onWake);
      return Promise.resolve();
    });
  }

  announceQueued(from: string): Promise<void> {
    this.sent.push(from);
    for (const listener of this.#listeners) listener("queued", from);
    return Promise.resolve();
  }
}
