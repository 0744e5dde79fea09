/**
 * `scheduler.on(...)` (docs/library.md#events): typed notifications of what this replica observed —
 * launches, each ending, retries, skipped and missed occurrences — and a listener that throws never
 * breaks the coordinator.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "../../src/index.js";
import type { SchedulerEventName } from "../../src/index.js";
import { createTestScheduler } from "../../src/testing.js";
import { LibraryEvents } from "../../src/application/events/library-notifications.js";
import { SchedulerEvents } from "../../src/application/events/internal-events.js";
import { VirtualClock } from "../../src/runtime/clock.js";
import { HOUR, SECOND, createHarness, leavePending } from "./harness.js";

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

describe("scheduler.on for a resume", () => {
  it("reports the occurrences a resume decides, as admission does", async () => {
    const scheduler = createTestScheduler({ start: T0, handlers: { ok: () => "ok" } });
    const missed: unknown[] = [];
    scheduler.on("occurrence:missed", (payload) => missed.push(payload));
    const created = await scheduler.tasks.create({
      title: "every minute",
      schedule: { type: "cron", cron: "* * * * *" },
      target: { kind: "handler", name: "ok" },
    });
    const id = created.task.id;
    await scheduler.tasks.pause(id);
    await scheduler.advanceBy(5 * MINUTE + SECOND);
    expect(missed).toEqual([]);
    // Paused through five fires: resumed without catch-up, they are one missed range, reason paused.
    await scheduler.tasks.resume(id, { catch_up: "none" });
    expect(missed).toEqual([expect.objectContaining({ task_id: id, count: 5, reason: "paused" })]);
    await scheduler.stop();
  });
});

describe("scheduler.on('replica:lost')", () => {
  it("is sent by the replica whose sweep finds another silent, with what it settled", async () => {
    const events = new SchedulerEvents();
    const library = new LibraryEvents(() => undefined);
    library.connect(events);
    const lost: unknown[] = [];
    library.on("replica:lost", (payload) => lost.push(payload));
    const policy = { leaseSeconds: 30 };
    const b = createHarness({ start: T0, policy, replicaId: "replica-b", events });
    const a = createHarness({
      store: b.store,
      clock: new VirtualClock(t0),
      policy,
      replicaId: "replica-a",
    });
    a.launcher.behaviour = leavePending;
    await b.create({ schedule: { type: "interval", every: "PT1H" } });
    await b.create({
      schedule: { type: "interval", every: "PT1H" },
      target: { kind: "webhook", url: "https://example.test/hook" },
    });
    // A claims both (a handler run and a webhook run) and stalls in its launcher.
    await a.at(t0 + HOUR);
    await b.at(t0 + HOUR + 9 * SECOND);
    expect(lost).toEqual([]);
    // Silent for the liveness timeout: both claims reconciled ("unknown": treated as launched), and the
    // handler run, which only A could have been running, lost.
    await b.at(t0 + HOUR + 11 * SECOND);
    expect(lost).toEqual([{ replica_id: "replica-a", claims: 2, runs: 1 }]);
    expect(b.logger.at("warn")).toContain("a replica went silent: its work was taken over");
    // Nothing of A's is left to settle: not reported again.
    await b.at(t0 + HOUR + 30 * SECOND);
    expect(lost).toHaveLength(1);
  });
});
