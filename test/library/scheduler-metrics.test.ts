/**
 * `scheduler.metrics()` (docs/operations.md#metrics-and-probes): a library user who serves their own `/metrics`
 * gets the same series as `punctual worker --metrics-port`, from the scheduler's events and the store's
 * queue, on the virtual clock: runs by outcome, reason and target kind, lateness by target kind, the
 * fleet's queue and the oldest ready run's age, the heartbeat's age, and no task id as a label.
 */
import { describe, expect, it } from "vitest";
import { SchedulerMetrics } from "../../src/adapters/metrics/scheduler-metrics.js";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import { instant } from "../../src/domain/time.js";
import { createTestScheduler } from "../../src/testing.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const MINUTE = 60_000;

function sample(body: string, series: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("scheduler.metrics()", () => {
  it("counts runs by outcome and target kind and reads the queue at scrape time", async () => {
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        ok: () => "ok",
        broken: () => {
          throw new Error("no");
        },
      },
      policy: { maxConcurrentRuns: 1 },
    });
    try {
      const metrics = await scheduler.metrics({ processMetrics: false });
      expect(await scheduler.metrics()).toBe(metrics);
      const at = new Date(t0 + MINUTE).toISOString();
      for (const [title, name] of [
        ["ok", "ok"],
        ["broken", "broken"],
      ] as const) {
        await scheduler.tasks.create({
          title,
          schedule: { type: "once", run_at: at },
          target: { kind: "handler", name },
        });
      }
      // Before the fire: nothing queued yet, the heartbeat written by the first pass (a pass beats only
      // when a third of the liveness timeout has passed since the last beat, so the second did not).
      await scheduler.advanceBy(1000);
      let body = (await metrics.scrape()).body;
      expect(sample(body, "punctual_queue_runs")).toBe(0);
      expect(sample(body, "punctual_budget_runs")).toBe(1);
      expect(sample(body, "punctual_store_up")).toBe(1);
      expect(sample(body, "punctual_heartbeat_age_seconds")).toBe(1);

      await scheduler.advanceBy(2 * MINUTE);
      body = (await metrics.scrape()).body;
      expect(body).toContain("# TYPE punctual_runs_total counter");
      expect(
        sample(body, 'punctual_runs_total{status="succeeded",reason="",target_kind="handler"}'),
      ).toBe(1);
      expect(
        sample(
          body,
          'punctual_runs_total{status="failed",reason="target_failed",target_kind="handler"}',
        ),
      ).toBe(1);
      expect(sample(body, 'punctual_launch_lateness_seconds_count{target_kind="handler"}')).toBe(2);
      expect(sample(body, "punctual_queue_runs")).toBe(0);
      expect(sample(body, "punctual_active_runs")).toBe(0);
      expect(body).not.toContain("task_id=");
      expect((await metrics.scrape()).contentType).toContain("text/plain");
    } finally {
      await scheduler.stop();
    }
  });

  it("reads the queue once per scrape, shows the oldest ready run's age, and reports a store it cannot read", async () => {
    const events = new SchedulerEvents();
    const metrics = new SchedulerMetrics({ processMetrics: false });
    const now = t0 + 10 * MINUTE;
    let reads = 0;
    let failing = false;
    metrics.listenTo(events, {
      inFlight: () => 2,
      budget: () => 8,
      now: () => now,
      queue: () => {
        reads++;
        if (failing) return Promise.reject(new Error("connection refused"));
        return Promise.resolve({ queued: 5, oldestReadyAt: instant(now - 30_000), active: 3 });
      },
    });
    events.emit("coordinator:heartbeat", { at: now - 1500 });
    events.emit("store:failed", { operation: "write" });
    let body = (await metrics.scrape()).body;
    expect(reads).toBe(1);
    expect(sample(body, "punctual_queue_runs")).toBe(5);
    expect(sample(body, "punctual_queue_oldest_ready_age_seconds")).toBe(30);
    expect(sample(body, "punctual_active_runs")).toBe(3);
    expect(sample(body, "punctual_launches_in_flight")).toBe(2);
    expect(sample(body, "punctual_budget_runs")).toBe(8);
    expect(sample(body, "punctual_heartbeat_age_seconds")).toBe(1.5);
    expect(sample(body, 'punctual_store_errors_total{operation="write"}')).toBe(1);
    expect(sample(body, "punctual_store_up")).toBe(1);
    failing = true;
    body = (await metrics.scrape()).body;
    expect(reads).toBe(2);
    expect(sample(body, "punctual_store_up")).toBe(0);
  });
});
