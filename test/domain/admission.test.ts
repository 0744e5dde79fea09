/**
 * Admission (docs/semantics.md#the-life-of-an-occurrence): the exhaustive table of catch-up policy x overlap policy x active run x timing,
 * then the limits and edges (bounded passes, max_runs, end_at, once tasks, jitter, cancel_other within
 * one pass, the worked example of docs/semantics.md).
 */
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import { MAX_NOMINAL_PER_ADMISSION } from "../../src/domain/admission-due.js";
import type { ActiveRunView, Admission, Decision } from "../../src/domain/admission.js";
import { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "../../src/domain/options.js";
import type { CatchUpPolicy, OverlapPolicy } from "../../src/domain/options.js";
import type { ThreadId } from "../../src/domain/ids.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import {
  activeView,
  at,
  buildTask,
  hhmm,
  HOUR,
  MINUTE,
  options,
  OWNER,
  plus,
  schedule,
  SECOND,
  T0,
} from "./builders.js";

/** A compact, readable form of a decision: `queue 09:00`, `skip 09:05 overlap`, `miss 09:00..09:05 x2 down`. */
function summary(d: Decision): string {
  switch (d.kind) {
    case "queue":
      return `queue ${hhmm(d.scheduledFor)}`;
    case "skip":
      return `skip ${hhmm(d.scheduledFor)} ${d.reason}`;
    case "miss":
      return `miss ${hhmm(d.from)}..${hhmm(d.until)} x${d.count} ${d.reason}`;
    case "exclude":
      return `exclude ${hhmm(d.from)}..${hhmm(d.until)} x${d.count}`;
  }
}

function summarise(admission: Admission): { decisions: string[]; cancellations: string[] } {
  return {
    decisions: admission.decisions.map(summary),
    cancellations: admission.cancellations.map((c) => `${c.action} ${c.runId} (${c.reason})`),
  };
}

describe("admit: the table of catch-up x overlap x active run x timing", () => {
  // Fires at 09:00 and 09:05 every day (UTC); decided through 08:00. Default window (1 h) and late_after (60 s).
  const twiceAtNine = schedule({ type: "cron", cron: "0,5 9 * * *" }, at("2026-03-02T08:00:00Z"));
  const decidedThrough = at("2026-03-02T08:00:00Z");
  const NINE = at("2026-03-02T09:00:00Z");
  const NINE_05 = at("2026-03-02T09:05:00Z");
  const TOMORROW_NINE = at("2026-03-03T09:00:00Z");

  type ActiveCase = "none" | "running" | "queued";
  type Timing = "on time" | "late" | "outside window";

  const ACTIVE: Record<ActiveCase, { label: string; runs: ActiveRunView[] }> = {
    none: { label: "no active run", runs: [] },
    running: { label: "one running run", runs: [activeView("running")] },
    queued: { label: "one queued run", runs: [activeView("queued")] },
  };

  /**
   * docs/semantics.md#the-life-of-an-occurrence overlap, for the occurrence that is subject to it: what it becomes, and what happens to the
   * active run. Written out by hand, one entry per (policy, active run).
   */
  const OVERLAP: Record<OverlapPolicy, Record<ActiveCase, { as: string; cancel?: string }>> = {
    skip: {
      none: { as: "queue" },
      running: { as: "skip overlap" },
      queued: { as: "skip overlap" },
    },
    buffer_one: {
      none: { as: "queue" },
      running: { as: "queue" },
      queued: { as: "skip coalesced" },
    },
    buffer_all: { none: { as: "queue" }, running: { as: "queue" }, queued: { as: "queue" } },
    cancel_other: {
      none: { as: "queue" },
      running: { as: "queue", cancel: "request_cancel r-active (superseded)" },
      queued: { as: "queue", cancel: "cancel r-active (superseded)" },
    },
    allow_all: { none: { as: "queue" }, running: { as: "queue" }, queued: { as: "queue" } },
  };

  interface Row {
    name: string;
    catchUp: CatchUpPolicy;
    overlap: OverlapPolicy;
    active: ActiveCase;
    now: Instant;
    decisions: string[];
    cancellations: string[];
    decidedThrough: Instant;
    nextRunAt: Instant;
    admittedCount: number;
  }

  function expected(
    catchUp: CatchUpPolicy,
    overlap: OverlapPolicy,
    active: ActiveCase,
    timing: Timing,
  ): Omit<Row, "name" | "catchUp" | "overlap" | "active"> {
    const verdict = OVERLAP[overlap][active];
    const subject = (time: string): string =>
      verdict.as === "queue" ? `queue ${time}` : verdict.as.replace(" ", ` ${time} `);
    const cancelOf = verdict.cancel === undefined ? [] : [verdict.cancel];
    const queuedBy = (decisions: string[]): number =>
      decisions.filter((d) => d.startsWith("queue")).length;
    switch (timing) {
      case "on time": {
        const decisions = [subject("09:00")];
        return {
          now: plus(NINE, 10 * SECOND),
          decisions,
          cancellations: cancelOf,
          decidedThrough: NINE,
          nextRunAt: NINE_05,
          admittedCount: queuedBy(decisions),
        };
      }
      case "late": {
        // 09:00 is 7 min overdue and 09:05 2 min overdue, both inside the 1 h window.
        const byPolicy: Record<CatchUpPolicy, { decisions: string[]; cancellations: string[] }> = {
          latest: {
            decisions: ["miss 09:00..09:00 x1 down", subject("09:05")],
            cancellations: cancelOf,
          },
          // "whatever the overlap policy": both queue, and cancel_other cancels nothing.
          all: { decisions: ["queue 09:00", "queue 09:05"], cancellations: [] },
          none: { decisions: ["miss 09:00..09:05 x2 down"], cancellations: [] },
        };
        const { decisions, cancellations } = byPolicy[catchUp];
        return {
          now: at("2026-03-02T09:07:00Z"),
          decisions,
          cancellations,
          decidedThrough: NINE_05,
          nextRunAt: TOMORROW_NINE,
          admittedCount: queuedBy(decisions),
        };
      }
      case "outside window":
        return {
          now: at("2026-03-02T10:10:00Z"),
          decisions: ["miss 09:00..09:05 x2 window"],
          cancellations: [],
          decidedThrough: NINE_05,
          nextRunAt: TOMORROW_NINE,
          admittedCount: 0,
        };
    }
  }

  const TIMINGS: readonly Timing[] = ["on time", "late", "outside window"];
  const rows: Row[] = CATCH_UP_POLICIES.flatMap((catchUp) =>
    OVERLAP_POLICIES.flatMap((overlap) =>
      (Object.keys(ACTIVE) as ActiveCase[]).flatMap((active) =>
        TIMINGS.map((timing): Row => {
          const e = expected(catchUp, overlap, active, timing);
          const outcome = [...e.decisions, ...e.cancellations].join(", ");
          return {
            name: `catch-up ${catchUp}, overlap ${overlap}, ${ACTIVE[active].label}, ${timing}: ${outcome}`,
            catchUp,
            overlap,
            active,
            ...e,
          };
        }),
      ),
    ),
  );

  it("covers every combination once (3 x 5 x 3 x 3)", () => {
    expect(rows).toHaveLength(135);
    expect(new Set(rows.map((r) => r.name)).size).toBe(135);
  });

  it.each(rows)("$name", (row) => {
    const task = buildTask({
      schedule: twiceAtNine,
      decidedThrough,
      options: options({ overlap: row.overlap, catchUp: { policy: row.catchUp } }),
    });
    const admission = admit({ task, now: row.now, activeRuns: ACTIVE[row.active].runs });

    expect(summarise(admission)).toEqual({
      decisions: row.decisions,
      cancellations: row.cancellations,
    });
    expect(admission.task).toEqual({
      status: "enabled",
      nextRunAt: row.nextRunAt,
      decidedThrough: row.decidedThrough,
      admittedCount: row.admittedCount,
    });
    for (const d of admission.decisions) {
      if (d.kind !== "queue") continue;
      expect(d).toMatchObject({
        trigger: "scheduled",
        fireAt: d.scheduledFor,
        notBefore: d.scheduledFor,
        exclusive: row.overlap !== "allow_all",
        threadScope: `handler:${OWNER}`,
        threadId: null,
        idempotencyKey: `punctual:task-1:scheduled:${d.scheduledFor}`,
      });
    }
  });
});

describe("admit", () => {
  const every5 = schedule({ type: "interval", every: "PT5M" });

  it("decides nothing before the next nominal time and keeps the task's fields", () => {
    const task = buildTask({ schedule: every5 });
    const admission = admit({ task, now: plus(T0, 4 * MINUTE), activeRuns: [] });
    expect(admission.decisions).toEqual([]);
    expect(admission.task).toEqual({
      status: "enabled",
      nextRunAt: plus(T0, 5 * MINUTE),
      decidedThrough: T0,
      admittedCount: 0,
    });
  });

  it("decides a nominal time that falls exactly on now, on time", () => {
    const task = buildTask({ schedule: every5 });
    const admission = admit({ task, now: plus(T0, 5 * MINUTE), activeRuns: [] });
    expect(admission.decisions.map(summary)).toEqual(["queue 09:05"]);
    expect(admission.task.decidedThrough).toBe(plus(T0, 5 * MINUTE));
  });

  it("treats an occurrence exactly late_after old as on time, and one millisecond more as overdue", () => {
    const task = buildTask({ schedule: every5, options: options({ catchUp: { policy: "none" } }) });
    const fire = plus(T0, 5 * MINUTE);
    expect(admit({ task, now: plus(fire, MINUTE), activeRuns: [] }).decisions.map(summary)).toEqual(
      ["queue 09:05"],
    );
    expect(
      admit({ task, now: plus(fire, MINUTE + 1), activeRuns: [] }).decisions.map(summary),
    ).toEqual(["miss 09:05..09:05 x1 down"]);
  });

  it("misses an occurrence whose fire_at is older than the window, and keeps one exactly at its edge", () => {
    const task = buildTask({
      schedule: schedule({ type: "interval", every: "PT3H" }),
      options: options({ catchUp: { policy: "none" } }),
    });
    const fire = plus(T0, 3 * HOUR);
    expect(admit({ task, now: plus(fire, HOUR), activeRuns: [] }).decisions.map(summary)).toEqual([
      "miss 12:00..12:00 x1 down",
    ]);
    expect(
      admit({ task, now: plus(fire, HOUR + 1), activeRuns: [] }).decisions.map(summary),
    ).toEqual(["miss 12:00..12:00 x1 window"]);
  });

  describe("the worked example of docs/semantics.md (every 5 minutes, down from 10:00 to 13:00)", () => {
    const task = buildTask({ schedule: every5, decidedThrough: at("2026-03-02T09:55:00Z") });

    it("records 24 window misses, 11 down misses and queues 12:55 just before 13:00", () => {
      const admission = admit({ task, now: at("2026-03-02T12:59:59Z"), activeRuns: [] });
      expect(admission.decisions.map(summary)).toEqual([
        "miss 10:00..11:55 x24 window",
        "miss 12:00..12:50 x11 down",
        "queue 12:55",
      ]);
      expect(admission.task.decidedThrough).toBe(at("2026-03-02T12:55:00Z"));
      expect(admission.task.nextRunAt).toBe(at("2026-03-02T13:00:00Z"));
    });

    it("lets the on-time 13:00 run instead of 12:55 when it is already due (catch-up latest)", () => {
      const admission = admit({ task, now: at("2026-03-02T13:00:00Z"), activeRuns: [] });
      expect(admission.decisions.map(summary)).toEqual([
        "miss 10:00..11:55 x24 window",
        "miss 12:00..12:55 x12 down",
        "queue 13:00",
      ]);
    });
  });

  it("queues at most 100 overdue occurrences under catch-up all, oldest first, and misses the rest", () => {
    const every20s = schedule({ type: "interval", every: "PT20S" });
    const task = buildTask({
      schedule: every20s,
      options: options({ overlap: "allow_all", catchUp: { policy: "all" } }),
    });
    // 165 nominal times; the last 4 (0, 20, 40, 60 s old) are on time.
    const admission = admit({ task, now: plus(T0, 55 * MINUTE), activeRuns: [] });
    const queued = admission.decisions.filter((d) => d.kind === "queue");
    const misses = admission.decisions.filter((d) => d.kind === "miss");
    expect(queued).toHaveLength(104);
    expect(queued[0]?.scheduledFor).toBe(plus(T0, 20 * SECOND));
    expect(misses).toEqual([
      {
        kind: "miss",
        from: plus(T0, 101 * 20 * SECOND),
        until: plus(T0, 161 * 20 * SECOND),
        count: 61,
        reason: "down",
      },
    ]);
    expect(admission.task.admittedCount).toBe(104);
  });

  it("skips with buffer_full once 1,000 runs are queued under buffer_all", () => {
    const task = buildTask({ schedule: every5, options: options({ overlap: "buffer_all" }) });
    const queued = Array.from({ length: 999 }, (_, i) => activeView("queued", `q-${i}`));
    const admission = admit({ task, now: plus(T0, 10 * MINUTE), activeRuns: queued });
    // 09:05 is overdue: latest yields to the on-time 09:10, which is the 1,000th queued run.
    expect(admission.decisions.map(summary)).toEqual(["miss 09:05..09:05 x1 down", "queue 09:10"]);
    const full = admit({
      task,
      now: plus(T0, 5 * MINUTE),
      activeRuns: [...queued, activeView("queued", "q-999")],
    });
    expect(full.decisions.map(summary)).toEqual(["skip 09:05 buffer_full"]);
  });

  it("coalesces later on-time occurrences of one pass into the one buffered run (buffer_one)", () => {
    const task = buildTask({
      schedule: every5,
      options: options({ overlap: "buffer_one", lateAfterMs: HOUR }),
    });
    const admission = admit({
      task,
      now: plus(T0, 15 * MINUTE),
      activeRuns: [activeView("running")],
    });
    expect(admission.decisions.map(summary)).toEqual([
      "queue 09:05",
      "skip 09:10 coalesced",
      "skip 09:15 coalesced",
    ]);
  });

  it("supersedes the older of two on-time occurrences in one pass under cancel_other", () => {
    const task = buildTask({
      schedule: every5,
      options: options({ overlap: "cancel_other", lateAfterMs: HOUR }),
    });
    const admission = admit({
      task,
      now: plus(T0, 10 * MINUTE),
      activeRuns: [activeView("running", "r-1"), activeView("queued", "r-2")],
    });
    expect(summarise(admission)).toEqual({
      decisions: ["skip 09:05 superseded", "queue 09:10"],
      cancellations: ["request_cancel r-1 (superseded)", "cancel r-2 (superseded)"],
    });
    expect(admission.task.admittedCount).toBe(1);
  });

  // Was a domain bug, fixed: under cancel_other with catch-up all, an on-time occurrence supersedes only the run queued
  // last in the same pass: with 09:05 and 09:10 overdue (queued by catch-up all) and 09:15 on time,
  // admission queues 09:05, records 09:10 skipped (superseded) and queues 09:15, which then waits behind
  // the older 09:05 (per-task FIFO). docs/semantics.md#the-life-of-an-occurrence either queues every overdue occurrence "whatever the
  // overlap policy" (nothing superseded) or, under cancel_other, lets the newest run replace the older
  // ones (all superseded); it never supersedes a newer run while keeping an older one.
  // Expected: no run queued in the pass is older than one superseded in it; actual: 09:05 queued while
  // 09:10 is superseded.
  it("never supersedes a run while keeping an older one of the same pass (cancel_other, catch-up all)", () => {
    const task = buildTask({
      schedule: every5,
      options: options({ overlap: "cancel_other", catchUp: { policy: "all" } }),
    });
    const admission = admit({ task, now: plus(T0, 15 * MINUTE), activeRuns: [] });
    const superseded = admission.decisions
      .filter((d) => d.kind === "skip" && d.reason === "superseded")
      .map((d) => (d.kind === "miss" || d.kind === "exclude" ? d.from : d.scheduledFor));
    const keptOlder = admission.decisions
      .filter((d) => d.kind === "queue" && superseded.some((s) => d.scheduledFor < s))
      .map(summary);
    expect(keptOlder).toEqual([]);
    expect(admission.task.decidedThrough).toBe(plus(T0, 15 * MINUTE));
  });

  it("does not ask again to cancel a run already asked to stop (cancel_other)", () => {
    const task = buildTask({ schedule: every5, options: options({ overlap: "cancel_other" }) });
    const admission = admit({
      task,
      now: plus(T0, 5 * MINUTE),
      activeRuns: [activeView("running", "r-1", true)],
    });
    expect(summarise(admission)).toEqual({ decisions: ["queue 09:05"], cancellations: [] });
  });

  it("copies the bound thread and the agent server's scope into a queued run", () => {
    const task = buildTask({
      schedule: every5,
      target: { kind: "agent", server: "main", assistantId: "a", input: {} },
      context: { mode: "reuse_thread", threadId: "thread-7" as ThreadId },
    });
    const [decision] = admit({ task, now: plus(T0, 5 * MINUTE), activeRuns: [] }).decisions;
    expect(decision).toMatchObject({
      kind: "queue",
      threadScope: "agent:main",
      threadId: "thread-7",
    });
  });

  describe("bounds", () => {
    it("completes a recurring task when max_runs scheduled runs have been admitted", () => {
      const task = buildTask({
        schedule: schedule({ type: "interval", every: "PT5M", max_runs: 2 }),
        options: options({ overlap: "allow_all", lateAfterMs: HOUR }),
      });
      const admission = admit({ task, now: plus(T0, 20 * MINUTE), activeRuns: [] });
      expect(admission.decisions.map(summary)).toEqual(["queue 09:05", "queue 09:10"]);
      expect(admission.task).toEqual({
        status: "completed",
        nextRunAt: null,
        decidedThrough: plus(T0, 10 * MINUTE),
        admittedCount: 2,
      });
    });

    it("does not count skipped occurrences toward max_runs", () => {
      const task = buildTask({
        schedule: schedule({ type: "interval", every: "PT5M", max_runs: 1 }),
        options: options({ lateAfterMs: HOUR }),
      });
      const admission = admit({
        task,
        now: plus(T0, 10 * MINUTE),
        activeRuns: [activeView("running")],
      });
      expect(admission.decisions.map(summary)).toEqual([
        "skip 09:05 overlap",
        "skip 09:10 overlap",
      ]);
      expect(admission.task).toMatchObject({ status: "enabled", admittedCount: 0 });
    });

    it("completes a recurring task whose end_at has passed, leaving its active runs alone", () => {
      const task = buildTask({
        schedule: schedule({ type: "interval", every: "PT5M", end_at: "2026-03-02T09:10:00Z" }),
        options: options({ overlap: "buffer_all" }),
      });
      const admission = admit({
        task,
        now: plus(T0, 10 * MINUTE),
        activeRuns: [activeView("running")],
      });
      expect(admission.decisions.map(summary)).toEqual([
        "miss 09:05..09:05 x1 down",
        "queue 09:10",
      ]);
      expect(admission.cancellations).toEqual([]);
      expect(admission.task).toMatchObject({ status: "completed", nextRunAt: null });
    });

    it("works through a task far behind in bounded passes, queueing only in the last", () => {
      const perSecond = schedule({ type: "interval", every: "PT1S" });
      const task = buildTask({ schedule: perSecond });
      const now = plus(T0, 6 * HOUR);
      const first = admit({ task, now, activeRuns: [] });
      const firstCount = first.decisions.reduce((n, d) => n + (d.kind === "miss" ? d.count : 1), 0);
      expect(firstCount).toBe(MAX_NOMINAL_PER_ADMISSION);
      expect(first.decisions.some((d) => d.kind === "queue")).toBe(false);
      expect(first.task.decidedThrough).toBe(plus(T0, MAX_NOMINAL_PER_ADMISSION * SECOND));
      expect(first.task.nextRunAt).toBe(plus(T0, (MAX_NOMINAL_PER_ADMISSION + 1) * SECOND));

      const second = admit({ task: { ...task, ...first.task }, now, activeRuns: [] });
      expect(second.decisions.map(summary)).toEqual([
        `miss ${hhmm(plus(T0, (MAX_NOMINAL_PER_ADMISSION + 1) * SECOND))}..${hhmm(plus(now, -61 * SECOND))} x${6 * 3600 - MAX_NOMINAL_PER_ADMISSION - 61} down`,
        // The last 61 nominal times (14:59:00 to 15:00:00) are on time: the oldest of them runs and
        // overlap skip records the others.
        "queue 14:59",
        ...Array.from(
          { length: 60 },
          (_, i) => `skip ${hhmm(plus(now, (i - 59) * SECOND))} overlap`,
        ),
      ]);
    });
  });

  describe("once tasks (docs/semantics.md#task-statuses)", () => {
    const onceAt = (runAt: string): Task =>
      buildTask({ schedule: schedule({ type: "once", run_at: runAt }) });

    it("queues the occurrence and leaves the status to completion", () => {
      const admission = admit({
        task: onceAt("2026-03-02T10:00:00Z"),
        now: at("2026-03-02T10:00:00Z"),
        activeRuns: [],
      });
      expect(admission.decisions.map(summary)).toEqual(["queue 10:00"]);
      expect(admission.task).toEqual({
        status: "enabled",
        nextRunAt: null,
        decidedThrough: at("2026-03-02T10:00:00Z"),
        admittedCount: 1,
      });
    });

    it("fails the task with the reason in last_error when its occurrence is skipped", () => {
      const admission = admit({
        task: onceAt("2026-03-02T10:00:00Z"),
        now: at("2026-03-02T10:00:00Z"),
        activeRuns: [activeView("running", "manual-run")],
      });
      expect(admission.decisions.map(summary)).toEqual(["skip 10:00 overlap"]);
      expect(admission.task).toMatchObject({ status: "failed", nextRunAt: null });
      expect(admission.task.lastError).toMatch(/skipped.*overlap/);
    });

    it("fails the task with the reason in last_error when its occurrence is missed", () => {
      const admission = admit({
        task: onceAt("2026-03-02T10:00:00Z"),
        now: at("2026-03-02T12:00:00Z"),
        activeRuns: [],
      });
      expect(admission.decisions.map(summary)).toEqual(["miss 10:00..10:00 x1 window"]);
      expect(admission.task).toMatchObject({ status: "failed", nextRunAt: null });
      expect(admission.task.lastError).toMatch(/missed.*window/);
    });

    it("queues an overdue once occurrence inside the window under catch-up latest", () => {
      const admission = admit({
        task: onceAt("2026-03-02T10:00:00Z"),
        now: at("2026-03-02T10:30:00Z"),
        activeRuns: [],
      });
      expect(admission.decisions.map(summary)).toEqual(["queue 10:00"]);
      expect(admission.task.status).toBe("enabled");
      expect(admission.task.lastError).toBeUndefined();
    });
  });

  describe("jitter (docs/schedules.md#bounds-and-jitter)", () => {
    const jittered = schedule({ type: "interval", every: "PT1H", jitter: "PT10M" });

    it("fires each occurrence at a deterministic whole second in [scheduled_for, scheduled_for + jitter]", () => {
      const task = buildTask({ schedule: jittered, options: options({ lateAfterMs: HOUR }) });
      const now = plus(T0, 5 * HOUR);
      const decisions = admit({ task, now, activeRuns: [] }).decisions;
      const again = admit({ task, now, activeRuns: [] }).decisions;
      expect(again).toEqual(decisions);
      const fires = decisions.flatMap((d) =>
        d.kind === "miss" || d.kind === "exclude" ? [] : [d],
      );
      expect(fires.length).toBeGreaterThan(0);
      for (const d of fires) {
        expect(d.fireAt - d.scheduledFor).toBeGreaterThanOrEqual(0);
        expect(d.fireAt - d.scheduledFor).toBeLessThanOrEqual(10 * MINUTE);
        expect(d.fireAt % SECOND).toBe(0);
        if (d.kind === "queue") expect(d.notBefore).toBe(d.fireAt);
      }
      // Different nominal times get different offsets (not one fixed delay).
      expect(new Set(fires.map((d) => d.fireAt - d.scheduledFor)).size).toBeGreaterThan(1);
    });

    it("never moves fire_at to or past the next nominal time", () => {
      const wide = schedule({ type: "interval", every: "PT10S", jitter: "PT1H" });
      const task = buildTask({
        schedule: wide,
        options: options({ overlap: "allow_all", lateAfterMs: HOUR }),
      });
      const decisions = admit({ task, now: plus(T0, 10 * MINUTE), activeRuns: [] }).decisions;
      for (const d of decisions) {
        if (d.kind === "miss" || d.kind === "exclude") continue;
        expect(d.fireAt).toBeLessThan(d.scheduledFor + 10 * SECOND);
      }
    });

    it("classifies by fire_at: a jittered occurrence not yet fired is on time", () => {
      const task = buildTask({
        schedule: jittered,
        options: options({ catchUp: { policy: "none" } }),
      });
      const [decision] = admit({ task, now: plus(T0, HOUR), activeRuns: [] }).decisions;
      expect(decision?.kind).toBe("queue");
    });
  });
});
