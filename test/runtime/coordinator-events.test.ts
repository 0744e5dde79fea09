/**
 * The coordinator and the services report through a typed event sink (docs/architecture.md#events):
 * admissions, claims, run status changes and ticks, each once, and a listener that throws is reported
 * and never breaks a tick, a store write or a launch.
 */
import { describe, expect, it } from "vitest";
import { LOCAL_ACTOR } from "../../src/application/access/actor.js";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import type { SchedulerEventName } from "../../src/application/events/internal-events.js";
import { MINUTE, createHarness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";

function recorder(events: SchedulerEvents): string[] {
  const seen: string[] = [];
  events.on("admission:decided", ({ admission }) => {
    seen.push(`decided ${admission.decisions.map((d) => d.kind).join(",")}`);
  });
  events.on("admission:batch", ({ tasks }) => seen.push(`batch ${tasks}`));
  events.on("run:claimed", ({ run }) => seen.push(`claimed ${run.status}`));
  events.on("run:changed", ({ run, from }) => seen.push(`changed ${from}->${run.status}`));
  return seen;
}

describe("the scheduler's events", () => {
  it("report a fire from its decision to its verdict, once each", async () => {
    const events = new SchedulerEvents();
    const seen = recorder(events);
    const ticks: number[] = [];
    events.on("coordinator:tick", ({ durationMs }) => ticks.push(durationMs));
    const h = createHarness({ start: T0, events });
    await h.create({ schedule: { type: "interval", every: "PT1M" } });
    seen.length = 0;
    await h.advance(MINUTE);
    expect(seen).toEqual([
      "decided queue",
      "batch 1",
      "claimed launching",
      "changed launching->running",
    ]);
    expect(ticks).toHaveLength(1);
    expect(ticks[0]).toBeGreaterThanOrEqual(0);
  });

  it("report a run the owner cancels", async () => {
    const events = new SchedulerEvents();
    const seen = recorder(events);
    const h = createHarness({ start: T0, events });
    const task = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    const run = await h.tasks.trigger(LOCAL_ACTOR, task.id, {}, h.clock.now());
    seen.length = 0;
    await h.tasks.cancelRun(LOCAL_ACTOR, run.id, h.clock.now());
    expect(seen).toEqual(["changed queued->cancelled"]);
  });

  it("never let a listener that throws break the coordinator", async () => {
    const failures: SchedulerEventName[] = [];
    const events = new SchedulerEvents({
      onListenerError: (_error, event) => failures.push(event),
    });
    for (const event of ["admission:decided", "run:claimed", "run:changed"] as const) {
      events.on(event, () => {
        throw new Error(`a broken ${event} listener`);
      });
    }
    const h = createHarness({ start: T0, events });
    const task = await h.create({ schedule: { type: "interval", every: "PT1M" } });
    await h.advance(MINUTE);
    const runs = await h.runs(task.id);
    expect(runs.map((r) => r.status)).toEqual(["running"]);
    expect(h.launcher.calls).toHaveLength(1);
    expect(failures).toEqual(["admission:decided", "run:claimed", "run:changed"]);
  });

  it("stop calling a listener once it is removed", () => {
    const events = new SchedulerEvents();
    const seen: number[] = [];
    const stop = events.on("admission:batch", ({ tasks }) => seen.push(tasks));
    events.emit("admission:batch", { tasks: 1 });
    stop();
    events.emit("admission:batch", { tasks: 2 });
    expect(seen).toEqual([1]);
  });
});
