/**
 * The cron engine judged by a literal reading of SPEC 3.1 in many zones (./cron-oracle.ts: `Intl` and
 * minute-by-minute walks, no code shared with src/domain/schedule). The engine is driven the way the
 * service drives it: `parseSchedule`, then `nextFireAfter` from one fire to the next (the public
 * `nextOccurrences` is checked on the same inputs). Every property ends on an assertion: a schedule the
 * engine refuses is checked against the oracle too (it must find no fire where the engine found none).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import type { Instant } from "../../../src/domain/time.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import { nextFireAfter, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import type { ScheduleSpec } from "../../../src/domain/schedule/schedule-spec.js";
import {
  DAY,
  DST_LIMIT,
  HOUR,
  MINUTE,
  SECOND,
  changesBetween,
  oracleMatchesADate,
  offsetAt,
  oracleFires,
  wallAt,
} from "./cron-oracle.js";

const ZONES = [
  "America/New_York",
  "Europe/Berlin",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
  "Pacific/Chatham",
  "America/Santiago",
  "Africa/Casablanca",
  "Asia/Tehran",
  "Pacific/Apia",
  "Europe/Dublin",
  "UTC",
  "Etc/GMT+12",
] as const;

// ---------------------------------------------------------------------------------------------------
// The engine, as the service calls it.

/** One expression as a string, several as the list `cron` takes. */
function cronField(expressions: readonly string[]): string | string[] {
  const [only] = expressions;
  return expressions.length === 1 && only !== undefined ? only : [...expressions];
}

function engineFires(
  expressions: readonly string[],
  zone: string,
  after: number,
  until: number,
): number[] {
  const spec = parseSchedule(
    { type: "cron", cron: cronField(expressions), timezone: zone },
    { referenceAt: after as Instant },
  );
  return specFires(spec, after, until);
}

/** The engine's fires of `spec` after `after`, up to `until`, one `nextFireAfter` at a time. */
function specFires(spec: ScheduleSpec, after: number, until: number): number[] {
  const fires: number[] = [];
  let at = nextFireAfter(spec, after as Instant);
  while (at !== null && at <= until) {
    fires.push(at);
    at = nextFireAfter(spec, at);
  }
  return fires;
}

function iso(values: readonly number[]): string[] {
  return values.map((v) => new Date(v).toISOString());
}

// ---------------------------------------------------------------------------------------------------
// Inputs.

/** Every offset change of the zone in 2025-2030 (found with Intl). */
const transitionsByZone = new Map<string, number[]>();
function transitionsOf(zone: string): number[] {
  let list = transitionsByZone.get(zone);
  if (list === undefined) {
    list = changesBetween(zone, Date.UTC(2025, 0, 1), Date.UTC(2031, 0, 1)).map((c) => c.at);
    transitionsByZone.set(zone, list);
  }
  return list;
}

/** Whether the zone's offset changes in `(after, until]` (asked of Intl, hour by hour). */
function crossesTransition(zone: string, after: number, until: number): boolean {
  return changesBetween(zone, after + 1, until + 1).length > 0;
}

const NAMED_EXPRESSIONS = [
  "30 2 * * *",
  "0 1-3 * * *",
  "*/15 * * * *",
  "0 0 L * *",
  "0 9 * * 1-5",
  "0 0 29 2 *",
  "0 9 * * mon#2",
  "0 2 * * sun#1",
  "0,30 2 * * *",
  "*/30 1 * * *",
  "*/10 2 * * *",
  "0 * * * *",
  "30 1 * * *",
  "0 0 * * *",
  "30 23 * * *",
  "0 3 * * *",
  "15 2 * * *",
  "45 2 * * *",
  "0 2,3 * * *",
  "@daily",
  "@hourly",
  "@weekly",
  "@monthly",
  "0 0 LW * *",
  "0 12 15W * *",
  "0 9 L-2 * *",
  "0 9 ? * 5L",
  "0 9 1 * mon",
  "0 9 */2 * mon",
  "30 0 * * 0",
  "0 0 * * 6",
  "0 23 * * 6",
  "15,45 0-3 * * *",
  "0 */7 * * *",
  "*/90 * * * *",
  "0 0-5/2 * * *",
  "30 45 2 * * *",
  "*/20 30 1 * * *",
  "0 */2 * * *",
  "59 23 * * *",
];

const step = fc.constantFrom(1, 2, 3, 5, 7, 10, 15, 20, 30, 45, 90);
const minuteField = fc.oneof(
  fc.constant("*"),
  step.map((s) => `*/${s}`),
  fc.integer({ min: 0, max: 59 }).map(String),
  fc
    .tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
    .map(([a, b]) => `${Math.min(a, b)},${Math.max(a, b) === Math.min(a, b) ? "" : Math.max(a, b)}`)
    .map((t) => t.replace(/,$/, "")),
  fc
    .tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), step)
    .map(([a, b, s]) => `${Math.min(a, b)}-${Math.max(a, b)}/${s}`),
);
const dstHour = fc.constantFrom(0, 1, 2, 3, 23, 22, 4, 12);
const hourField = fc.oneof(
  fc.constant("*"),
  step.map((s) => `*/${s}`),
  dstHour.map(String),
  fc.tuple(dstHour, dstHour).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
  fc
    .tuple(dstHour, dstHour)
    .map(([a, b]) => (a === b ? String(a) : `${Math.min(a, b)},${Math.max(a, b)}`)),
);
const domField = fc.oneof(
  { weight: 6, arbitrary: fc.constant("*") },
  { weight: 1, arbitrary: fc.constant("?") },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 31 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("L", "LW", "L-1", "L-3", "1W", "15W", "30W", "31W") },
  { weight: 1, arbitrary: fc.constantFrom("*/2", "1-7", "8-14", "1,15", "29-31") },
);
const dowField = fc.oneof(
  { weight: 6, arbitrary: fc.constant("*") },
  { weight: 1, arbitrary: fc.constant("?") },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 7 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("1-5", "mon-fri", "0,6", "sat,sun", "SUN", "Fri") },
  { weight: 1, arbitrary: fc.constantFrom("0#1", "sun#2", "6#5", "fri#1", "5L", "SUNL", "0L") },
);
const monthField = fc.oneof(
  { weight: 8, arbitrary: fc.constant("*") },
  { weight: 1, arbitrary: fc.constantFrom("3", "10", "mar,oct", "Nov", "2-4", "*/3", "sep-dec/2") },
);
const secondField = fc.oneof(
  { weight: 8, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom("0", "30", "*/20", "15,45", "*") },
);
const generatedExpression = fc
  .tuple(secondField, minuteField, hourField, domField, monthField, dowField)
  .map(([s, mi, h, dom, mo, dow]) => [s, mi, h, dom, mo, dow].filter((f) => f !== null).join(" "));

const expressionArb = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(...NAMED_EXPRESSIONS) },
  { weight: 1, arbitrary: generatedExpression },
);

/** Zones with offset changes in 2025-2030 come three times as often as those without. */
const zoneArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ZONES.filter((z) => transitionsOf(z).length > 0)) },
  { weight: 1, arbitrary: fc.constantFrom(...ZONES.filter((z) => transitionsOf(z).length === 0)) },
);

/** A start near one of the zone's transitions (or anywhere in 2025-2030 for a zone without any). */
const caseArb = fc
  .tuple(
    zoneArb,
    fc.oneof(
      { weight: 4, arbitrary: fc.array(expressionArb, { minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.array(expressionArb, { minLength: 2, maxLength: 3 }) },
    ),
    fc.nat(),
    // Mostly before the transition, so that the three days after the start cross it.
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: -36 * 3600, max: -1 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 * 3600 }) },
      { weight: 1, arbitrary: fc.constantFrom(-1, 0, 1, -3600, 3600, -1800, 1800, -60, 60, -5400) },
    ),
    fc.integer({ min: 0, max: 999 }),
  )
  .map(([zone, expressions, pick, deltaSeconds, ms]) => {
    const transitions = transitionsOf(zone);
    const base =
      transitions.length === 0
        ? Date.UTC(2025, 0, 1) + (pick % (6 * 365)) * DAY
        : (transitions[pick % transitions.length] ?? 0);
    const after = base + deltaSeconds * SECOND + (pick % 4 === 0 ? ms : 0);
    return { zone, expressions, after };
  });

/** What `parseSchedule` made of a schedule: its spec, or the fields and messages it refused it with. */
type Parsed =
  | { readonly spec: ScheduleSpec }
  | { readonly refused: readonly { field: string; message: string }[] };

function parsed(input: Record<string, unknown>, after: number): Parsed {
  try {
    return { spec: parseSchedule(input, { referenceAt: after as Instant }) };
  } catch (error) {
    if (error instanceof ValidationError) {
      const refused = error.errors.map((e) => ({
        ...e,
        field: e.field.replace(/^schedule\./, ""),
      }));
      return { refused };
    }
    throw error;
  }
}

const THIRTY_YEARS_DAYS = 30 * 365;

/**
 * Judges a refusal by the oracle: each refused field must name a reason the oracle confirms. A cron
 * expression "cannot fire within 30 years" only when the oracle's day rule matches no date in them (a
 * day of margin each side for the zone's offset); bounds leave "no occurrence" only when the oracle
 * finds no fire between them. Any other refusal of these generated schedules is the engine's error.
 */
function expectRefusalConfirmed(
  refused: readonly { field: string; message: string }[],
  schedule: { zone: string; expressions: readonly string[]; after: number; endAt?: number },
): void {
  const { zone, expressions, after } = schedule;
  expect(refused.length).toBeGreaterThan(0);
  for (const { field, message } of refused) {
    // A union's member is named `cron[0]` or `cron.0`, depending on the layer that refused it.
    const cronIndex = /^cron(?:\[(\d+)\]|\.(\d+))?$/.exec(field);
    if (cronIndex !== null && /within 30 years/.test(message)) {
      const expression = expressions[Number(cronIndex[1] ?? cronIndex[2] ?? 0)] ?? "";
      const firstDay = Math.floor(wallAt(zone, after) / DAY) * DAY + 2 * DAY;
      expect(
        oracleMatchesADate(expression, firstDay, THIRTY_YEARS_DAYS - 4),
        `refused ${expression} in ${zone}: ${message}`,
      ).toBe(false);
    } else if (field === "end_at" && schedule.endAt !== undefined) {
      expect(message).toMatch(/no occurrence between/);
      expect(iso(oracleFires(expressions, zone, after, schedule.endAt)), message).toEqual([]);
    } else {
      expect.fail(
        `an unexpected refusal of ${expressions.join(" | ")} in ${zone}: ${field}: ${message}`,
      );
    }
  }
}

const WINDOW = 3 * DAY;
const RUNS = Number(process.env.ORACLE_RUNS ?? 400);

describe("the oracle", () => {
  it.each([
    {
      zone: "America/New_York",
      cron: "30 2 * * *",
      after: "2024-03-09T00:00:00Z",
      days: 3,
      expected: [
        "2024-03-09T07:30:00.000Z",
        "2024-03-10T07:00:00.000Z",
        "2024-03-11T06:30:00.000Z",
      ],
    },
    {
      zone: "Europe/Berlin",
      cron: "0,30 2 * * *",
      after: "2024-03-30T12:00:00Z",
      days: 1,
      expected: ["2024-03-31T01:00:00.000Z"],
    },
    {
      zone: "Europe/Berlin",
      cron: "*/30 2 * * *",
      after: "2024-03-30T12:00:00Z",
      days: 1.5,
      expected: ["2024-04-01T00:00:00.000Z"],
    },
    {
      zone: "Australia/Lord_Howe",
      cron: "*/10 2 * * *",
      after: "2024-10-05T00:00:00Z",
      days: 1,
      expected: [
        "2024-10-05T15:30:00.000Z",
        "2024-10-05T15:40:00.000Z",
        "2024-10-05T15:50:00.000Z",
      ],
    },
    {
      zone: "America/New_York",
      cron: "30 1 * * *",
      after: "2026-10-31T12:00:00Z",
      days: 2,
      expected: ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"],
    },
    {
      zone: "America/New_York",
      cron: "*/30 1 * * *",
      after: "2026-10-31T12:00:00Z",
      days: 1,
      expected: [
        "2026-11-01T05:00:00.000Z",
        "2026-11-01T05:30:00.000Z",
        "2026-11-01T06:00:00.000Z",
        "2026-11-01T06:30:00.000Z",
      ],
    },
    {
      zone: "Pacific/Apia",
      cron: "0 12 * * *",
      after: "2011-12-29T12:00:00Z",
      days: 2,
      expected: ["2011-12-29T22:00:00.000Z", "2011-12-30T22:00:00.000Z"],
    },
  ])(
    "reads the docs' worked example $cron in $zone after $after",
    ({ zone, cron, after, days, expected }) => {
      const from = Date.parse(after);
      expect(iso(oracleFires([cron], zone, from, from + days * DAY))).toEqual(expected);
    },
  );
});

describe("the cron engine against a literal reading of SPEC 3.1", () => {
  it("finds every zone's transitions in 2025-2030 where they are expected", () => {
    expect(transitionsOf("America/New_York")).toHaveLength(12);
    expect(transitionsOf("Australia/Lord_Howe")).toHaveLength(12);
    expect(transitionsOf("Asia/Kolkata")).toHaveLength(0);
    expect(transitionsOf("UTC")).toHaveLength(0);
    expect(transitionsOf("Etc/GMT+12")).toHaveLength(0);
  });

  it("fires at the same instants as the oracle over three days from a start near a transition", () => {
    const tally = { total: 0, crossing: 0, refused: 0 };
    fc.assert(
      fc.property(caseArb, ({ zone, expressions, after }) => {
        const until = after + WINDOW;
        const result = parsed(
          { type: "cron", cron: cronField(expressions), timezone: zone },
          after,
        );
        if ("refused" in result) {
          expectRefusalConfirmed(result.refused, { zone, expressions, after });
          tally.refused++;
          return;
        }
        tally.total++;
        if (crossesTransition(zone, after, until)) tally.crossing++;
        expect(iso(specFires(result.spec, after, until))).toEqual(
          iso(oracleFires(expressions, zone, after, until)),
        );
      }),
      {
        numRuns: RUNS,
        // A union refused for a member that names no real date: its field is `cron.0`.
        examples: [
          [
            {
              zone: "Asia/Kolkata",
              expressions: ["* 0-0 31 sep-dec/2 *", "30 2 * * *", "30 2 * * *"],
              after: 1735689599000,
            },
          ],
        ],
      },
    );
    // docs/schedules.md#cron: the cases that matter most cross an offset change; keep them common.
    expect(tally.crossing / tally.total).toBeGreaterThanOrEqual(1 / 3);
  }, 120_000);

  it("answers nextOccurrences with the oracle's first fires", () => {
    fc.assert(
      fc.property(caseArb, ({ zone, expressions, after }) => {
        const input = { type: "cron" as const, cron: cronField(expressions), timezone: zone };
        const result = parsed(input, after);
        if ("refused" in result) {
          expectRefusalConfirmed(result.refused, { zone, expressions, after });
          return;
        }
        // Fires in the window are the oracle's; past it, a case with none there checks the first only.
        const expected = oracleFires(expressions, zone, after, after + WINDOW).slice(0, 5);
        const count = Math.max(expected.length, 1);
        const got = nextOccurrences(input, { after: new Date(after), count });
        if (expected.length === 0) {
          expect(got[0]?.getTime() ?? Infinity).toBeGreaterThan(after + WINDOW);
          return;
        }
        expect(iso(got.map((d) => d.getTime()))).toEqual(iso(expected));
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });

  it("keeps inside start_at and end_at placed around a transition (SPEC 3.4)", () => {
    const tally = { accepted: 0, refused: 0 };
    const bounded = fc.tuple(
      caseArb,
      fc.integer({ min: -6 * 3600, max: 36 * 3600 }),
      fc.integer({ min: 0, max: 999 }),
      fc.integer({ min: 1, max: 48 * 3600 }),
    );
    fc.assert(
      fc.property(bounded, ([{ zone, expressions, after }, startDelta, startMs, length]) => {
        const startAt = after + startDelta * SECOND + startMs;
        const endAt = startAt + length * SECOND;
        const input = {
          type: "cron",
          cron: cronField(expressions),
          timezone: zone,
          start_at: new Date(startAt).toISOString(),
          end_at: new Date(endAt).toISOString(),
        };
        // Whole seconds: start_at rounds up (SPEC 3.2, "the same holds for start_at").
        const from = Math.max(after, Math.ceil(startAt / SECOND) * SECOND - 1);
        const result = parsed(input, after);
        if ("refused" in result) {
          expectRefusalConfirmed(result.refused, { zone, expressions, after: from, endAt });
          tally.refused++;
          return;
        }
        tally.accepted++;
        const expected = oracleFires(expressions, zone, from, Math.min(endAt, after + WINDOW));
        expect(iso(specFires(result.spec, after, after + WINDOW))).toEqual(iso(expected));
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    // Both sides are exercised: schedules with fires in their bounds, and refusals the oracle confirms.
    expect(tally.accepted).toBeGreaterThan(RUNS / 10);
    expect(tally.refused).toBeGreaterThan(0);
  });

  it("skips the fires whose local date is excluded, the DST rule first (docs/schedules.md#exclude)", () => {
    const excluded = fc.tuple(caseArb, fc.integer({ min: -1, max: 2 }), fc.boolean());
    fc.assert(
      fc.property(excluded, ([{ zone, expressions, after }, dayDelta, weekends]) => {
        const day = new Date(wallAt(zone, after) + dayDelta * DAY).toISOString().slice(0, 10);
        const exclude: unknown[] = [day];
        if (weekends) exclude.push({ days: "* * sat,sun" });
        const input = { type: "cron", cron: cronField(expressions), timezone: zone, exclude };
        const result = parsed(input, after);
        // Offsets change on whole minutes: one Intl call per minute is enough for per-second rules.
        const offsetByMinute = new Map<number, number>();
        const isExcluded = (at: number): boolean => {
          const minute = Math.floor(at / MINUTE) * MINUTE;
          let offset = offsetByMinute.get(minute);
          if (offset === undefined) {
            offset = offsetAt(zone, minute);
            offsetByMinute.set(minute, offset);
          }
          const wall = new Date(at + offset);
          const weekday = wall.getUTCDay();
          return (
            wall.toISOString().slice(0, 10) === day ||
            (weekends && (weekday === 0 || weekday === 6))
          );
        };
        if ("refused" in result) {
          const excludeRefusals = result.refused.filter((r) => r.field === "exclude");
          const others = result.refused.filter((r) => r.field !== "exclude");
          if (others.length > 0) expectRefusalConfirmed(others, { zone, expressions, after });
          if (excludeRefusals.length === 0) return;
          // "Excludes every occurrence": each local date the oracle's day rules match in the coming
          // two years (the rules repeat yearly, and weekly for weekends) is an excluded one.
          const firstDay = Math.floor(wallAt(zone, after) / DAY) * DAY + 2 * DAY;
          for (let d = 0; d < 2 * 366; d++) {
            const date = new Date(firstDay + d * DAY);
            const matches = expressions.some((e) => oracleMatchesADate(e, firstDay + d * DAY, 1));
            const weekday = date.getUTCDay();
            const out =
              date.toISOString().slice(0, 10) === day ||
              (weekends && (weekday === 0 || weekday === 6));
            expect(!matches || out, `${date.toISOString()} fires and is not excluded`).toBe(true);
          }
          return;
        }
        const expected = oracleFires(expressions, zone, after, after + WINDOW).filter(
          (at) => !isExcluded(at),
        );
        expect(iso(specFires(result.spec, after, after + WINDOW))).toEqual(iso(expected));
      }),
      // Few runs: each excluded fire costs the engine a search, and the oracle a walk of the window.
      { numRuns: Math.ceil(RUNS / 8) },
    );
  });

  it.each(ZONES.flatMap((zone) => NAMED_EXPRESSIONS.map((cron) => ({ zone, cron }))))(
    "agrees across every 2025-2030 transition of $zone for $cron",
    ({ zone, cron }) => {
      const transitions = transitionsOf(zone);
      const starts = transitions.length === 0 ? [Date.UTC(2027, 5, 1)] : transitions;
      for (const t of starts) {
        const after = t - 30 * HOUR;
        const until = t + 30 * HOUR;
        expect({ t: iso([t]), fires: iso(engineFires([cron], zone, after, until)) }).toEqual({
          t: iso([t]),
          fires: iso(oracleFires([cron], zone, after, until)),
        });
      }
    },
  );
});

describe("a once schedule's local run_at against a literal reading of SPEC 3.2", () => {
  /** The instant SPEC 3.2 gives a local wall time, or null when it falls inside a jump of over 3 hours. */
  function oracleRunAt(zone: string, wall: number): number | null {
    const changes = changesBetween(zone, wall - 30 * HOUR, wall + 30 * HOUR);
    const offsets = new Set([offsetAt(zone, wall - 30 * HOUR), ...changes.map((c) => c.after)]);
    const instants = [...offsets]
      .map((o) => wall - o)
      .filter((u) => wallAt(zone, u) === wall)
      .sort((a, b) => a - b);
    const [first] = instants;
    if (first !== undefined) return first;
    const gap = changes.find((c) => c.at + c.before <= wall && wall < c.at + c.after);
    if (gap === undefined) throw new Error("oracle: a wall time neither exists nor falls in a gap");
    return gap.after - gap.before <= DST_LIMIT ? gap.at : null;
  }

  it("resolves wall times around every transition the way the oracle does", () => {
    const arb = fc.tuple(zoneArb, fc.nat(), fc.integer({ min: -4 * 60, max: 4 * 60 }));
    fc.assert(
      fc.property(arb, ([zone, pick, minutes]) => {
        const transitions = transitionsOf(zone);
        const base =
          transitions.length === 0
            ? Date.UTC(2025, 0, 1) + (pick % (6 * 365)) * DAY
            : (transitions[pick % transitions.length] ?? 0);
        const wall = Math.floor((base + offsetAt(zone, base)) / MINUTE) * MINUTE + minutes * MINUTE;
        const runAt = new Date(wall).toISOString().slice(0, 19);
        const expected = oracleRunAt(zone, wall);
        const reference = (wall - 2 * DAY) as Instant;
        if (expected === null) {
          expect(() =>
            parseSchedule(
              { type: "once", run_at: runAt, timezone: zone },
              { referenceAt: reference },
            ),
          ).toThrow(ValidationError);
          return;
        }
        const spec = parseSchedule(
          { type: "once", run_at: runAt, timezone: zone },
          { referenceAt: reference },
        );
        expect(spec.type === "once" ? iso([spec.runAt]) : []).toEqual(iso([expected]));
      }),
      { numRuns: RUNS },
    );
  });
});

/**
 * The sweep over every zone Intl knows: each offset change of `ORACLE_FROM_YEAR` to `ORACLE_TO_YEAR`
 * (default 2010 to 2030), a subset of the expressions above. All of them take about 25 minutes, so every
 * run (CI included) sweeps a sample: `ORACLE_SWEEP_ZONES` zones (default 6) chosen by the UTC date, so
 * that successive days cover every zone (one in 70 a day: all of them in 70 days). `ORACLE_ALL_ZONES=1`
 * sweeps them all; `ORACLE_SWEEP_DAY` (days since 1970) replays another day's sample.
 */
describe("the oracle sweep over every zone", () => {
  const fromYear = Number(process.env.ORACLE_FROM_YEAR ?? 2010);
  const toYear = Number(process.env.ORACLE_TO_YEAR ?? 2030);
  const expressions = (
    process.env.ORACLE_EXPRESSIONS ??
    "30 2 * * *|0 1-3 * * *|*/15 * * * *|0 0 * * *|30 1 * * *|0,30 23 * * *|0 * * * *|30 0 * * 0|0 0 L * *|45 2 * * *"
  ).split("|");
  const all = Intl.supportedValuesOf("timeZone");
  const day = Number(process.env.ORACLE_SWEEP_DAY ?? Math.floor(Date.now() / DAY));
  const size = Number(process.env.ORACLE_SWEEP_ZONES ?? 6);
  const rounds = Math.ceil(all.length / size);
  const zones =
    process.env.ORACLE_ALL_ZONES === "1" ? all : all.filter((_, i) => i % rounds === day % rounds);

  it("samples zones that the days after it complete", () => {
    const covered = new Set<string>();
    for (let d = 0; d < rounds; d++) {
      for (const zone of all.filter((_, i) => i % rounds === d % rounds)) covered.add(zone);
    }
    expect(covered.size).toBe(all.length);
    expect(zones.length).toBeGreaterThan(0);
  });

  it.each(zones)(`agrees around every transition of %s (sample of day ${day})`, (zone) => {
    const changes = changesBetween(zone, Date.UTC(fromYear, 0, 1), Date.UTC(toYear + 1, 0, 1));
    const failures: unknown[] = [];
    for (const { at: t } of changes) {
      for (const cron of expressions) {
        const after = t - 30 * HOUR;
        const until = t + 30 * HOUR;
        const engine = iso(engineFires([cron], zone, after, until));
        const oracle = iso(oracleFires([cron], zone, after, until));
        if (JSON.stringify(engine) !== JSON.stringify(oracle)) {
          failures.push({ cron, transition: iso([t])[0], engine, oracle });
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
