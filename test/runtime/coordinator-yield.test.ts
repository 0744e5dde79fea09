/**
 * The coordinator never keeps the event loop to itself (found by the bench: with a store that answers
 * at once, a burst of due tasks starved HTTP, timers and signals until every batch was admitted). Between
 * admission rounds and between ticks it lets callbacks queued meanwhile run: a callback queued right
 * after `start()` runs while most of the burst is still waiting to be admitted.
 */
import { describe, expect, it } from "vitest";
import type { Instant } from "../../src/domain/time.js";
import { MINUTE, createHarness } from "./harness.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const TASKS = 600;

describe("Coordinator and the event loop", () => {
  it("lets a callback queued after start run before a burst of admissions is done", async () => {
    const h = createHarness({
      start: T0,
      coordinator: { admissionBatch: 20, admissionRounds: 3, tickMs: 1000 },
    });
    for (let i = 0; i < TASKS; i++) {
      await h.create({ schedule: { type: "once", run_at: new Date(t0 + MINUTE).toISOString() } });
    }
    let admitted = 0;
    const admitDue = h.dispatch.admission.admitDue.bind(h.dispatch);
    h.dispatch.admission.admitDue = async (now: Instant, limit: number) => {
      const report = await admitDue(now, limit);
      admitted += report.tasks;
      return report;
    };
    await h.clock.set((t0 + MINUTE) as Instant);

    h.coordinator.start();
    const seen = await new Promise<number>((resolve) => {
      setImmediate(() => {
        resolve(admitted);
      });
    });
    await h.coordinator.stop();

    // The memory store answers every call at once (promises only): without the yields, the whole burst
    // (30 rounds of 20) would be admitted before any other callback got a turn.
    expect(seen).toBeLessThan(TASKS);
  });
});
