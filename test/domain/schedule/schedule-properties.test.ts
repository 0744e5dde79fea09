/**
 * fast-check properties of the cron engine over 12 zones from 2010 to 2040 (CONVENTIONS "Tests"), and an
 * agreement check against a brute-force, minute-by-minute reading of the docs/schedules.md#cron DST rule.
 * The engine is judged only by ./cron-oracle.ts (`Intl` and the SPEC's rules read apart from
 * src/domain/schedule), never by its own helpers; starts are drawn mostly just before offset changes,
 * and a refusal is checked against the oracle like any answer.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { parseCron } from "../../../src/domain/schedule/cron-expression.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import {
  DAY,
  DST_LIMIT,
  changesBetween,
  minuteMatches,
  offsetAt,
  oracleMatchesADate,
  readOracleRule,
  wallAt,
} from "./cron-oracle.js";
import type { OracleRule } from "./cron-oracle.js";

const ZONES = [
  "America/New_York",
  "Europe/Berlin",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "Asia/Kathmandu",
  "America/Sao_Paulo",
  "Pacific/Apia",
  "Europe/London",
  "Australia/Sydney",
  "America/Santiago",
  "Asia/Tehran",
  "UTC",
];
const FROM = Date.UTC(2010, 0, 1);
const TO = Date.UTC(2040, 0, 1);
const MINUTE = 60_000;

/** One cron field item: `*`, `*\/S`, `N`, `A-B`, `A-B/S`. */
function item(min: number, max: number, favoured: readonly number[]) {
  const value = fc.oneof(fc.constantFrom(...favoured), fc.integer({ min, max }));
  return fc.oneof(
    { arbitrary: fc.constant("*"), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: max + 5 }).map((s) => `*/${s}`), weight: 1 },
    { arbitrary: value.map(String), weight: 3 },
    {
      arbitrary: fc
        .tuple(value, value, fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }))
        .map(([a, b, s]) => `${Math.min(a, b)}-${Math.max(a, b)}${s === undefined ? "" : `/${s}`}`),
      weight: 2,
    },
  );
}

function field(min: number, max: number, favoured: readonly number[]) {
  return fc
    .array(item(min, max, favoured), { minLength: 1, maxLength: 3 })
    .map((xs) => xs.join(","));
}

/** Expressions that dwell on the hours where zones change offset (00-04) and on common minutes. */
const cronText = fc
  .tuple(
    fc.option(field(0, 59, [0, 30]), { nil: undefined, freq: 4 }),
    field(0, 59, [0, 15, 30, 45]),
    field(0, 23, [0, 1, 2, 3, 23]),
    fc.oneof(fc.constant("*"), field(1, 31, [1, 15, 29, 30, 31])),
    fc.oneof(fc.constant("*"), field(1, 12, [3, 4, 9, 10, 11])),
    fc.oneof(fc.constant("*"), field(0, 7, [0, 1, 5, 7])),
  )
  .map(([second, ...rest]) => (second === undefined ? rest : [second, ...rest]).join(" "))
  // Only the syntax is the engine's to say: what never fires is judged by the oracle (`fires`).
  .filter((text) => parseCron(text).ok);

const zone = fc.constantFrom(...ZONES);

const transitionsByZone = new Map<string, number[]>();
/**
 * The zone's offset changes in 2010-2039, to draw starts near them. Probed a day apart, then to the
 * minute inside a day whose offset moved (only the inputs depend on it: a change undone within a day
 * would be missed, and there is none).
 */
function transitionsOf(timezone: string): number[] {
  let list = transitionsByZone.get(timezone);
  if (list === undefined) {
    list = [];
    let offset = offsetAt(timezone, FROM);
    for (let day = FROM; day < TO; day += DAY) {
      const next = offsetAt(timezone, day + DAY);
      if (next !== offset) list.push(...changesBetween(timezone, day, day + DAY).map((c) => c.at));
      offset = next;
    }
    transitionsByZone.set(timezone, list);
  }
  return list;
}

/** A zone and a start: two times in three just before one of its offset changes, else anywhere. */
const zoneAndStart = fc
  .tuple(
    zone,
    fc.oneof(
      { weight: 2, arbitrary: fc.constant("near" as const) },
      { weight: 1, arbitrary: fc.constant("anywhere" as const) },
    ),
    fc.nat(),
    fc.oneof(
      fc.integer({ min: 1, max: 3600 }),
      fc.integer({ min: 1, max: 86_400 }),
      fc.integer({ min: 1, max: 40 * 86_400 }),
    ),
    fc.integer({ min: FROM / 1000, max: TO / 1000 - 86_400 * 400 }),
  )
  .map(([timezone, where, pick, beforeSeconds, anySecond]) => {
    const transitions = transitionsOf(timezone).filter((t) => t < TO - 400 * DAY);
    const near = transitions[pick % Math.max(transitions.length, 1)];
    const start =
      where === "near" && near !== undefined ? near - beforeSeconds * 1000 : anySecond * 1000;
    return { timezone, from: start + 250 };
  });

/** Whether one of the zone's offset changes lies in `(from, to]`. */
function crosses(timezone: string, from: number, to: number): boolean {
  return transitionsOf(timezone).some((t) => t > from && t <= to);
}

const THIRTY_YEARS_DAYS = 30 * 365;

/**
 * The engine's first `count` fires after `from`. It refuses an expression that cannot fire within 30
 * years of `from` (its only dates lie before it): then the oracle must find no date of its day rule in
 * those years either (two days of margin each side for the zone's offset).
 */
function fires(text: string, timezone: string, from: number, count: number): number[] {
  try {
    return nextOccurrences(
      { type: "cron", cron: text, timezone },
      { after: new Date(from), count },
    ).map((d) => d.getTime());
  } catch (error) {
    if (!(error instanceof ValidationError) || !/30 years/.test(error.message)) throw error;
    const firstDay = Math.floor(wallAt(timezone, from) / DAY) * DAY + 2 * DAY;
    expect(
      oracleMatchesADate(text, firstDay, THIRTY_YEARS_DAYS - 4),
      `refused ${text} in ${timezone} after ${new Date(from).toISOString()}`,
    ).toBe(false);
    return [];
  }
}

/** Whether the rule matches a wall time to the second (the oracle matches minutes, then seconds). */
function wallMatches(rule: OracleRule, wall: number): boolean {
  const second = Math.floor(wall / 1000) % 60;
  return rule.seconds.values.has(second) && minuteMatches(rule, wall - second * 1000);
}

/** A fixed-time job's fire at a forward jump of at most 3 hours whose skipped wall times hold a match. */
function isGapFire(rule: OracleRule, timezone: string, at: number): boolean {
  // The probe starts an hour early: a change found from `at` itself would already be behind it.
  const change = changesBetween(timezone, at - 3_600_000, at + 1).find((c) => c.at === at);
  if (!rule.fixed || change === undefined) return false;
  const shift = change.after - change.before;
  if (shift <= 0 || shift > DST_LIMIT) return false;
  for (let wall = at + change.before; wall < at + change.after; wall += MINUTE) {
    if (minuteMatches(rule, wall)) return true;
  }
  return false;
}

const settings = { numRuns: 100 };

describe("cron fires (properties)", () => {
  it("are whole seconds, strictly increasing and strictly after `after`", () => {
    fc.assert(
      fc.property(cronText, zoneAndStart, (text, { timezone, from }) => {
        const list = fires(text, timezone, from, 12);
        let previous = from;
        for (const at of list) {
          expect(at % 1000).toBe(0);
          expect(at).toBeGreaterThan(previous);
          previous = at;
        }
      }),
      settings,
    );
  });

  it("each match the fields on the local wall clock (Intl), or are a gap fire at a transition", () => {
    const tally = { cases: 0, crossing: 0 };
    fc.assert(
      fc.property(cronText, zoneAndStart, (text, { timezone, from }) => {
        const rule = readOracleRule(text);
        const list = fires(text, timezone, from, 12);
        tally.cases++;
        if (list.length > 0 && crosses(timezone, from, list.at(-1) ?? from)) tally.crossing++;
        for (const at of list) {
          const wall = wallAt(timezone, at);
          expect(
            wallMatches(rule, wall) || isGapFire(rule, timezone, at),
            `${text} in ${timezone} fired at ${new Date(at).toISOString()}`,
          ).toBe(true);
        }
      }),
      settings,
    );
    expect(tally.crossing / tally.cases).toBeGreaterThanOrEqual(1 / 3);
  });

  // None of these zones turns its clock back by more than 3 hours between 2010 and 2040.
  it("of a fixed-time job never repeat a wall time (a wildcard job's at most twice)", () => {
    fc.assert(
      fc.property(cronText, zoneAndStart, (text, { timezone, from }) => {
        const rule = readOracleRule(text);
        const walls = fires(text, timezone, from, 24).map((at) => wallAt(timezone, at));
        // A wildcard job fires on both passes of a repeated hour, never on a third.
        const most = Math.max(0, ...walls.map((w) => walls.filter((x) => x === w).length));
        expect(most).toBeLessThanOrEqual(rule.fixed ? 1 : 2);
      }),
      settings,
    );
  });

  it("chain consistently: the k-th fire of one call is k calls of one fire", () => {
    fc.assert(
      fc.property(cronText, zoneAndStart, (text, { timezone, from }) => {
        const all = fires(text, timezone, from, 6);
        let previous = from;
        for (const at of all) {
          const [next] = fires(text, timezone, previous, 1);
          expect(next).toBe(at);
          previous = at;
        }
      }),
      { numRuns: 60 },
    );
  });
});

/**
 * docs/schedules.md#cron read literally, minute by minute, from `Intl` (not from the engine): a wall time that
 * matches fires, except a fixed-time job's repeat within 3 hours; a fixed-time job whose match falls in
 * a forward jump of at most 3 hours fires at the jump.
 */
function bruteForce(rule: OracleRule, timezone: string, from: number, to: number): number[] {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
  });
  const wallAt = (t: number): number => {
    const p = Object.fromEntries(format.formatToParts(t).map((x) => [x.type, Number(x.value)]));
    return Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0);
  };
  const lookBack = 181;
  const walls = new Map<number, number>();
  for (let t = from - lookBack * MINUTE; t <= to; t += MINUTE) walls.set(t, wallAt(t));
  const wall = (t: number): number => walls.get(t) ?? wallAt(t);
  const out: number[] = [];
  for (let t = from + MINUTE; t <= to; t += MINUTE) {
    const before = wall(t - MINUTE) - (t - MINUTE);
    const now = wall(t) - t;
    const shift = now - before;
    let fire = false;
    if (rule.fixed && shift > 0 && shift <= 180 * MINUTE) {
      for (let w = t + before; w < t + now && !fire; w += MINUTE) fire = minuteMatches(rule, w);
    }
    if (minuteMatches(rule, wall(t))) {
      let repeat = false;
      for (let k = 1; k < lookBack && rule.fixed && !repeat; k++) {
        repeat = wall(t - k * MINUTE) === wall(t);
      }
      fire ||= !repeat;
    }
    if (fire) out.push(t);
  }
  return out;
}

/** Transitions taken from the zones' rules (hand-listed, not from the engine). */
const TRANSITIONS: readonly (readonly [string, string])[] = [
  ["America/New_York", "2024-03-10T07:00:00Z"],
  ["America/New_York", "2031-11-02T06:00:00Z"],
  ["Europe/Berlin", "2024-10-27T01:00:00Z"],
  ["Europe/Berlin", "2037-03-29T01:00:00Z"],
  ["Australia/Lord_Howe", "2024-04-06T15:00:00Z"],
  ["Australia/Lord_Howe", "2024-10-05T15:30:00Z"],
  ["Pacific/Chatham", "2024-04-06T14:00:00Z"],
  ["Pacific/Chatham", "2024-09-28T14:00:00Z"],
  ["America/Sao_Paulo", "2018-11-04T03:00:00Z"],
  ["America/Sao_Paulo", "2019-02-17T02:00:00Z"],
  ["Pacific/Apia", "2011-12-30T10:00:00Z"],
  ["Pacific/Apia", "2012-03-31T14:00:00Z"],
];

const minuteCron = fc
  .tuple(
    fc.constantFrom("0", "30", "*/15", "*", "0,30", "45", "15-45/15", "*/7", "59"),
    fc.constantFrom("0", "1", "2", "3", "1-3", "*", "*/2", "0-3", "23", "12", "22-23"),
    fc.constantFrom("*", "*", "1-15", "*/2", "30"),
    fc.constantFrom("*", "0", "1-5", "*/2"),
  )
  .map(([m, h, dom, dow]) => `${m} ${h} ${dom} * ${dow}`);

describe("cron fires around real transitions", () => {
  it("agree with a brute-force reading of docs/schedules.md#cron", () => {
    fc.assert(
      fc.property(
        minuteCron,
        fc.constantFrom(...TRANSITIONS),
        fc.integer({ min: 0, max: 12 * 4 }),
        (text, [timezone, transition], quarters) => {
          const from = Date.parse(transition) - quarters * 15 * MINUTE;
          const to = Date.parse(transition) + 18 * 60 * MINUTE;
          const expected = bruteForce(readOracleRule(text), timezone, from, to);
          const actual: number[] = [];
          for (let chunk = fires(text, timezone, from, 500); chunk.length > 0;) {
            actual.push(...chunk.filter((at) => at <= to));
            const last = chunk.at(-1) ?? to;
            chunk = last < to ? fires(text, timezone, last, 500) : [];
          }
          expect(actual.map((t) => new Date(t).toISOString())).toEqual(
            expected.map((t) => new Date(t).toISOString()),
          );
        },
      ),
      { numRuns: 30 },
    );
  });
});
