/**
 * Sparse DAILY-or-finer recurrence rules (docs/schedules.md#speed): the lattice of INTERVAL units meets
 * the rule's day and time limits rarely (once in years, or never), and the next instance must still be
 * exact, found in bounded work. Compared with rrule-temporal, which walks every lattice period from
 * DTSTART; rrule.js is left out here because it skips lattice periods wrongly once BY parts limit a
 * finer-than-daily rule with an INTERVAL (`FREQ=MINUTELY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYHOUR=3;
 * BYMINUTE=5` from 2024-02-29 gives 2032-02-29 03:05, a time off the 7-minute lattice; 2028 is on it).
 * In UTC, so that instants are wall times: zones are the business of rrule-reference.test.ts.
 */
import "temporal-polyfill/global";
import fc from "fast-check";
import { RRuleTemporal } from "rrule-temporal";
import { describe, expect, it } from "vitest";
import { LimitExceededError, ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import { nextFireAfter, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import { SCHEDULE_WORK_STEPS, withWorkBudget } from "../../../src/domain/schedule/work-budget.js";
import { instant } from "../../../src/domain/time.js";

const YEAR_MS = 365.2425 * 86_400_000;
const iso = (at: number): string => new Date(at).toISOString();

function compact(at: number): string {
  return iso(at)
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

function parsed(text: string, after: number): ScheduleSpec {
  return parseSchedule(
    { type: "rrule", rrule: text },
    { referenceAt: instant(after), acceptEnded: true },
  );
}

/** Our next `count` instances after `after`, each found by its own search from the one before. */
function ours(spec: ScheduleSpec, after: number, count: number): number[] {
  const fires: number[] = [];
  let previous = instant(after);
  while (fires.length < count) {
    const next = nextFireAfter(spec, previous);
    if (next === null) break;
    fires.push(next);
    previous = next;
  }
  return fires;
}

describe("sparse DAILY-or-finer rrule schedules", () => {
  it("finds an instance 236 years away that the lattice reaches once a second has drifted round the day", () => {
    // 86,399 s is a day less a second: midnight comes back after 86,400 steps (rrule-temporal: 2260-07-21).
    const text =
      "DTSTART:20240101T000000Z\nRRULE:FREQ=SECONDLY;INTERVAL=86399;BYHOUR=0;BYMINUTE=0;BYSECOND=0";
    const after = Date.parse("2024-01-01T00:00:00Z") - 1;
    expect(ours(parsed(text, after), after, 3).map(iso)).toEqual([
      "2024-01-01T00:00:00.000Z",
      "2260-07-21T00:00:00.000Z",
      "2497-02-07T00:00:00.000Z",
    ]);
  });

  it("finds the 7-minute lattice on 29 February at 03:05 every 28 years", () => {
    const text =
      "DTSTART:20240229T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYHOUR=3;BYMINUTE=5";
    const after = Date.parse("2024-03-01T00:00:00Z");
    expect(
      nextOccurrences({ type: "rrule", rrule: text }, { after: new Date(after), count: 3 }).map(
        (d) => d.toISOString(),
      ),
    ).toEqual(["2028-02-29T03:05:00.000Z", "2056-02-29T03:05:00.000Z", "2084-02-29T03:05:00.000Z"]);
  });

  it("refuses a lattice that never meets its limits at once, within the work budget", () => {
    const never = [
      "DTSTART:20240101T000000Z\nRRULE:FREQ=SECONDLY;INTERVAL=2;BYSECOND=1",
      "DTSTART:20240101T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=1440;BYHOUR=1",
      "DTSTART:20240101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=168;BYDAY=TU",
      "DTSTART:20240101T000000Z\nRRULE:FREQ=SECONDLY;BYSECOND=60",
    ];
    // The work budget is the bound (a refusal past it would be a work_budget error, not this one); the
    // time it takes belongs to the bench.
    for (const text of never) {
      expect(() =>
        withWorkBudget(() => parsed(text, Date.parse("2024-01-01T00:00:00Z")), SCHEDULE_WORK_STEPS),
      ).toThrow(/no instance within 30 years of DTSTART/);
    }
  });

  it("searches the whole 400-year horizon of a stored rule in bounded work", () => {
    // A day and a second: the lattice drifts a second a day and is back at midnight after 86,400 steps.
    const text =
      "DTSTART:20240101T000000Z\nRRULE:FREQ=SECONDLY;INTERVAL=86401;BYHOUR=0;BYMINUTE=0;BYSECOND=0";
    const after = Date.parse("2024-01-01T00:00:00Z");
    const spec = parsed(text, after - 1);
    const started = performance.now();
    const next = withWorkBudget(() => nextFireAfter(spec, instant(after)), 2_000_000);
    const elapsed = performance.now() - started;
    expect(next === null ? null : iso(next)).toBe(iso(after + 86_400 * 86_401_000));
    console.log(
      `sparse rrule: a ${((86_400 * 86_401_000) / YEAR_MS).toFixed(0)}-year search took ${elapsed.toFixed(1)} ms`,
    );
  });

  it("gives rrule-temporal's next instances for random sparse rules, or refuses those it shows never fire", () => {
    const DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const;
    const INTERVALS: Record<string, readonly number[]> = {
      DAILY: [1, 2, 3, 7, 11, 400],
      HOURLY: [1, 5, 7, 23, 25, 49, 169],
      MINUTELY: [1, 7, 11, 59, 61, 1439, 1441, 2879],
      SECONDLY: [1, 2, 7, 59, 61, 3599, 3601, 43_199],
    };
    const list = <T>(arb: fc.Arbitrary<T>, max: number) =>
      fc.uniqueArray(arb, { minLength: 1, maxLength: max }).map((xs) => xs.join(","));
    const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { freq: 2, nil: null });
    const signed = (max: number) =>
      fc.integer({ min: 1, max }).chain((n) => fc.constantFrom(n, -n));
    const caseArb = fc
      .record({
        freq: fc.constantFrom("DAILY", "HOURLY", "HOURLY", "MINUTELY", "MINUTELY", "SECONDLY"),
        intervalIndex: fc.nat(),
        byMonth: sometimes(list(fc.integer({ min: 1, max: 12 }), 2)),
        byMonthDay: sometimes(list(signed(31), 2)),
        byYearDay: sometimes(list(signed(366), 2)),
        byDay: sometimes(list(fc.constantFrom(...DAYS), 2)),
        byHour: sometimes(list(fc.integer({ min: 0, max: 23 }), 2)),
        byMinute: sometimes(list(fc.integer({ min: 0, max: 59 }), 2)),
        bySecond: sometimes(list(fc.integer({ min: 0, max: 59 }), 2)),
        startDays: fc.integer({ min: 0, max: 4000 }),
        startSeconds: fc.integer({ min: 0, max: 86_399 }),
        afterYears: fc.double({ min: 0, max: 40, noNaN: true }),
        count: fc.integer({ min: 1, max: 4 }),
      })
      .map((r) => {
        const intervals = INTERVALS[r.freq] ?? [1];
        const parts = [`FREQ=${r.freq}`];
        const interval = intervals[r.intervalIndex % intervals.length] ?? 1;
        if (interval > 1) parts.push(`INTERVAL=${interval}`);
        if (r.byMonth !== null) parts.push(`BYMONTH=${r.byMonth}`);
        if (r.byMonthDay !== null) parts.push(`BYMONTHDAY=${r.byMonthDay}`);
        if (r.byYearDay !== null && r.freq !== "DAILY") parts.push(`BYYEARDAY=${r.byYearDay}`);
        if (r.byDay !== null) parts.push(`BYDAY=${r.byDay}`);
        if (r.byHour !== null) parts.push(`BYHOUR=${r.byHour}`);
        if (r.byMinute !== null) parts.push(`BYMINUTE=${r.byMinute}`);
        if (r.bySecond !== null) parts.push(`BYSECOND=${r.bySecond}`);
        const dtstartAt = Date.UTC(2020, 0, 1) + r.startDays * 86_400_000 + r.startSeconds * 1000;
        const after = Math.floor((dtstartAt + r.afterYears * YEAR_MS) / 1000) * 1000;
        return {
          text: `DTSTART:${compact(dtstartAt)}\nRRULE:${parts.join(";")}`,
          dtstartAt,
          after,
          count: r.count,
        };
      });

    const HORIZON_YEARS = 80;
    /** rrule-temporal's instants from DTSTART until `count` after `after` or the horizon; null if it gave up. */
    function reference(c: { text: string; dtstartAt: number; after: number; count: number }) {
      const stopAt = c.dtstartAt + HORIZON_YEARS * YEAR_MS;
      const found: number[] = [];
      let beyond = 0;
      try {
        new RRuleTemporal({ rruleString: c.text, maxIterations: 15_000 }).all((z) => {
          const at = z.epochMilliseconds;
          if (at > stopAt) return false;
          found.push(at);
          if (at > c.after) beyond++;
          return beyond < c.count;
        });
      } catch (error) {
        if (error instanceof Error && /Maximum/.test(error.message)) return null;
        throw error;
      }
      return { found, complete: beyond >= c.count, stopAt };
    }

    let compared = 0;
    let refused = 0;
    let unverified = 0;
    let worstMs = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const want = reference(c);
        let spec: ScheduleSpec;
        try {
          spec = parsed(c.text, c.after);
        } catch (error) {
          if (error instanceof LimitExceededError) throw error;
          if (!(error instanceof ValidationError)) throw error;
          expect(error.message, c.text).toMatch(/no instance.* within 30 years/);
          refused++;
          if (want === null) return;
          // Refused: the reference has no instance within 30 years of DTSTART, or none within 30
          // years after `after`.
          const rule = want.found.filter((at) => at <= c.dtstartAt + 30 * YEAR_MS);
          const since = Math.max(c.after, c.dtstartAt - 1);
          const recurrence = want.found.filter((at) => at > since && at <= since + 30 * YEAR_MS);
          expect(rule.length === 0 || recurrence.length === 0, c.text).toBe(true);
          return;
        }
        const started = performance.now();
        const got = ours(spec, c.after, c.count);
        worstMs = Math.max(worstMs, (performance.now() - started) / Math.max(1, got.length));
        if (want === null) {
          unverified++;
          return;
        }
        compared++;
        const expected = want.found.filter((at) => at > c.after).slice(0, c.count);
        const within = got.filter((at) => want.complete || at <= want.stopAt);
        expect(within.map(iso), `${c.text}\nafter ${iso(c.after)}`).toEqual(expected.map(iso));
      }),
      {
        numRuns: Number(process.env["RRULE_SPARSE_RUNS"] ?? 80),
        seed: Number(process.env["RRULE_SEED"] ?? 20261207),
      },
    );
    console.log(
      `sparse rrule reference: ${compared} compared, ${refused} refused, ${unverified} rrule-temporal could not expand; worst ${worstMs.toFixed(2)} ms per instance`,
    );
    expect(compared).toBeGreaterThan(Number(process.env["RRULE_SPARSE_RUNS"] ?? 80) / 3);
  }, 300_000);
});
