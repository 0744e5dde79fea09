/**
 * Write-behind batching (issue #6): the launch answers of one claim, and the verdicts reported right after
 * them, reach the store as one `changeRuns` batch, each verdict after its launch.
 */
import { describe, expect, it } from "vitest";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import type { Store } from "../../src/domain/ports/store.js";
import { createMemoryStore } from "../../src/adapters/storage/memory/memory-store.js";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type { RunChangeRequest } from "../../src/domain/ports/run-repository.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { createHarness, withRunMethods } from "./harness.js";

const t0 = Date.parse("2026-01-05T00:00:00Z");

/** A memory store that records the batches of run changes it is given. */
function recordingStore(clock: VirtualClock): { store: Store; batches: RunChangeRequest[][] } {
  const base = createMemoryStore({ newId: createIdGenerator(() => clock.now()) });
  const batches: RunChangeRequest[][] = [];
  const store = withRunMethods(base, {
    changeRuns: (requests) => {
      batches.push([...requests]);
      return base.runs.changeRuns(requests);
    },
  });
  return { store, batches };
}

describe("Coordinator write batches", () => {
  it("writes a claim's launch answers and the verdicts that follow them in one batch", async () => {
    const clock = new VirtualClock(t0);
    const { store, batches } = recordingStore(clock);
    const h = createHarness({ clock, store });
    h.launcher.behaviour = (call) => {
      call.resolve();
      // A handler that finishes at once reports its verdict while its launch answer is on its way.
      void h.coordinator.reportCompletion(call.run.id, { status: "succeeded", result: "done" });
    };
    const tasks = [];
    for (let i = 0; i < 5; i++) {
      const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
      await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
      tasks.push(task);
    }
    await h.tick();
    await h.coordinator.settle();
    expect(batches).toHaveLength(1);
    const [batch] = batches;
    expect(batch).toHaveLength(10);
    // Each run's verdict comes after its launch answer (the fenced one).
    for (const request of batch!.filter((r) => r.token === undefined)) {
      const launch = batch!.findIndex((r) => r.id === request.id && r.token !== undefined);
      expect(launch).toBeGreaterThanOrEqual(0);
      expect(launch).toBeLessThan(batch!.indexOf(request));
    }
    // Each launch answer carries the run as claimed and its task's version: a store may decide on them
    // instead of reading the run again (docs/storage.md#the-fenced-run-write).
    for (const launch of batch!.filter((r) => r.token !== undefined)) {
      const task = tasks.find((t) => t.id === launch.expect?.run.taskId);
      expect(launch.expect).toMatchObject({
        run: { id: launch.id, status: "launching", claimToken: launch.token, attempt: 1 },
        task: { scheduleType: "interval", targetKind: "handler" },
        taskVersion: task?.version,
      });
    }
    for (const task of tasks) {
      const [run] = (await h.tasks.listRuns(LOCAL_ACTOR, task.id, { limit: 10 })).items;
      expect(run).toMatchObject({ status: "succeeded", result: "done", attempt: 1 });
      expect((await h.tasks.get(LOCAL_ACTOR, task.id)).run_count).toBe(1);
    }
    await h.coordinator.stop();
  });

  it("writes a verdict that comes after its launch was written with the run as launched", async () => {
    const clock = new VirtualClock(t0);
    const { store, batches } = recordingStore(clock);
    const h = createHarness({ clock, store });
    const launched: string[] = [];
    h.launcher.behaviour = (call) => {
      call.resolve();
      launched.push(call.run.id);
    };
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
    await h.tick();
    await h.coordinator.settle();
    expect(batches).toHaveLength(1);
    const [id] = launched;
    await h.coordinator.reportCompletion(id as never, { status: "succeeded", result: "later" });
    await h.coordinator.settle();
    expect(batches).toHaveLength(2);
    // The verdict's own batch: the run as the launch answer wrote it, so no read is needed.
    expect(batches[1]).toHaveLength(1);
    expect(batches[1]![0]!.expect).toMatchObject({
      run: { id, status: "running", claimToken: null, attempt: 1 },
      task: { scheduleType: "interval", targetKind: "handler" },
      taskVersion: task.version,
    });
    const [run] = (await h.tasks.listRuns(LOCAL_ACTOR, task.id, { limit: 10 })).items;
    expect(run).toMatchObject({ status: "succeeded", result: "later" });
    await h.coordinator.stop();
  });

  it("waits, when settling, for a verdict reported after its launch was written", async () => {
    const clock = new VirtualClock(t0);
    const { store, batches } = recordingStore(clock);
    const h = createHarness({ clock, store });
    h.launcher.behaviour = (call) => {
      call.resolve();
    };
    const task = await h.create({ schedule: { type: "interval", every: "PT1H" } });
    await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, clock.now());
    await h.tick();
    await h.coordinator.settle();
    const [launched] = (await h.tasks.listRuns(LOCAL_ACTOR, task.id, { limit: 10 })).items;
    expect(launched).toMatchObject({ status: "running" });
    // Nothing else in flight: only the verdict's own write is left for `settle` to wait for.
    void h.coordinator.reportCompletion(launched!.id as never, {
      status: "succeeded",
      result: "late",
    });
    await h.coordinator.settle();
    expect(batches).toHaveLength(2);
    const [run] = (await h.tasks.listRuns(LOCAL_ACTOR, task.id, { limit: 10 })).items;
    expect(run).toMatchObject({ status: "succeeded", result: "late" });
  });
});
