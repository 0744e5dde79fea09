/**
 * Runs claimed in the admitting transaction (docs/storage.md#fused-admit-and-claim) are launched like a
 * claim's: the admission is given a claim within this replica's room, its claimed runs are announced
 * (`run:claimed`) and launched, and claims answered after the heartbeat cover ran out are handed back.
 * The memory store here fuses by claiming right after its admission (the real fusion is the SQL stores':
 * test/race/postgres-fused-claim.test.ts, test/adapters/storage/sqlite/sqlite-fused-claim.test.ts); what
 * is tested is the coordinator's side.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { AdmissionClaim } from "../../src/domain/ports/task-repository.js";
import type { Store } from "../../src/domain/ports/store.js";
import { VERDICT_WAIT_MS } from "../../src/runtime/admission-rounds.js";
import { admitAndClaim } from "../contract/store-steps.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { SECOND, createHarness, withRunMethods } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

/**
 * A memory store whose admission claims when given a claim, optionally answering only once released;
 * `replaced` stands in for some of its run methods.
 */
function fusingStore(
  clock: VirtualClock,
  replaced: (base: Store) => Partial<Store["runs"]> = () => ({}),
): {
  store: Store;
  claims: (AdmissionClaim | undefined)[];
  limits: number[];
  /** How many runs each admission given a claim claimed. */
  fused: number[];
  /** The claims the coordinator made apart from its admissions. */
  claimCalls: () => number;
  /** How many runs each of those claims took, in order. */
  claimedByClaims: number[];
  /** From now on the admission reports a fused claim of none (the store saw a queued run ready). */
  fuseNothing: () => void;
  hold: () => () => void;
} {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  const claims: (AdmissionClaim | undefined)[] = [];
  const limits: number[] = [];
  const fused: number[] = [];
  let gate: Promise<void> | null = null;
  let claimCalls = 0;
  const claimedByClaims: number[] = [];
  let fuseNothing = false;
  const admitDueTasks: Store["tasks"]["admitDueTasks"] = async (
    now,
    limit,
    decide,
    rate,
    claim,
  ) => {
    claims.push(claim);
    limits.push(limit);
    const report = await base.tasks.admitDueTasks(now, limit, decide);
    if (claim === undefined) return report;
    const claimed = fuseNothing
      ? []
      : await base.runs.claimRuns(claim.request, claim.select, claim.claim);
    if (report.tasks > 0) fused.push(claimed.length);
    const held = gate;
    gate = null;
    if (held !== null) await held;
    return { ...report, claimed };
  };
  const tasks = new Proxy(base.tasks, {
    get: (target, property) => {
      if (property === "admitDueTasks") return admitDueTasks;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
  return {
    store: {
      ...withRunMethods(base, {
        claimRuns: async (request, select, claim) => {
          claimCalls++;
          const claimed = await base.runs.claimRuns(request, select, claim);
          claimedByClaims.push(claimed.length);
          return claimed;
        },
        ...replaced(base),
      }),
      tasks,
    },
    claims,
    limits,
    fused,
    claimCalls: () => claimCalls,
    claimedByClaims,
    fuseNothing: () => {
      fuseNothing = true;
    },
    hold: () => {
      let release: () => void = () => undefined;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

/**
 * Stands in for `runs.changeRuns` so that its first call (the first verdicts' write) is held until
 * `release`: those verdicts free their budget slots only once written.
 */
function holdFirstWrite(): {
  replaced: (base: Store) => Partial<Store["runs"]>;
  held: () => boolean;
  release: () => void;
} {
  const gate: { release: (() => void) | null } = { release: null };
  let calls = 0;
  return {
    replaced: (base) => ({
      changeRuns: async (requests) => {
        if (calls++ === 0) {
          await new Promise<void>((resolve) => {
            gate.release = resolve;
          });
        }
        return base.runs.changeRuns(requests);
      },
    }),
    held: () => gate.release !== null,
    release: () => {
      gate.release?.();
    },
  };
}

/**
 * A replica on `store` (handlers answer at once, claims of 2, 4 admission rounds) with `tasks` hourly
 * tasks made at t0, the clock set to their first due instant; the pass not yet run.
 */
async function dueBurst(
  clock: VirtualClock,
  store: Store,
  options: { readonly budget: number; readonly admissionBatch: number; readonly tasks: number },
): Promise<ReturnType<typeof createHarness>> {
  const h = createHarness({
    clock,
    store,
    policy: { maxConcurrentRuns: options.budget },
    coordinator: { admissionBatch: options.admissionBatch, claimBatch: 2, admissionRounds: 4 },
  });
  h.launcher.behaviour = (call) => {
    call.resolve({ completion: { status: "succeeded" } });
  };
  await h.tick();
  for (let i = 0; i < options.tasks; i++) {
    await h.create({ schedule: { type: "interval", every: "PT1H" } });
  }
  await clock.set((t0 + 3_600_000) as never);
  return h;
}

/**
 * Another replica admits `slots` due tasks of `store` and claims their runs first, under the same
 * budget: `slots` of the budget's slots are held by it.
 */
async function otherReplicaHolds(
  store: Store,
  clock: VirtualClock,
  slots: number,
  budget: number,
): Promise<void> {
  const other = await admitAndClaim(store, clock.now(), {
    batch: slots,
    limit: slots,
    maxConcurrentRuns: budget,
    replicaId: "replica-b",
    handlerNames: new Set(["job"]),
  });
  expect(other.claimed).toHaveLength(slots);
}

describe("Coordinator with the claim fused into admission", () => {
  it("once a round found the budget short (another replica held it), waits for its verdicts being written before the next", async () => {
    const clock = new VirtualClock(t0);
    // The verdicts' writes are held until released: they free the budget's slots only once written.
    const writes = holdFirstWrite();
    const { store, fused, limits } = fusingStore(clock, writes.replaced);
    const h = await dueBurst(clock, store, {
      budget: 2,
      admissionBatch: 2,
      tasks: 5,
    });
    // Another replica admits one task and claims its run first: one of the budget's two slots is held.
    await otherReplicaHolds(store, clock, 1, 2);
    const before = limits.length;
    const pass = h.coordinator.tick();
    await flushPromises();
    // The first round offered a room of 2 and found one slot: short (the other replica's admission is
    // the first entry of `fused`). Its verdict is being written, and neither the claim after the round
    // nor the next round goes on before that write instead of finding the budget full again.
    expect(fused).toEqual([1, 1]);
    expect(limits).toHaveLength(before + 1);
    expect(writes.held()).toBe(true);
    writes.release();
    await pass;
    await flushPromises();
    expect(limits.length).toBeGreaterThan(before + 1);
  });

  it("after a round short of its room, claims the runs it queued once its verdicts are written", async () => {
    const clock = new VirtualClock(t0);
    const writes = holdFirstWrite();
    const { store, fused, claimCalls, claimedByClaims } = fusingStore(clock, writes.replaced);
    const h = await dueBurst(clock, store, {
      budget: 2,
      admissionBatch: 2,
      tasks: 5,
    });
    // Another replica holds one of the budget's two slots; this replica's first round fuses one run of
    // its two and queues the other (short of its room).
    await otherReplicaHolds(store, clock, 1, 2);
    const claimsBefore = claimCalls();
    const pass = h.coordinator.tick();
    await flushPromises();
    expect(fused).toEqual([1, 1]);
    expect(writes.held()).toBe(true);
    // While the fused run's verdict is being written its slot is held: no claim is made yet (it would
    // find the budget full).
    expect(claimCalls()).toBe(claimsBefore);
    writes.release();
    await flushPromises();
    // Written, the slot is free: the claim takes the run the round queued.
    expect(claimedByClaims[claimsBefore]).toBe(1);
    await pass;
  });

  it("never waits while its rounds find the budget's room: one replica under its own budget", async () => {
    const clock = new VirtualClock(t0);
    const writes = holdFirstWrite();
    const { store, fused, limits } = fusingStore(clock, writes.replaced);
    const h = await dueBurst(clock, store, {
      budget: 2,
      admissionBatch: 4,
      tasks: 4,
    });
    const before = limits.length;
    const pass = h.coordinator.tick();
    await flushPromises();
    // Its first round fused its whole room; the second admitted at once, its verdicts' write still held
    // (waiting for it, the second round would not have started).
    expect(fused[0]).toBe(2);
    expect(writes.held()).toBe(true);
    expect(limits.length).toBeGreaterThan(before + 1);
    writes.release();
    await pass;
  });

  it("gives the admission a claim within its room, and launches and announces what it claimed", async () => {
    const clock = new VirtualClock(t0);
    const { store, claims } = fusingStore(clock);
    const claimed: string[] = [];
    const h = createHarness({
      clock,
      store,
      policy: { maxConcurrentRuns: 3 },
      coordinator: { claimBatch: 2 },
    });
    h.dispatch.claims.announce = (runs) => {
      for (const run of runs) claimed.push(run.run.id);
    };
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.at(t0 + 3_600_000);
    expect(claims[0]?.request).toMatchObject({
      limit: 2,
      maxConcurrentRuns: 3,
      replicaId: "replica-a",
    });
    const calls = h.launcher.callsFor(task.id);
    expect(calls).toHaveLength(1);
    expect(claimed).toEqual([calls[0]!.run.id]);
    expect((await h.runs(task.id)).map((r) => r.status)).toEqual(["running"]);
  });

  it("waits for its verdicts being written no longer than VERDICT_WAIT_MS: then it admits all the same", async () => {
    const clock = new VirtualClock(t0);
    // The verdicts' writes never end (a store that hangs): the round must not wait for them.
    const { store, limits } = fusingStore(clock, (base) => ({
      changeRuns: (requests) =>
        requests.length > 0 ? new Promise(() => undefined) : base.runs.changeRuns(requests),
    }));
    const h = await dueBurst(clock, store, {
      budget: 3,
      admissionBatch: 2,
      tasks: 5,
    });
    // Another replica holds two of the budget's three slots: the first round's room of 2 finds one.
    await otherReplicaHolds(store, clock, 2, 3);
    const before = limits.length;
    const pass = h.coordinator.tick();
    await flushPromises();
    // The first round came back short; its claim and the second round each wait for the write that
    // never ends, then go on.
    expect(limits).toHaveLength(before + 1);
    await clock.advance(VERDICT_WAIT_MS - 1);
    expect(limits).toHaveLength(before + 1);
    await clock.advance(1);
    await flushPromises();
    expect(limits).toHaveLength(before + 1);
    await clock.advance(VERDICT_WAIT_MS);
    await flushPromises();
    expect(limits).toHaveLength(before + 2);
    const state = { done: false };
    void pass.then(() => {
      state.done = true;
    });
    // Every later round short of its room waits as long, and no longer.
    for (let i = 0; i < 20 && !state.done; i++) await clock.advance(VERDICT_WAIT_MS);
    await pass;
    // The round after the wait admitted the rest (queued: the budget is held), decided all the same.
    expect(limits.length).toBeGreaterThan(before + 1);
  });

  it("hands back what it claimed when the answer came after its heartbeat cover ran out", async () => {
    const clock = new VirtualClock(t0);
    const { store, hold } = fusingStore(clock);
    const h = createHarness({ clock, store });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await clock.set((t0 + 3_600_000) as never);
    const release = hold();
    const pass = h.coordinator.tick();
    await flushPromises();
    await clock.advance(11 * SECOND);
    release();
    await pass;
    await flushPromises();
    expect(h.launcher.callsFor(task.id)).toHaveLength(0);
    expect(h.logger.at("warn").some((m) => m.includes("not launched, handed back"))).toBe(true);
    const [handedBack] = await h.runs(task.id);
    expect(handedBack).toMatchObject({ status: "queued", claimToken: null });
  });

  it("gives no claim when this replica has no room", async () => {
    const clock = new VirtualClock(t0);
    const { store, claims } = fusingStore(clock);
    const h = createHarness({ clock, store, coordinator: { maxInFlight: 0 } });
    await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.at(t0 + 3_600_000);
    expect(claims.length).toBeGreaterThan(0);
    expect(claims.every((c) => c === undefined)).toBe(true);
  });

  it("admits about the room per round once the store fuses, never less than a quarter of the batch", async () => {
    const clock = new VirtualClock(t0);
    const { store, limits } = fusingStore(clock);
    const h = createHarness({
      clock,
      store,
      policy: { maxConcurrentRuns: 100 },
      coordinator: { admissionBatch: 12, claimBatch: 5, admissionRounds: 10 },
    });
    h.launcher.behaviour = () => undefined;
    for (let i = 0; i < 30; i++) await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.at(t0 + 3_600_000);
    // The first admission learns that the store fuses; then the room (5) per round, until the room is
    // under a quarter of the batch (3): then 3.
    expect(limits[0]).toBe(12);
    expect(limits.slice(1, 4)).toEqual([5, 5, 5]);
    expect(limits.every((limit) => limit >= 3)).toBe(true);
  });

  it("makes no claim after an admission that claimed every run it queued", async () => {
    const clock = new VirtualClock(t0);
    const { store, claimCalls } = fusingStore(clock);
    const h = createHarness({ clock, store, policy: { maxConcurrentRuns: 10 } });
    h.launcher.behaviour = () => undefined;
    const tasks = [
      await h.create({ schedule: { type: "interval", every: "PT1H" } }),
      await h.create({ schedule: { type: "interval", every: "PT1H" } }),
    ];
    await h.at(t0 + 3_600_000);
    for (const task of tasks) expect(h.launcher.callsFor(task.id)).toHaveLength(1);
    // The store fused only because nothing queued was ready: a claim then would find nothing.
    expect(claimCalls()).toBe(0);
  });

  it("claims after an admission that queued more runs than it claimed", async () => {
    const clock = new VirtualClock(t0);
    const { store, claimCalls } = fusingStore(clock);
    const h = createHarness({
      clock,
      store,
      policy: { maxConcurrentRuns: 10 },
      coordinator: { claimBatch: 1 },
    });
    h.launcher.behaviour = () => undefined;
    for (let i = 0; i < 3; i++) await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.at(t0 + 3_600_000);
    expect(claimCalls()).toBeGreaterThan(0);
    expect(h.launcher.calls).toHaveLength(3);
  });

  it("claims after an admission that fused none (a queued run was ready): the pass is the fallback", async () => {
    const clock = new VirtualClock(t0);
    const { store, claimCalls, fuseNothing } = fusingStore(clock);
    const h = createHarness({ clock, store, policy: { maxConcurrentRuns: 10 } });
    fuseNothing();
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.at(t0 + 3_600_000);
    expect(claimCalls()).toBeGreaterThan(0);
    expect(h.launcher.callsFor(task.id)).toHaveLength(1);
  });
});
