/**
 * fast-check properties of the cron engine over 12 zones from 2010 to 2040 (CONVENTIONS "Tests"), and an
 * agreement check against a brute-force, minute-by-minute reading of the docs/schedules.md#cron DST rule.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { parseCron } from "../../../src/domain/schedule/cron-expression.js";
import type { CronExpression } from "../../../src/domain/schedule/cron-expression.js";
import { matchesWall, firstMatchingWall } from "../../../src/domain/schedule/cron-matcher.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import { isDstGap } from "../../../src/domain/schedule/wall-clock.js";
import { offsetAt, previousTransition } from "../../../src/domain/schedule/zone-offsets.js";

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
  .filter((text) => {
    const parsed = parseCron(text);
    return parsed.ok && firstMatchingWall(parsed.value, FROM, TO) !== null;
  });

const zone = fc.constantFrom(...ZONES);
const after = fc
  .integer({ min: FROM / 1000, max: TO / 1000 - 86_400 * 400 })
  .map((s) => s * 1000 + 250);

function expression(text: string): CronExpression {
  const parsed = parseCron(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
}

function fires(text: string, timezone: string, from: number, count: number): number[] {
  try {
    return nextOccurrences(
      { type: "cron", cron: text, timezone },
      { after: new Date(from), count },
    ).map((d) => d.getTime());
  } catch (error) {
    // Some generated expressions cannot fire within 30 years of `from` (their only dates lie before
    // it): nextOccurrences rightly refuses them and there is nothing to check.
    const refusal = error instanceof ValidationError && /30 years/.test(error.message);
    if (refusal) return [];
    throw error;
  }
}

/** A fixed-time job's fire at a transition instant whose gap holds a matching wall time. */
function isGapFire(cron: CronExpression, timezone: string, at: number): boolean {
  const transition = previousTransition(timezone, at);
  return (
    cron.fixedTime &&
    transition?.at === at &&
    isDstGap(transition) &&
    firstMatchingWall(cron, at + transition.offsetBefore, at + transition.offsetAfter) !== null
  );
}

const settings = { numRuns: 100 };

describe("cron fires (properties)", () => {
  it("are whole seconds, strictly increasing and strictly after `after`", () => {
    fc.assert(
      fc.property(cronText, zone, after, (text, timezone, from) => {
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

  it("each match the fields on the local wall clock, or are a gap fire at a transition", () => {
    fc.assert(
      fc.property(cronText, zone, after, (text, timezone, from) => {
        const cron = expression(text);
        for (const at of fires(text, timezone, from, 12)) {
          const wall = at + offsetAt(timezone, at);
          expect(matchesWall(cron, wall) || isGapFire(cron, timezone, at)).toBe(true);
        }
      }),
      settings,
    );
  });

  // None of these zones turns its clock back by more than 3 hours between 2010 and 2040.
  it("of a fixed-time job never repeat a wall time", () => {
    fc.assert(
      fc.property(cronText, zone, after, (text, timezone, from) => {
        const cron = expression(text);
        if (!cron.fixedTime) return;
        const walls = fires(text, timezone, from, 24).map((at) => at + offsetAt(timezone, at));
        expect(new Set(walls).size).toBe(walls.length);
      }),
      settings,
    );
  });

  it("chain consistently: the k-th fire of one call is k calls of one fire", () => {
    fc.assert(
      fc.property(cronText, zone, after, (text, timezone, from) => {
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
function bruteForce(cron: CronExpression, timezone: string, from: number, to: number): number[] {
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
    if (cron.fixedTime && shift > 0 && shift <= 180 * MINUTE) {
      for (let w = t + before; w < t + now && !fire; w += MINUTE) fire = matchesWall(cron, w);
    }
    if (matchesWall(cron, wall(t))) {
      let repeat = false;
      for (let k = 1; k < lookBack && cron.fixedTime && !repeat; k++) {
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
          const cron = expression(text);
          const from = Date.parse(transition) - quarters * 15 * MINUTE;
          const to = Date.parse(transition) + 18 * 60 * MINUTE;
          const expected = bruteForce(cron, timezone, from, to);
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
