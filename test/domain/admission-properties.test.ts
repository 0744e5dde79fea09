/**
 * Properties of admission (docs/semantics.md#guarantees, docs/semantics.md#the-life-of-a-run, docs/semantics.md#the-life-of-an-occurrence) over interval, cron and once schedules, random
 * options and random active runs, across sequences of admissions with increasing `now`:
 * - a nominal time is never decided twice;
 * - nothing is lost: every nominal time up to `decided_through` has exactly one decision;
 * - a `missed` range's count equals the nominal times it covers, and so does an `excluded` one;
 * - the task's schedule fields stay consistent (`next_run_at`, `admitted_count`, `max_runs`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { admit } from "../../src/domain/admission.js";
import type { ActiveRunView, AdmissionMode, Decision } from "../../src/domain/admission.js";
import type { RunId } from "../../src/domain/ids.js";
import { CATCH_UP_POLICIES, OVERLAP_POLICIES } from "../../src/domain/options.js";
import { nextAfter } from "../../src/domain/schedule/next-after.js";
import { nextDueAfter } from "../../src/domain/schedule/next-fire.js";
import { parseSchedule } from "../../src/domain/schedule/parse-schedule.js";
import type { ScheduleSpec } from "../../src/domain/schedule/schedule-types.js";
import type { Task } from "../../src/domain/task.js";
import { instant } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { buildTask, DAY, HOUR, MINUTE, options, plus, schedule, SECOND, T0 } from "./builders.js";

/** A schedule input (public shape) with its typical period, used to scale the steps of `now`. */
interface ScheduleCase {
  readonly input: Record<string, unknown>;
  readonly periodMs: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

const jitterArb = fc.constantFrom(0, 0, 10, 600);

/** No exclusion mostly; else dates, a range and day rules around T0 (Monday 2026-03-02). */
const excludeArb = fc.constantFrom<readonly unknown[] | null>(
  null,
  null,
  ["2026-03-02"],
  [{ from: "2026-03-03", to: "2026-03-04" }, "2026-03-06"],
  [{ days: "* * sat,sun" }],
  [{ days: "*/2 * *" }],
);

const intervalArb: fc.Arbitrary<ScheduleCase> = fc
  .record({
    everyS: fc.constantFrom(20, 300, 1020, 3600),
    startPeriods: fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }),
    endPeriods: fc.option(fc.integer({ min: 6, max: 80 }), { nil: null }),
    maxRuns: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    jitterS: jitterArb,
    exclude: excludeArb,
  })
  .map(({ everyS, startPeriods, endPeriods, maxRuns, jitterS, exclude }) => ({
    periodMs: everyS * SECOND,
    input: {
      type: "interval",
      every: everyS,
      jitter: jitterS,
      ...(exclude === null ? {} : { exclude }),
      ...(startPeriods === null ? {} : { start_at: iso(T0 + startPeriods * everyS * SECOND) }),
      ...(endPeriods === null ? {} : { end_at: iso(T0 + endPeriods * everyS * SECOND + 1) }),
      ...(maxRuns === null ? {} : { max_runs: maxRuns }),
    },
  }));

const CRONS: readonly { cron: string; timezone: string; periodMs: number }[] = [
  { cron: "*/20 * * * * *", timezone: "UTC", periodMs: 20 * SECOND },
  { cron: "*/5 * * * *", timezone: "Europe/Berlin", periodMs: 5 * MINUTE },
  { cron: "0 * * * *", timezone: "America/New_York", periodMs: HOUR },
  { cron: "0,5 9 * * *", timezone: "UTC", periodMs: 12 * HOUR },
  // Crosses the US spring-forward gap of 8 March 2026 (fixed-time job in the gap).
  { cron: "30 2 * * *", timezone: "America/New_York", periodMs: DAY },
];

const cronArb: fc.Arbitrary<ScheduleCase> = fc
  .record({
    which: fc.constantFrom(...CRONS),
    maxRuns: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    jitterS: jitterArb,
    exclude: excludeArb,
  })
  .map(({ which, maxRuns, jitterS, exclude }) => ({
    periodMs: which.periodMs,
    input: {
      type: "cron",
      cron: which.cron,
      timezone: which.timezone,
      jitter: jitterS,
      ...(exclude === null ? {} : { exclude }),
      ...(maxRuns === null ? {} : { max_runs: maxRuns }),
    },
  }));

const onceArb: fc.Arbitrary<ScheduleCase> = fc.integer({ min: 1, max: 600 }).map((minutes) => ({
  periodMs: HOUR,
  input: { type: "once", run_at: iso(T0 + minutes * MINUTE) },
}));

const optionsArb = fc.record({
  overlap: fc.constantFrom(...OVERLAP_POLICIES),
  policy: fc.constantFrom(...CATCH_UP_POLICIES),
  windowMs: fc.constantFrom(MINUTE, HOUR, DAY),
  lateAfterMs: fc.constantFrom(0, SECOND, MINUTE, 10 * MINUTE),
});

const activeRunsArb: fc.Arbitrary<ActiveRunView[]> = fc
  .array(
    fc.record({
      status: fc.constantFrom("queued" as const, "launching" as const, "running" as const),
      cancelRequested: fc.boolean(),
    }),
    { maxLength: 3 },
  )
  .map((runs) => runs.map((r, i) => ({ id: `active-${i}` as RunId, ...r })));

const modeArb: fc.Arbitrary<AdmissionMode> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "scheduled" } as const) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...CATCH_UP_POLICIES)
      .map((catchUp) => ({ kind: "resume", catchUp }) as const),
  },
);

/** One admission call: how far `now` moves (in periods/8) and what the task's runs look like. */
const stepArb = fc.record({
  eighths: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 240 })),
  extraMs: fc.integer({ min: 0, max: 59 * SECOND }),
  activeRuns: activeRunsArb,
  mode: modeArb,
});

const scenarioArb = fc.record({
  schedule: fc.oneof({ weight: 3, arbitrary: intervalArb }, cronArb, onceArb),
  options: optionsArb,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 6 }),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

/** The nominal times in (after, through], in order. */
function nominalTimes(spec: ScheduleSpec, after: Instant, through: Instant): Instant[] {
  const times: Instant[] = [];
  let current = nextAfter(spec, after);
  while (current !== null && current <= through) {
    times.push(current);
    current = nextAfter(spec, current);
  }
  return times;
}

/** The nominal times a decision stands for; asserts a miss or exclude range's bounds and count. */
function coveredBy(spec: ScheduleSpec, decision: Decision): Instant[] {
  if (decision.kind !== "miss" && decision.kind !== "exclude") return [decision.scheduledFor];
  const times = nominalTimes(spec, instant(decision.from - 1), decision.until);
  expect(times[0], "a miss range starts on a nominal time").toBe(decision.from);
  expect(times.at(-1), "a miss range ends on a nominal time").toBe(decision.until);
  expect(decision.count, "a miss range's count equals the nominal times it covers").toBe(
    times.length,
  );
  return times;
}

/** What the generated scenarios exercised, to check that the properties are not vacuous. */
const seen = new Set<string>();

/** Replays a scenario, asserting the properties after each admission; returns what was decided. */
function replay(scenario: Scenario): { task: Task; decided: Instant[]; start: Instant } {
  // Exclusions may leave no fire before end_at: refused at create, but a calendar edit can do it.
  const spec =
    "exclude" in scenario.schedule.input
      ? parseSchedule(scenario.schedule.input, { referenceAt: T0, checkReachable: false })
      : schedule(scenario.schedule.input);
  const o = scenario.options;
  let task = buildTask({
    schedule: spec,
    options: options({
      overlap: o.overlap,
      catchUp: { policy: o.policy, windowMs: o.windowMs },
      lateAfterMs: o.lateAfterMs,
    }),
  });
  const start = task.decidedThrough;
  const decided = new Set<number>();
  let now = T0;
  for (const step of scenario.steps) {
    if (task.status !== "enabled") break;
    now = plus(now, Math.floor((step.eighths * scenario.schedule.periodMs) / 8) + step.extraMs);
    const before = task;
    const admission = admit({ task, now, activeRuns: step.activeRuns, mode: step.mode });
    let queued = 0;
    for (const decision of admission.decisions) {
      if (decision.kind === "queue") queued++;
      seen.add(decision.kind === "queue" ? "queue" : `${decision.kind} ${decision.reason}`);
      for (const time of coveredBy(spec, decision)) {
        expect(decided.has(time), `nominal time ${iso(time)} decided twice`).toBe(false);
        expect(time).toBeGreaterThan(before.decidedThrough);
        expect(time).toBeLessThanOrEqual(now);
        decided.add(time);
      }
    }
    task = { ...task, ...admission.task };
    expect(task.decidedThrough).toBeGreaterThanOrEqual(before.decidedThrough);
    expect(task.decidedThrough).toBeLessThanOrEqual(Math.max(now, before.decidedThrough));
    expect(task.admittedCount).toBe(before.admittedCount + queued);
    if (spec.maxRuns !== null) expect(task.admittedCount).toBeLessThanOrEqual(spec.maxRuns);
    if (task.nextRunAt === null) {
      expect(task.status).not.toBe("paused");
    } else {
      expect(task.status).toBe("enabled");
      expect(task.nextRunAt).toBe(nextDueAfter(spec, task.decidedThrough));
    }
  }
  return { task, decided: [...decided].sort((a, b) => a - b) as Instant[], start };
}

/** Nothing lost: the decided times are exactly the nominal times in (start, decided_through]. */
function assertNothingLost(result: ReturnType<typeof replay>): void {
  const expected = nominalTimes(result.task.schedule, result.start, result.task.decidedThrough);
  expect(result.decided).toEqual(expected);
}

describe("admit (properties)", () => {
  it("never decides a nominal time twice, loses none, and counts every missed range exactly", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        assertNothingLost(replay(scenario));
      }),
      { numRuns: 600 },
    );
    for (const kind of [
      "queue",
      "skip overlap",
      "skip coalesced",
      "skip superseded",
      "miss down",
      "miss paused",
      "miss window",
      "exclude excluded",
    ]) {
      expect(seen, `no scenario produced ${kind}`).toContain(kind);
    }
  });

  it("decides every nominal time up to now once admission has caught up (enabled, not ended)", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const result = replay(scenario);
        const { task } = result;
        if (task.status !== "enabled" || task.nextRunAt === null) return;
        // After the last call, no nominal time before next_run_at is left undecided.
        const now = scenario.steps.reduce<number>(
          (t, s) => t + Math.floor((s.eighths * scenario.schedule.periodMs) / 8) + s.extraMs,
          T0,
        );
        expect(task.nextRunAt).toBeGreaterThan(now);
      }),
      { numRuns: 150 },
    );
  });
});
