/**
 * The coordinator's loop on the virtual clock (docs/architecture.md#cadence, CONVENTIONS "Async"): it sleeps until the next
 * due instant or the tick and never spins, wakes at once on a signal, and a failing tick backs off with
 * jitter and is logged once per streak.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { Store } from "../../src/domain/ports/store.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import type { Instant } from "../../src/domain/time.js";
import { VirtualClock, flushPromises } from "../../src/runtime/clock.js";
import { HOUR, MINUTE, SECOND, createHarness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);

/**
 * A memory store whose replica heartbeat and admission fail while `failing` (a pass beats only when a
 * beat is due, so the admission is the write every pass makes), and which runs `afterAdmit` once an
 * admission batch has been decided.
 */
function flakyStore(clock: VirtualClock) {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  const state = { failing: false, heartbeats: 0, admissions: 0, afterAdmit: (): void => undefined };
  const tasks = base.tasks;
  const store: Store = {
    kind: base.kind,
    tasks: {
      insertTask: (task) => tasks.insertTask(task),
      insertTasks: (list) => tasks.insertTasks(list),
      findTask: (scope, id) => tasks.findTask(scope, id),
      findTaskByKey: (owner, key) => tasks.findTaskByKey(owner, key),
      countTasks: (owner) => tasks.countTasks(owner),
      listTasks: (scope, query) => tasks.listTasks(scope, query),
      mutateTask: (scope, id, decide) => tasks.mutateTask(scope, id, decide),
      nextDueAt: () => tasks.nextDueAt(),
      admitDueTasks: async (now, limit, decide) => {
        state.admissions++;
        if (state.failing) throw new Error("database unavailable");
        const report = await tasks.admitDueTasks(now, limit, decide);
        state.afterAdmit();
        return report;
      },
    },
    runs: base.runs,
    replicas: {
      heartbeat: (replicaId, now, handlerNames) => {
        state.heartbeats++;
        return state.failing
          ? Promise.reject(new Error("database unavailable"))
          : base.replicas.heartbeat(replicaId, now, handlerNames);
      },
      listReplicas: (since, limit) => base.replicas.listReplicas(since, limit),
    },
    migrate: () => base.migrate(),
    migrationStatus: () => base.migrationStatus(),
    ping: () => base.ping(),
    close: () => base.close(),
  };
  return { store, state };
}

/** Moves the clock in small steps so the loop runs every wake-up on the way. */
async function walk(clock: VirtualClock, ms: number, stepMs = 50): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += stepMs) await clock.advance(stepMs);
}

describe("Coordinator loop", () => {
  it("ticks once per tick interval when idle (it never spins)", async () => {
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    const h = createHarness({ clock, store });
    h.coordinator.start();
    await flushPromises();
    await walk(clock, 10 * SECOND);
    // One tick at start and one per second (each admits once).
    expect(state.admissions).toBe(11);
    await h.coordinator.stop();
  });

  it("beats no more often than a third of the liveness timeout, however often it ticks", async () => {
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    // Ticks every 100 ms against a liveness timeout of 9 s: a beat is due every 3 s.
    const h = createHarness({
      clock,
      store,
      coordinator: { tickMs: 100 },
      policy: { livenessTimeoutSeconds: 9 },
    });
    h.coordinator.start();
    await flushPromises();
    await walk(clock, 9 * SECOND);
    expect(state.admissions).toBeGreaterThanOrEqual(90);
    // At 0, 3, 6 and 9 s: the passes in between do not beat.
    expect(state.heartbeats).toBe(4);
    await h.coordinator.stop();
  });

  it("sleeps until the next due instant when it comes before the tick", async () => {
    // A liveness timeout of 3 h: the heartbeat between passes (every hour) is not the next wake-up.
    const h = createHarness({
      start: T0,
      coordinator: { tickMs: HOUR },
      policy: { livenessTimeoutSeconds: 3 * 3600 },
    });
    const task = await h.create({ schedule: { type: "interval", every: "PT90S" } });
    h.coordinator.start();
    await flushPromises();
    expect(h.clock.nextWakeAt()).toBe(t0 + 90 * SECOND);
    await h.clock.set((t0 + 90 * SECOND) as Instant);
    await flushPromises();
    expect(h.launcher.callsFor(task.id).map((c) => c.at)).toEqual([t0 + 90 * SECOND]);
    await h.coordinator.stop();
  });

  it("wakes at once when the service signals new work", async () => {
    const h = createHarness({ start: T0, coordinator: { tickMs: HOUR } });
    const task = await h.create({ schedule: { type: "interval", every: "P1D" } });
    h.coordinator.start();
    await flushPromises();
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, h.clock.now());
    await flushPromises();
    expect(h.launcher.callsFor(task.id)).toHaveLength(1);
    expect(h.launcher.calls[0]!.at).toBe(t0);
    await h.coordinator.stop();
  });

  it("ticks again at once when a task comes due while a tick is running", async () => {
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    const h = createHarness({ clock, store, coordinator: { tickMs: MINUTE } });
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    // The clock passes the fire time just after the first tick's admission looked.
    state.afterAdmit = () => {
      state.afterAdmit = () => undefined;
      void clock.set((t0 + HOUR) as Instant);
    };
    h.coordinator.wakeSignal.nextWake(); // the create's wake-up is spent: only the loop's rule is left
    h.coordinator.start();
    await flushPromises();
    expect(h.launcher.callsFor(task.id).map((c) => c.at)).toEqual([t0 + HOUR]);
    await h.coordinator.stop();
  });

  it("ticks again at once when admission stopped at its round limit with tasks still due", async () => {
    const h = createHarness({
      start: T0,
      coordinator: { tickMs: HOUR, admissionBatch: 1, admissionRounds: 1 },
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await h.create({ schedule: { type: "interval", every: "PT1M" } })).id);
    }
    h.coordinator.start();
    await flushPromises();
    await h.clock.set((t0 + MINUTE) as Instant);
    await flushPromises();
    for (const id of ids) expect(h.launcher.callsFor(id).map((c) => c.at)).toEqual([t0 + MINUTE]);
    await h.coordinator.stop();
  });

  it("backs off with jitter while ticks fail, and logs once per streak", async () => {
    // The jitter's worst case for this test, made certain: the shortest back-offs first, so a seventh
    // attempt still fails inside the first 20 s, then the longest (30 s) before the attempt that succeeds.
    // (Left to chance, that case made this test fail about once in twenty runs.)
    let draws = 0;
    vi.spyOn(Math, "random").mockImplementation(() => (draws++ < 6 ? 0 : 0.999));
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    // A liveness timeout of 10 min: no heartbeat between the passes' attempts, which this test counts.
    const h = createHarness({ clock, store, policy: { livenessTimeoutSeconds: 600 } });
    state.failing = true;
    h.coordinator.start();
    await flushPromises();
    expect(state.heartbeats).toBe(1);
    // First back-off: 0.5 s halved plus jitter, so 250-500 ms.
    const firstSleep = clock.nextWakeAt()! - clock.now();
    expect(firstSleep).toBeGreaterThanOrEqual(250);
    expect(firstSleep).toBeLessThanOrEqual(500);
    await walk(clock, 20 * SECOND);
    // Doubling back-off: far fewer attempts than one per tick (20), more than one.
    expect(state.heartbeats).toBeGreaterThan(3);
    expect(state.heartbeats).toBeLessThan(10);
    expect(h.logger.at("error")).toEqual(["coordinator tick failed; backing off"]);
    state.failing = false;
    // The back-off is capped at 30 s: the next attempt, which succeeds, comes within it.
    await walk(clock, 31 * SECOND);
    expect(h.logger.at("info")).toEqual(["coordinator recovered"]);
    // A second streak is logged again, once.
    state.failing = true;
    await walk(clock, 10 * SECOND);
    expect(h.logger.at("error")).toHaveLength(2);
    state.failing = false;
    await walk(clock, 40 * SECOND);
    expect(h.logger.at("info")).toHaveLength(2);
    await h.coordinator.stop();
  });

  it("passes again within a heartbeat interval once the store answers its heartbeats again, however long the back-off", async () => {
    // The longest back-offs: after a minute of failures, the next attempt would be up to 30 s away.
    vi.spyOn(Math, "random").mockReturnValue(0.999);
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    // Liveness 3 s: the heartbeat loop beats every second, between the passes' attempts.
    const h = createHarness({ clock, store, policy: { livenessTimeoutSeconds: 3 } });
    state.failing = true;
    h.coordinator.start();
    await flushPromises();
    // Attempts at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 and 61.5 s: at 65 s, the next is at 91.5 s.
    await walk(clock, 65 * SECOND);
    expect(h.logger.at("info")).toEqual([]);
    state.failing = false;
    // The store is back (a partition healed): the next beat wakes the loop, not the back-off's end.
    await walk(clock, 1_500);
    expect(h.logger.at("info")).toEqual(["coordinator recovered"]);
    await h.coordinator.stop();
  });

  it("caps the back-off at 30 s", async () => {
    const clock = new VirtualClock(t0);
    const { store, state } = flakyStore(clock);
    // A liveness timeout of 10 min: no heartbeat between the passes' attempts, which this test counts.
    const h = createHarness({ clock, store, policy: { livenessTimeoutSeconds: 600 } });
    state.failing = true;
    h.coordinator.start();
    await flushPromises();
    await walk(clock, 5 * MINUTE, 500);
    const sleep = clock.nextWakeAt()! - clock.now();
    expect(sleep).toBeLessThanOrEqual(30 * SECOND);
    expect(sleep).toBeGreaterThan(0);
    await h.coordinator.stop();
  });

  it("measures its clock again at once when the machine's wall clock stepped, warning with the step", async () => {
    const applied: number[] = [];
    let step = 0;
    const h = createHarness({
      start: T0,
      referenceClock: { measureOffsetMs: () => Promise.resolve(-step) },
      applyClockOffset: (ms) => {
        applied.push(ms);
        step = 0;
      },
      wallStepMs: () => step,
    });
    await h.tick();
    expect(applied).toEqual([-0]);
    await h.advance(SECOND);
    expect(applied).toHaveLength(1);
    step = 3_600_000;
    await h.advance(SECOND);
    expect(applied).toEqual([-0, -3_600_000]);
    expect(h.logger.at("warn")).toContain(
      "this machine's clock stepped since it was last measured; measuring it again against the database's",
    );
    await h.coordinator.stop();
  });

  it("corrects its clock by the measured offset at start and every 10 minutes, warning above 1 s", async () => {
    const offsets = [300, 2500];
    const applied: number[] = [];
    const h = createHarness({
      start: T0,
      referenceClock: { measureOffsetMs: () => Promise.resolve(offsets.shift() ?? 0) },
      applyClockOffset: (ms) => applied.push(ms),
    });
    await h.tick();
    expect(applied).toEqual([300]);
    await h.advance(9 * MINUTE);
    expect(applied).toEqual([300]);
    expect(h.logger.at("warn")).toEqual([]);
    await h.advance(MINUTE);
    expect(applied).toEqual([300, 2500]);
    expect(h.logger.at("warn")).toEqual([
      "this machine's clock differs from the database's by more than 1 s; using the database's",
    ]);
  });
});
