/**
 * `scheduler.on(...)` (docs/library.md#events): typed notifications of what this replica observed —
 * launches, each ending, retries, skipped and missed occurrences — and a listener that throws never
 * breaks the coordinator.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "../../src/index.js";
import type { SchedulerEventName } from "../../src/index.js";
import { createTestScheduler } from "../../src/testing.js";

const T0 = "2026-01-05T00:00:00Z";
const t0 = Date.parse(T0);
const MINUTE = 60_000;

describe("scheduler.on", () => {
  it("reports launches, endings and retries, and skipped and missed occurrences", async () => {
    const seen: string[] = [];
    let calls = 0;
    const scheduler = createTestScheduler({
      start: T0,
      handlers: {
        ok: () => "ok",
        flaky: () => {
          calls++;
          if (calls === 1) throw new Error("once");
          throw new NonRetryableError("twice");
        },
      },
    });
    const names: SchedulerEventName[] = [
      "run:launched",
      "run:succeeded",
      "run:failed",
      "run:retrying",
      "occurrence:skipped",
      "occurrence:missed",
    ];
    for (const name of names) {
      scheduler.on(name, (payload) => {
        seen.push(
          `${name} ${"run" in payload ? payload.run.status : "reason" in payload ? payload.reason : ""}`,
        );
      });
    }
    // A listener that throws is logged and ignored.
    scheduler.on("run:launched", () => {
      throw new Error("listener broke");
    });
    await scheduler.tasks.create({
      title: "ok",
      schedule: { type: "once", run_at: new Date(t0 + MINUTE).toISOString() },
      target: { kind: "handler", name: "ok" },
    });
    await scheduler.tasks.create({
      title: "flaky",
      schedule: { type: "once", run_at: new Date(t0 + MINUTE).toISOString() },
      target: { kind: "handler", name: "flaky" },
      options: { retry: { max_attempts: 3, initial: "PT1S" } },
    });
    await scheduler.advanceBy(3 * MINUTE);
    expect(seen.filter((e) => e.startsWith("run:succeeded"))).toEqual(["run:succeeded succeeded"]);
    expect(seen.filter((e) => e.startsWith("run:failed"))).toEqual(["run:failed failed"]);
    expect(seen.filter((e) => e.startsWith("run:retrying"))).toEqual(["run:retrying queued"]);
    expect(seen.filter((e) => e.startsWith("run:launched"))).toHaveLength(3);

    // A cron task whose replica was down for five fires: the older ones are missed (catch-up latest).
    await scheduler.tasks.create({
      title: "every minute",
      schedule: { type: "cron", cron: "* * * * *" },
      target: { kind: "handler", name: "ok" },
      options: { late_after: "PT1S" },
    });
    await scheduler.clock.set((scheduler.clock.now() + 6 * MINUTE) as never);
    await scheduler.advanceBy(1000);
    expect(seen).toContain("occurrence:missed down");
    await scheduler.stop();
  });
});
