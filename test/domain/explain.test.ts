/**
 * `explain` as pure functions: the nominal times around an instant (with DST), and the verdict for each
 * shape of history, table by table.
 */
import { describe, expect, it } from "vitest";
import { EXPLAIN_VERDICTS, explainAt } from "../../src/domain/explain.js";
import {
  explainWindow,
  historyReachedWindow,
  lastNominalAtOrBefore,
} from "../../src/domain/explain-window.js";
import type { Explanation } from "../../src/domain/explain.js";
import type { RunId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import type { Task } from "../../src/domain/task.js";
import type { Instant } from "../../src/domain/time.js";
import {
  DAY,
  HOUR,
  MINUTE,
  SECOND,
  T0,
  at,
  buildRun,
  buildTask,
  plus,
  schedule,
} from "./builders.js";

const DAILY_9 = schedule({ type: "cron", cron: "0 9 * * *" });
const CREATED = plus(T0, -10 * DAY);

function daily(overrides: Partial<Task> = {}): Task {
  return buildTask({ schedule: DAILY_9, createdAt: CREATED, decidedThrough: T0, ...overrides });
}

function run(id: string, overrides: Partial<Run> = {}): Run {
  return buildRun({ id: id as RunId, ...overrides });
}

function explain(
  task: Task,
  instant: Instant,
  runs: readonly Run[] = [],
  now: Instant = plus(T0, HOUR),
): Explanation {
  return explainAt({
    task,
    at: instant,
    now,
    window: explainWindow(task, instant),
    runs,
    complete: true,
  });
}

describe("lastNominalAtOrBefore", () => {
  it.each([
    ["exactly a fire", DAILY_9, T0, T0],
    ["30 s after a fire", DAILY_9, plus(T0, 30 * SECOND), T0],
    ["1 s before a fire", DAILY_9, plus(T0, -SECOND), plus(T0, -DAY)],
    [
      "a monthly fire 2 weeks back (past the first 8-day window)",
      schedule({ type: "cron", cron: "0 0 1 * *" }),
      at("2026-03-15T12:00:00Z"),
      at("2026-03-01T00:00:00Z"),
    ],
    [
      "an interval",
      schedule({ type: "interval", every: "PT7M" }),
      plus(T0, 20 * MINUTE),
      plus(T0, 14 * MINUTE),
    ],
    [
      "a yearly fire nearly a year back",
      schedule({ type: "cron", cron: "0 0 1 1 *" }),
      at("2026-12-31T00:00:00Z"),
      at("2026-01-01T00:00:00Z"),
    ],
  ])("finds %s", (_name, spec, instant, expected) => {
    expect(lastNominalAtOrBefore(spec, instant)).toBe(expected);
  });

  it("finds nothing before a start_at or a once task's run_at", () => {
    const startsLater = schedule({
      type: "cron",
      cron: "0 9 * * *",
      start_at: "2026-03-10T00:00:00Z",
    });
    expect(lastNominalAtOrBefore(startsLater, T0)).toBeNull();
    const once = schedule({ type: "once", run_at: "2026-03-03T09:00:00Z" });
    expect(lastNominalAtOrBefore(once, T0)).toBeNull();
    expect(lastNominalAtOrBefore(once, at("2026-03-05T00:00:00Z"))).toBe(
      at("2026-03-03T09:00:00Z"),
    );
  });
});

describe("explainWindow", () => {
  it("gives the occurrence, the next one, their fire times and local wall times", () => {
    const window = explainWindow(daily(), plus(T0, 5 * HOUR));
    expect(window.occurrence).toMatchObject({
      scheduledFor: T0,
      fireAt: T0,
      wall: "2026-03-02T09:00:00",
      offset: "+00:00",
      note: null,
    });
    expect(window.next?.scheduledFor).toBe(plus(T0, DAY));
    expect(window.suppressed).toBeNull();
  });

  it("notes a DST gap: 02:30 in Europe/Berlin did not exist on 2026-03-29 and fires at 03:00", () => {
    const task = daily({
      schedule: schedule({ type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" }),
    });
    const window = explainWindow(task, at("2026-03-29T01:30:00Z"));
    expect(window.occurrence).toMatchObject({
      scheduledFor: at("2026-03-29T01:00:00Z"),
      wall: "2026-03-29T03:00:00",
      offset: "+02:00",
      note: { kind: "gap_shifted", nominalWall: "2026-03-29T02:30:00", collapsed: 0 },
    });
  });

  it("finds the suppressed second pass of a repeated wall time (fall back)", () => {
    const task = daily({
      schedule: schedule({ type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" }),
    });
    const window = explainWindow(task, at("2026-10-25T01:30:00Z"));
    expect(window.occurrence?.scheduledFor).toBe(at("2026-10-25T00:30:00Z"));
    expect(window.occurrence?.note).toEqual({ kind: "overlap_first" });
    expect(window.suppressed).toEqual({
      kind: "overlap_repeat",
      at: at("2026-10-25T01:30:00Z"),
      wall: "2026-10-25T02:30:00",
    });
  });
});

describe("historyReachedWindow", () => {
  const task = daily();
  const window = explainWindow(task, plus(T0, 5 * HOUR));
  it.each([
    ["a scheduled decision of the occurrence", run("a", { scheduledFor: T0 }), false],
    ["a newer scheduled decision", run("b", { scheduledFor: plus(T0, DAY) }), false],
    ["an older scheduled decision", run("c", { scheduledFor: plus(T0, -DAY) }), true],
    ["an older manual run", run("d", { scheduledFor: plus(T0, -DAY), trigger: "manual" }), false],
  ])("%s: %s", (_name, row, expected) => {
    expect(historyReachedWindow(row, window, plus(T0, 5 * HOUR))).toBe(expected);
  });
});

describe("explainAt: the occurrence's decision", () => {
  const launched = run("r-ok", {
    status: "succeeded",
    attempt: 1,
    launchedAt: plus(T0, 2 * SECOND),
    latenessMs: 2000,
    finishedAt: plus(T0, MINUTE),
  });
  it.each<[string, Run, string, RegExp]>([
    [
      "succeeded",
      launched,
      "launched",
      /launched as run r-ok at 2026-03-02 09:00:02 \+00:00 \(2\.0 s/,
    ],
    [
      "running, late",
      run("r-late", {
        status: "running",
        attempt: 1,
        launchedAt: plus(T0, 2 * MINUTE),
        latenessMs: 120_000,
        late: true,
      }),
      "launched",
      /120\.0 s after its fire time, late\); it is still running/,
    ],
    [
      "being launched",
      run("r-l", { status: "launching", attempt: 1 }),
      "launched",
      /being launched/,
    ],
    [
      "queued",
      run("r-q", { status: "queued" }),
      "queued",
      /queued as run r-q, waiting for its thread/,
    ],
    [
      "skipped for overlap",
      run("r-s", { status: "skipped", reason: "overlap" }),
      "skipped",
      /skipped \(record r-s\): the task still had an active run/,
    ],
    ["coalesced", run("r-c", { status: "skipped", reason: "coalesced" }), "skipped", /buffer_one/],
    [
      "queue timeout",
      run("r-t", { status: "skipped", reason: "queue_timeout" }),
      "skipped",
      /queue_timeout/,
    ],
    [
      "missed in a range while down",
      run("r-m", {
        scheduledFor: plus(T0, -3 * DAY),
        status: "missed",
        reason: "down",
        missedCount: 4,
        missedUntil: T0,
      }),
      "missed",
      /no replica admitted it in time.*covers 4 nominal times from 2026-02-27 09:00:00/,
    ],
    [
      "missed outside the window",
      run("r-w", { status: "missed", reason: "window", missedCount: 1, missedUntil: T0 }),
      "missed",
      /beyond the catch-up window \(record r-w\)/,
    ],
    [
      "cancelled by a pause",
      run("r-x", { status: "cancelled", reason: "task_paused" }),
      "cancelled",
      /cancelled before its launch.*paused/,
    ],
    [
      "failed",
      run("r-f", {
        status: "failed",
        reason: "target_failed",
        launchedAt: T0,
        error: "boom",
      }),
      "failed",
      /failed: the target reported a failure \(boom\)/,
    ],
    [
      "timed out",
      run("r-to", {
        status: "timed_out",
        reason: "run_timeout",
        launchedAt: T0,
        deadlineAt: plus(T0, HOUR),
      }),
      "timed_out",
      /timed out at its deadline 2026-03-02 10:00:00/,
    ],
  ])("%s", (_name, decision, verdict, message) => {
    const answer = explain(daily(), plus(T0, 30 * SECOND), [decision]);
    expect(answer.verdict).toBe(verdict);
    expect(answer.message).toMatch(message);
    expect(answer.run?.id).toBe(decision.id);
    expect(answer.occurrence?.scheduledFor).toBe(T0);
    expect(answer.nextOccurrence?.scheduledFor).toBe(plus(T0, DAY));
  });

  it("mentions a later backfill of a missed occurrence", () => {
    const missed = run("r-m", {
      status: "missed",
      reason: "window",
      missedCount: 1,
      missedUntil: T0,
    });
    const backfill = run("r-b", { trigger: "backfill", status: "succeeded", scheduledFor: T0 });
    const answer = explain(daily(), plus(T0, 5 * MINUTE), [backfill, missed]);
    expect(answer.verdict).toBe("missed");
    expect(answer.message).toMatch(/backfilled later as run r-b \(succeeded\)/);
  });
});

describe("explainAt: no decision", () => {
  it.each<[string, Task, Instant, Instant, string, RegExp]>([
    [
      "a future occurrence",
      daily(),
      plus(T0, DAY + HOUR),
      plus(T0, HOUR),
      "not_yet_decided",
      /in the future/,
    ],
    [
      "a due occurrence no replica admitted",
      daily({ decidedThrough: plus(T0, -HOUR) }),
      plus(T0, MINUTE),
      plus(T0, HOUR),
      "not_yet_decided",
      /due but not decided yet/,
    ],
    [
      "an instant before the task was created",
      daily({ createdAt: plus(T0, HOUR), decidedThrough: plus(T0, HOUR) }),
      T0,
      plus(T0, 2 * HOUR),
      "before_start",
      /created at 2026-03-02 10:00:00 \+00:00.*next occurrence is 2026-03-03 09:00:00/,
    ],
    [
      "an occurrence before the creation, asked after it",
      daily({ createdAt: plus(T0, HOUR), decidedThrough: plus(T0, HOUR) }),
      plus(T0, 2 * HOUR),
      plus(T0, 3 * HOUR),
      "before_start",
      /only nominal times after its creation fire/,
    ],
    [
      "an instant before start_at",
      daily({
        schedule: schedule({ type: "cron", cron: "0 9 * * *", start_at: "2026-03-10T00:00:00Z" }),
      }),
      T0,
      T0,
      "before_start",
      /starts at 2026-03-10 00:00:00/,
    ],
    [
      "an instant after end_at",
      daily({
        schedule: schedule(
          { type: "cron", cron: "0 9 * * *", end_at: "2026-03-01T12:00:00Z" },
          plus(T0, -10 * DAY),
        ),
      }),
      plus(T0, HOUR),
      plus(T0, HOUR),
      "after_end",
      /ended at 2026-03-01 12:00:00.*last occurrence, 2026-03-01 09:00:00 \+00:00, has no record/,
    ],
    [
      "a cancelled task",
      daily({ status: "cancelled", decidedThrough: plus(T0, -HOUR), nextRunAt: null }),
      plus(T0, MINUTE),
      plus(T0, HOUR),
      "after_end",
      /is cancelled/,
    ],
    [
      "a task past max_runs",
      daily({
        schedule: schedule({ type: "cron", cron: "0 9 * * *", max_runs: 3 }),
        status: "completed",
        admittedCount: 3,
        decidedThrough: plus(T0, -HOUR),
      }),
      plus(T0, MINUTE),
      plus(T0, HOUR),
      "after_end",
      /reached max_runs \(3\)/,
    ],
    [
      "a paused task",
      daily({ status: "paused", decidedThrough: plus(T0, -HOUR) }),
      plus(T0, MINUTE),
      plus(T0, HOUR),
      "paused",
      /paused.*decided when the task is resumed/,
    ],
    [
      "a decided occurrence whose record is gone",
      daily(),
      plus(T0, MINUTE),
      plus(T0, HOUR),
      "no_record",
      /no record of it remains/,
    ],
    [
      "a once task before its run_at",
      daily({ schedule: schedule({ type: "once", run_at: "2026-03-05T09:00:00Z" }) }),
      T0,
      T0,
      "no_occurrence",
      /Nothing was scheduled.*next occurrence is 2026-03-05 09:00:00/,
    ],
  ])("%s", (_name, task, instant, now, verdict, message) => {
    const answer = explain(task, instant, [], now);
    expect(answer.verdict).toBe(verdict);
    expect(answer.message).toMatch(message);
    expect(answer.taskStatus).toBe(task.status);
  });

  it("hides the next occurrence of a task that will never admit it", () => {
    const task = daily({ status: "cancelled", decidedThrough: plus(T0, -HOUR), nextRunAt: null });
    expect(explain(task, plus(T0, MINUTE)).nextOccurrence).toBeNull();
  });

  it("says when the record was beyond the history it read", () => {
    const task = daily();
    const instant = plus(T0, MINUTE);
    const answer = explainAt({
      task,
      at: instant,
      now: plus(T0, HOUR),
      window: explainWindow(task, instant),
      runs: [],
      complete: false,
    });
    expect(answer.verdict).toBe("no_record");
    expect(answer.message).toMatch(/newest 5000 runs/);
  });
});

describe("explainAt: manual runs and DST", () => {
  it("explains a manual run within a minute of the instant rather than the morning's fire", () => {
    const manual = run("r-man", {
      trigger: "manual",
      scheduledFor: plus(T0, 5 * HOUR),
      status: "running",
      launchedAt: plus(T0, 5 * HOUR),
      latenessMs: 0,
    });
    const morning = run("r-9", { status: "succeeded", launchedAt: T0 });
    const answer = explain(daily(), plus(T0, 5 * HOUR + 20 * SECOND), [manual, morning]);
    expect(answer.verdict).toBe("launched");
    expect(answer.run?.id).toBe("r-man");
    expect(answer.message).toMatch(/^The manual run triggered at 2026-03-02 14:00:00/);
  });

  it("prefers the scheduled decision when it is nearer", () => {
    const manual = run("r-man", { trigger: "manual", scheduledFor: plus(T0, 40 * SECOND) });
    const morning = run("r-9", { status: "succeeded", launchedAt: T0 });
    expect(explain(daily(), plus(T0, 10 * SECOND), [manual, morning]).run?.id).toBe("r-9");
  });

  const berlin = daily({
    schedule: schedule({ type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin" }),
    decidedThrough: at("2026-10-26T00:00:00Z"),
  });

  it("gives dst_gap for a fire moved to the transition, with its run", () => {
    const moved = run("r-gap", {
      scheduledFor: at("2026-03-29T01:00:00Z"),
      status: "succeeded",
      launchedAt: at("2026-03-29T01:00:01Z"),
      latenessMs: 1000,
    });
    const answer = explain(berlin, at("2026-03-29T01:30:00Z"), [moved], at("2026-03-30T00:00:00Z"));
    expect(answer.verdict).toBe("dst_gap");
    expect(answer.message).toMatch(
      /wall time 2026-03-29 02:30:00 did not exist.*2026-03-29 03:00:00 \+02:00; it was launched as run r-gap/,
    );
  });

  it("gives the run's own verdict when a gap-shifted fire was not launched", () => {
    const missed = run("r-gap", {
      scheduledFor: at("2026-03-29T01:00:00Z"),
      status: "missed",
      reason: "down",
      missedCount: 1,
      missedUntil: at("2026-03-29T01:00:00Z"),
    });
    const answer = explain(
      berlin,
      at("2026-03-29T01:30:00Z"),
      [missed],
      at("2026-03-30T00:00:00Z"),
    );
    expect(answer.verdict).toBe("missed");
    expect(answer.occurrence?.note?.kind).toBe("gap_shifted");
  });

  it("gives dst_repeat_suppressed for the second pass of a repeated wall time", () => {
    const first = run("r-first", {
      scheduledFor: at("2026-10-25T00:30:00Z"),
      status: "succeeded",
      launchedAt: at("2026-10-25T00:30:00Z"),
    });
    const answer = explain(berlin, at("2026-10-25T01:30:00Z"), [first], at("2026-10-26T00:00:00Z"));
    expect(answer.verdict).toBe("dst_repeat_suppressed");
    expect(answer.suppressed?.kind).toBe("overlap_repeat");
    expect(answer.run?.id).toBe("r-first");
    expect(answer.message).toMatch(/2026-10-25 02:30:00 happened twice.*first pass/);
  });

  it("gives dst_skipped for a wildcard job's wall time inside a gap", () => {
    const task = daily({
      schedule: schedule({ type: "cron", cron: "15 * * * *", timezone: "Europe/Berlin" }),
      decidedThrough: at("2026-03-30T00:00:00Z"),
    });
    // 02:15 did not exist on 2026-03-29 (the gap starts at 01:00Z); 01:15 CET (00:15Z) fired before it.
    const answer = explain(task, at("2026-03-29T01:10:00Z"), [], at("2026-03-30T00:00:00Z"));
    expect(answer.verdict).toBe("dst_skipped");
    expect(answer.suppressed).toEqual({
      kind: "gap_skipped",
      at: at("2026-03-29T01:00:00Z"),
      wall: "2026-03-29T02:15:00",
    });
    expect(answer.occurrence?.scheduledFor).toBe(at("2026-03-29T00:15:00Z"));
  });

  it("gives dst_skipped for a fixed-time job inside a jump of more than 3 hours (Apia, 2011)", () => {
    const task = buildTask({
      schedule: schedule(
        { type: "cron", cron: "0 12 * * *", timezone: "Pacific/Apia" },
        at("2011-12-01T00:00:00Z"),
      ),
      createdAt: at("2011-12-01T00:00:00Z"),
      decidedThrough: at("2012-01-05T00:00:00Z"),
    });
    const answer = explain(task, at("2011-12-30T12:00:00Z"), [], at("2012-01-05T00:00:00Z"));
    expect(answer.verdict).toBe("dst_skipped");
    expect(answer.suppressed?.kind).toBe("jump_skipped");
    expect(answer.suppressed?.wall).toBe("2011-12-30T12:00:00");
    expect(answer.message).toMatch(/more than 3 hours/);
  });

  it("knows every verdict it gives", () => {
    expect(new Set(EXPLAIN_VERDICTS).size).toBe(EXPLAIN_VERDICTS.length);
  });
});
