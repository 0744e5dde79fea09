/**
 * The engine against a brute-force reading of the same rules (issue 22): 6-field expressions with the
 * Quartz day items, one to three per schedule, with days to skip, compared with a walk of every minute
 * (and the matching seconds in it) of a window around real DST transitions and around month ends.
 *
 * The brute force is independent of the engine: its own reading of the grammar used here (classic
 * items, `?`, `L`, `L-n`, `LW`, `nW`, `VL`, `V#k`, Vixie's day rule), wall times from `Intl`, and the DST
 * rule of docs/schedules.md read literally (a match fires unless a fixed-time job's wall time repeats
 * within 3 hours; a fixed-time job whose match falls in a forward jump of at most 3 hours fires at it).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";

/** Minute-by-minute walks: seconds of CPU, several times that with coverage on a loaded host. */
const HEAVY_TIMEOUT_MS = 120_000;

const MINUTE = 60_000;
const DAY = 86_400_000;
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/** One field's reading: the plain values, and (day fields) the Quartz items. */
interface Field {
  readonly any: boolean;
  readonly values: ReadonlySet<number>;
  readonly items: readonly string[];
}

interface Rule {
  readonly text: string;
  readonly seconds: Field;
  readonly minutes: Field;
  readonly hours: Field;
  readonly dom: Field;
  readonly months: Field;
  readonly dow: Field;
  readonly fixed: boolean;
}

function value(token: string): number {
  const name = DAY_NAMES.indexOf(token.toLowerCase());
  return name >= 0 ? name : Number(token);
}

function readField(text: string, min: number, max: number): Field {
  if (text === "?") return { any: true, values: new Set(range(min, max)), items: [] };
  const values = new Set<number>();
  const items: string[] = [];
  for (const item of text.split(",")) {
    if (/[LW#]/i.test(item) && !/^[a-z]{3}$/i.test(item)) {
      items.push(item.toUpperCase());
      continue;
    }
    const [span = "", stepText] = item.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    const [a = "", b] = span === "*" ? [String(min), String(max)] : span.split("-");
    for (let v = value(a); v <= value(b ?? a); v += step) values.add(max === 7 && v === 7 ? 0 : v);
  }
  return { any: text.startsWith("*"), values, items };
}

function range(min: number, max: number): number[] {
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}

function readRule(text: string): Rule {
  const [s = "", mi = "", h = "", dom = "", mo = "", dow = ""] = text.split(" ");
  return {
    text,
    seconds: readField(s, 0, 59),
    minutes: readField(mi, 0, 59),
    hours: readField(h, 0, 23),
    dom: readField(dom, 1, 31),
    months: readField(mo, 1, 12),
    dow: readField(dow, 0, 7),
    fixed: ![s, mi, h].some((f) => f.startsWith("*")),
  };
}

const daysIn = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();
const weekday = (y: number, m: number, d: number): number =>
  new Date(Date.UTC(y, m - 1, d)).getUTCDay();
const workday = (y: number, m: number, d: number): boolean => ![0, 6].includes(weekday(y, m, d));

/** The reading of one day-of-month item. */
function domItem(item: string, y: number, m: number, d: number): boolean {
  const last = daysIn(y, m);
  if (item === "L") return d === last;
  if (item.startsWith("L-")) return d === last - Number(item.slice(2));
  if (item === "LW") {
    let day = last;
    while (!workday(y, m, day)) day--;
    return d === day;
  }
  const n = Number(item.slice(0, -1));
  if (n > last) return false;
  let target = n;
  if (weekday(y, m, n) === 6) target = n === 1 ? 3 : n - 1;
  if (weekday(y, m, n) === 0) target = n === last ? n - 2 : n + 1;
  return d === target;
}

/** The reading of one day-of-week item: `VL` or `V#k`. */
function dowItem(item: string, y: number, m: number, d: number): boolean {
  const [v = "", k] = item.split("#");
  const day = k === undefined ? v.slice(0, -1) : v;
  const target = value(day) % 7;
  if (weekday(y, m, d) !== target) return false;
  if (k === undefined) return d + 7 > daysIn(y, m);
  return Math.floor((d - 1) / 7) + 1 === Number(k);
}

function dateMatches(rule: Rule, y: number, m: number, d: number): boolean {
  if (!rule.months.values.has(m)) return false;
  const byDom = rule.dom.values.has(d) || rule.dom.items.some((i) => domItem(i, y, m, d));
  const byDow =
    rule.dow.values.has(weekday(y, m, d)) || rule.dow.items.some((i) => dowItem(i, y, m, d));
  return rule.dom.any || rule.dow.any ? byDom && byDow : byDom || byDow;
}

/** Wall minutes of a zone, from Intl, as `Date.UTC` of the wall date and time. */
function wallClock(zone: string): (t: number) => number {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
  });
  const cache = new Map<number, number>();
  return (t) => {
    let wall = cache.get(t);
    if (wall === undefined) {
      const p = Object.fromEntries(format.formatToParts(t).map((x) => [x.type, Number(x.value)]));
      wall = Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0);
      cache.set(t, wall);
    }
    return wall;
  };
}

/** The matching seconds of the wall minute `wall` (a minute-aligned `Date.UTC`). */
function matchingSeconds(rule: Rule, wall: number): number[] {
  const w = new Date(wall);
  const [y, m, d] = [w.getUTCFullYear(), w.getUTCMonth() + 1, w.getUTCDate()];
  if (!rule.hours.values.has(w.getUTCHours()) || !rule.minutes.values.has(w.getUTCMinutes())) {
    return [];
  }
  if (!dateMatches(rule, y, m, d)) return [];
  return [...rule.seconds.values].sort((a, b) => a - b);
}

/** One rule's fires in (from, to], minute by minute. */
function bruteForceRule(rule: Rule, zone: string, from: number, to: number): number[] {
  const wall = wallClock(zone);
  const lookBack = 181;
  const out: number[] = [];
  for (let t = from - (from % MINUTE); t <= to; t += MINUTE) {
    const before = wall(t - MINUTE) - (t - MINUTE);
    const now = wall(t) - t;
    const shift = now - before;
    let gapFire = false;
    if (rule.fixed && shift > 0 && shift <= 180 * MINUTE) {
      for (let w = t + before; w < t + now && !gapFire; w += MINUTE) {
        gapFire = matchingSeconds(rule, w).length > 0;
      }
    }
    const seconds = matchingSeconds(rule, wall(t));
    let repeat = false;
    for (let k = 1; k < lookBack && rule.fixed && seconds.length > 0 && !repeat; k++) {
      repeat = wall(t - k * MINUTE) === wall(t);
    }
    if (gapFire && (repeat || seconds[0] !== 0)) out.push(t);
    if (!repeat) out.push(...seconds.map((s) => t + s * 1000));
  }
  return out;
}

/** The schedule's fires in (from, to]: the union of its rules, without the excluded local dates. */
function bruteForce(
  rules: readonly Rule[],
  zone: string,
  excluded: ReadonlySet<string>,
  window: { from: number; to: number },
): number[] {
  const wall = wallClock(zone);
  const all = new Set(rules.flatMap((rule) => bruteForceRule(rule, zone, window.from, window.to)));
  const localDate = (t: number): string =>
    new Date(wall(t - (t % MINUTE))).toISOString().slice(0, 10);
  return [...all]
    .filter((t) => t > window.from && t <= window.to && !excluded.has(localDate(t)))
    .sort((a, b) => a - b);
}

/** The engine's fires in (from, to], or null when it refuses the schedule as never firing. */
function engine(
  rules: readonly string[],
  zone: string,
  exclude: readonly string[],
  window: { from: number; to: number },
): number[] | null {
  const schedule = {
    type: "cron" as const,
    cron: [...rules],
    timezone: zone,
    ...(exclude.length === 0 ? {} : { exclude: [...exclude] }),
  };
  const out: number[] = [];
  let after = window.from;
  try {
    for (;;) {
      const chunk = nextOccurrences(schedule, { after: new Date(after), count: 1000 });
      out.push(...chunk.map((d) => d.getTime()).filter((t) => t <= window.to));
      const last = chunk.at(-1)?.getTime();
      if (last === undefined || last >= window.to) return out;
      after = last;
    }
  } catch (error) {
    if (error instanceof ValidationError && /30 years|never match/.test(error.message)) return null;
    throw error;
  }
}

const second = fc.constantFrom("0", "30", "*/20", "0,45", "15-45/15", "*/7");
const minute = fc.constantFrom("0", "30", "*/15", "*", "0,30", "45", "15-45/15", "*/7", "59");
const hour = fc.constantFrom("0", "1", "2", "3", "1-3", "*", "*/2", "0-3", "23", "12", "22-23");
const dom = fc.constantFrom(
  "*",
  "?",
  "L",
  "L-1",
  "L-2",
  "LW",
  "1W",
  "15W",
  "29W",
  "30W",
  "31W",
  "1-15",
  "*/2",
  "L,15",
  "28-31",
  "1,LW",
);
const dow = fc.constantFrom(
  "*",
  "?",
  "0",
  "SUNL",
  "sun#1",
  "0#2",
  "5L",
  "FRI#2",
  "1-5",
  "sat,sun",
  "MON#5",
  "6L,1#1",
);
const rule = fc
  .tuple(second, minute, hour, dom, fc.constantFrom("*", "*", "1-6", "2,3,10,11"), dow)
  .map((fields) => fields.join(" "));
const rules = fc.array(rule, { minLength: 1, maxLength: 3 });

/** Transitions taken from the zones' rules (hand-listed, not from the engine). */
const TRANSITIONS: readonly (readonly [string, string])[] = [
  ["America/New_York", "2024-03-10T07:00:00Z"],
  ["America/New_York", "2026-11-01T06:00:00Z"],
  ["Europe/Berlin", "2024-03-31T01:00:00Z"],
  ["Europe/Berlin", "2024-10-27T01:00:00Z"],
  ["Australia/Lord_Howe", "2024-04-06T15:00:00Z"],
  ["Australia/Lord_Howe", "2024-10-05T15:30:00Z"],
  ["America/Sao_Paulo", "2018-11-04T03:00:00Z"],
  ["America/Sao_Paulo", "2018-02-18T02:00:00Z"],
  ["Pacific/Apia", "2011-12-30T10:00:00Z"],
];

/** Month ends of every length, leap and common years (windows of 5 days from 00:00Z). */
const MONTH_ENDS = [
  "2024-02-27",
  "2023-02-26",
  "2100-02-26",
  "2024-04-28",
  "2026-05-29",
  "2025-08-29",
  "2021-12-29",
  "2026-10-29",
  "2024-03-28",
];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"];

/** Skip no day, one day of the window, or every Sunday (as a list of local dates in the window). */
function excludedDates(choice: number, from: number, to: number, zone: string): string[] {
  if (choice === 0) return [];
  const wall = wallClock(zone);
  const dates: string[] = [];
  for (let t = from - (from % DAY); t <= to + DAY; t += DAY) {
    const date = new Date(wall(t)).toISOString().slice(0, 10);
    const sunday = new Date(`${date}T00:00:00Z`).getUTCDay() === 0;
    if ((choice === 1 && t === from - (from % DAY) + DAY) || (choice === 2 && sunday)) {
      dates.push(date);
    }
  }
  return [...new Set(dates)];
}

function compare(
  texts: readonly string[],
  zone: string,
  window: { from: number; to: number },
  skip: number,
): void {
  const exclude = excludedDates(skip, window.from, window.to, zone);
  const actual = engine(texts, zone, exclude, window);
  fc.pre(actual !== null);
  const expected = bruteForce(texts.map(readRule), zone, new Set(exclude), window);
  expect(actual.map((t) => new Date(t).toISOString())).toEqual(
    expected.map((t) => new Date(t).toISOString()),
  );
}

describe("the engine against a brute-force walk (6 fields, day items, several rules, exclude)", () => {
  it(
    "agrees around real DST transitions",
    () => {
      fc.assert(
        fc.property(
          rules,
          fc.constantFrom(...TRANSITIONS),
          fc.integer({ min: 0, max: 16 }),
          fc.integer({ min: 0, max: 2 }),
          (texts, [zone, transition], quarters, skip) => {
            const at = Date.parse(transition);
            compare(
              texts,
              zone,
              { from: at - 30 * 60 * MINUTE + quarters * 15 * MINUTE, to: at + 30 * 60 * MINUTE },
              skip,
            );
          },
        ),
        { numRuns: 60 },
      );
    },
    HEAVY_TIMEOUT_MS,
  );

  it(
    "agrees around month ends of every length",
    () => {
      fc.assert(
        fc.property(
          rules,
          fc.constantFrom(...MONTH_ENDS),
          fc.constantFrom(...ZONES),
          fc.integer({ min: 0, max: 2 }),
          (texts, start, zone, skip) => {
            const from = Date.parse(`${start}T00:00:00Z`);
            compare(texts, zone, { from, to: from + 5 * DAY }, skip);
          },
        ),
        { numRuns: 60 },
      );
    },
    HEAVY_TIMEOUT_MS,
  );
});
