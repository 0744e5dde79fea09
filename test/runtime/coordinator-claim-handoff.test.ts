/**
 * A claim's runs are handed to their launches one by one. Should a hand-off throw (a tracer or a logger
 * of the user's that throws), the runs after it were claimed and never launched: they are handed back
 * (queued again, fenced by their tokens) and counted in a warn, not left claimed in silence until their
 * lease ends and a sweep reconciles them. The run whose hand-off threw may have started: it is left to
 * its lease and the reconciliation, never launched twice.
 */
import { describe, expect, it } from "vitest";
import { NO_SPAN } from "../../src/application/events/tracing.js";
import type { Tracer } from "../../src/application/events/tracing.js";
import { flushPromises } from "../../src/runtime/clock.js";
import { SECOND, createHarness } from "./harness.js";

/** A tracer whose `nth` launch span (1-based) throws. */
function tracerFailingLaunch(nth: number): Tracer {
  let launches = 0;
  return {
    recording: () => true,
    startSpan: (name) => {
      if (name === "punctual.launch" && ++launches === nth) throw new Error("tracer broke");
      return NO_SPAN;
    },
  };
}

describe("a claim's hand-off to launch", () => {
  it("hands back, with a warn, the claimed runs a failed hand-off left unlaunched", async () => {
    const h = createHarness({ tracer: tracerFailingLaunch(2) });
    const runAt = new Date(h.clock.now() + SECOND).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await h.create({ schedule: { type: "once", run_at: runAt } })).id);
    }
    await h.clock.advance(SECOND);
    await expect(h.coordinator.tick()).rejects.toThrow("tracer broke");
    await flushPromises();
    await h.coordinator.settle();

    const statuses = (await Promise.all(ids.map(async (id) => (await h.runs(id))[0]?.status)))
      .map(String)
      .sort();
    // One launched, one left to its lease (its hand-off threw), two handed back to the queue.
    expect(statuses).toEqual(["launching", "queued", "queued", "running"]);
    expect(h.launcher.calls).toHaveLength(1);
    const warned = h.logger.lines.filter(
      (line) => line.level === "warn" && line.msg.includes("handed back"),
    );
    expect(warned.map((line) => line.obj)).toEqual([expect.objectContaining({ runs: 2 })]);

    // The runs handed back are claimed again after the busy back-off and launched, each once.
    await h.advance(h.policy.busyBackoffMs);
    await h.coordinator.settle();
    expect(h.launcher.calls).toHaveLength(3);
    expect(new Set(h.launcher.calls.map((call) => call.run.id)).size).toBe(3);
  });
});
