/**
 * The recurrence engine against two independent RFC 5545 implementations (docs/schedules.md#rrule):
 * random rules, a third of them started next to a DST gap or overlap in zones with odd transitions (Lord
 * Howe's 30 minutes, Santiago, Casablanca, Apia's skipped day, Chatham, St John's, Tehran...).
 *
 * The references expand on the wall clock but are wrong for our rule about zones: rrule.js has no zone
 * arithmetic of its own, and rrule-temporal drops a wall time that falls in a gap (the sentence of RFC
 * 5545 3.3.10) where we follow 3.3.5 and read it with the offset before the gap. So each reference
 * expands the rule in UTC (its instants are then the wall times), the two must agree on those wall
 * times, and an oracle built on Temporal (temporal-polyfill, `disambiguation: "compatible"`, which is
 * 3.3.5's rule) turns them into instants; COUNT keeps the first COUNT distinct instants, UNTIL the
 * instants at or before it, RDATE adds and EXDATE removes instants.
 */
import "temporal-polyfill/global";
import { Temporal } from "temporal-polyfill";
import fc from "fast-check";
import rrulePackage from "rrule";
import { RRuleTemporal } from "rrule-temporal";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/domain/errors.js";
import { nextOccurrences } from "../../../src/domain/schedule/next-occurrences.js";
import { nextFireAfter, parseSchedule } from "../../../src/domain/schedule/schedule-spec.js";
import { instant } from "../../../src/domain/time.js";

const { rrulestr } = rrulePackage;

const ZONES = [
  "Australia/Lord_Howe",
  "America/Santiago",
  "Africa/Casablanca",
  "Pacific/Apia",
  "Pacific/Chatham",
  "America/St_Johns",
  "Asia/Tehran",
  "America/New_York",
  "Europe/Berlin",
  "Europe/London",
  "Australia/Adelaide",
  "America/Havana",
  "UTC",
] as const;

const FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"] as const;
const DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const;

interface Case {
  readonly zone: string;
  readonly dtstart: Temporal.PlainDateTime;
  readonly parts: Record<string, string>;
  readonly rdates: readonly Temporal.PlainDateTime[];
  readonly exdateDtstart: boolean;
  readonly afterShiftSeconds: number;
  readonly count: number;
}

function compact(dt: Temporal.PlainDateTime): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(dt.year, 4)}${p(dt.month)}${p(dt.day)}T${p(dt.hour)}${p(dt.minute)}${p(dt.second)}`;
}

/** 3.3.5's instant of a wall time, by Temporal: the earlier of a repeated time, a gap time shifted by the gap. */
function oracleInstant(zone: string, wall: Temporal.PlainDateTime): number {
  return wall.toZonedDateTime(zone, { disambiguation: "compatible" }).epochMilliseconds;
}

/** A DST transition of `zone` between 2015 and 2035 (null for a zone without one). */
function transitionNear(zone: string, seed: number): Temporal.ZonedDateTime | null {
  const start = Temporal.Instant.fromEpochMilliseconds(
    Date.UTC(2015, 0, 1) + (seed % 20) * 365 * 86_400_000,
  ).toZonedDateTimeISO(zone);
  return start.getTimeZoneTransition("next");
}

const list = <T>(arb: fc.Arbitrary<T>, max: number) =>
  fc.uniqueArray(arb, { minLength: 1, maxLength: max }).map((xs) => xs.join(","));
/** `arb` one time in `oneIn`, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
const signed = (max: number) => fc.integer({ min: 1, max }).chain((n) => fc.constantFrom(n, -n));

const partsArb = fc
  .record({
    freq: fc.constantFrom(
      ...FREQS.flatMap((f, i) => Array<string>([4, 4, 4, 4, 2, 2, 1][i] ?? 1).fill(f)),
    ),
    interval: fc.oneof(
      fc.constant(1),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 5, max: 120 }),
    ),
    end: fc.oneof(
      fc.constant<null>(null),
      fc.record({ count: fc.integer({ min: 1, max: 40 }) }),
      fc.record({ untilDays: fc.integer({ min: 1, max: 800 }) }),
    ),
    byMonth: sometimes(list(fc.integer({ min: 1, max: 12 }), 4), 3),
    byWeekNo: sometimes(list(signed(53), 2), 8),
    byYearDay: sometimes(list(signed(366), 3), 8),
    byMonthDay: sometimes(list(signed(31), 3), 3),
    byDay: sometimes(
      fc.uniqueArray(fc.tuple(sometimes(signed(5), 2), fc.constantFrom(...DAYS)), {
        minLength: 1,
        maxLength: 3,
      }),
      2,
    ),
    byHour: sometimes(list(fc.integer({ min: 0, max: 23 }), 3), 3),
    byMinute: sometimes(list(fc.integer({ min: 0, max: 59 }), 3), 4),
    bySecond: sometimes(list(fc.integer({ min: 0, max: 59 }), 2), 8),
    bySetPos: sometimes(list(signed(4), 2), 6),
    wkst: sometimes(fc.constantFrom(...DAYS), 6),
  })
  .map((r) => {
    const freq = r.freq;
    const parts: Record<string, string> = { FREQ: freq };
    if (r.interval !== 1) {
      // Long intervals only where they stay meaningful (every 90 minutes, not every 90 years).
      parts["INTERVAL"] = String(
        ["HOURLY", "MINUTELY", "SECONDLY"].includes(freq) ? r.interval : Math.min(r.interval, 4),
      );
    }
    if (r.byMonth !== null) parts["BYMONTH"] = r.byMonth;
    if (r.byWeekNo !== null && freq === "YEARLY") parts["BYWEEKNO"] = r.byWeekNo;
    if (r.byYearDay !== null && ["YEARLY", "HOURLY", "MINUTELY", "SECONDLY"].includes(freq)) {
      parts["BYYEARDAY"] = r.byYearDay;
    }
    if (r.byMonthDay !== null && freq !== "WEEKLY") parts["BYMONTHDAY"] = r.byMonthDay;
    if (r.byDay !== null) {
      const ordinals = (freq === "MONTHLY" || freq === "YEARLY") && parts["BYWEEKNO"] === undefined;
      // Ordinal and plain weekdays are not mixed in one BYDAY: both references drop one kind then
      // (rrule-temporal the plain days, rrule.js every day); rrule-rules.test.ts covers the mix.
      const ordinal = ordinals && r.byDay[0]?.[0] !== null;
      parts["BYDAY"] = [...new Set(r.byDay.map(([n, d]) => (ordinal ? `${n ?? 1}${d}` : d)))].join(
        ",",
      );
    }
    if (r.byHour !== null) parts["BYHOUR"] = r.byHour;
    if (r.byMinute !== null) parts["BYMINUTE"] = r.byMinute;
    if (r.bySecond !== null) parts["BYSECOND"] = r.bySecond;
    if (r.bySetPos !== null && Object.keys(parts).some((k) => k.startsWith("BY"))) {
      parts["BYSETPOS"] = r.bySetPos;
    }
    if (r.wkst !== null) parts["WKST"] = r.wkst;
    return { parts, end: r.end };
  });

const caseArb: fc.Arbitrary<Case & { end: { count: number } | { untilDays: number } | null }> = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    rule: partsArb,
    nearTransition: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
    seed: fc.integer({ min: 0, max: 1_000_000 }),
    wallSeconds: fc.integer({ min: 0, max: 86_399 }),
    rdates: fc.array(fc.integer({ min: -30, max: 400 }), { maxLength: 2 }),
    exdateDtstart: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    afterShiftSeconds: fc.oneof(
      fc.constant(-1),
      fc.integer({ min: -3 * 86_400, max: 0 }),
      fc.integer({ min: 0, max: 300 * 86_400 }),
    ),
    count: fc.integer({ min: 1, max: 25 }),
  })
  .map((r) => {
    let dtstart = Temporal.PlainDateTime.from("2020-01-01T00:00:00").add({
      days: r.seed % 4000,
      seconds: r.wallSeconds,
    });
    const subDaily = ["HOURLY", "MINUTELY", "SECONDLY"].includes(r.rule.parts["FREQ"] ?? "");
    const transition = r.nearTransition ? transitionNear(r.zone, r.seed) : null;
    if (transition !== null) {
      // Start a few days (sub-daily: a few hours) before a transition, at a wall time the jump or the
      // fall-back touches, so the first instances meet it.
      const before = transition.subtract({ seconds: 1 }).toPlainDateTime();
      dtstart = subDaily
        ? before.subtract({ minutes: (r.wallSeconds % 180) + 1 }).round("minute")
        : before
            .subtract({ days: r.seed % 4 })
            .round({ smallestUnit: "minute", roundingIncrement: 15 });
    }
    return {
      zone: r.zone,
      dtstart,
      parts: r.rule.parts,
      end: r.rule.end,
      rdates: r.rdates.map((d) => dtstart.add({ days: d }).add({ minutes: 7 })),
      exdateDtstart: r.exdateDtstart,
      afterShiftSeconds: r.afterShiftSeconds,
      count: r.count,
    };
  });

function ruleText(
  c: Case,
  end: { count: number } | { untilDays: number } | null,
  untilAt: number | null,
): string {
  const parts = { ...c.parts };
  if (end !== null && "count" in end) parts["COUNT"] = String(end.count);
  if (untilAt !== null) {
    const u = Temporal.Instant.fromEpochMilliseconds(untilAt)
      .toZonedDateTimeISO("UTC")
      .toPlainDateTime();
    parts["UNTIL"] = `${compact(u)}Z`;
  }
  return Object.entries(parts)
    .map(([k, v]) => `${k}=${v}`)
    .join(";");
}

/** The recurrence text the engine is given. */
function textOf(c: Case, rule: string): string {
  const tz = c.zone === "UTC" ? ":" : `;TZID=${c.zone}:`;
  const stamp = (dt: Temporal.PlainDateTime) =>
    c.zone === "UTC" ? `${compact(dt)}Z` : compact(dt);
  const lines = [`DTSTART${tz}${stamp(c.dtstart)}`, `RRULE:${rule}`];
  if (c.rdates.length > 0) lines.push(`RDATE${tz}${c.rdates.map(stamp).join(",")}`);
  if (c.exdateDtstart) lines.push(`EXDATE${tz}${stamp(c.dtstart)}`);
  return lines.join("\n");
}

const MAX_WALLS = 4000;

const iso = (at: number): string => new Date(at).toISOString();

/** The rule's text for a reference: without COUNT or UNTIL, in UTC, so that its instants are wall times. */
function referenceText(c: Case): string {
  return `DTSTART:${compact(c.dtstart)}Z\nRRULE:${ruleText(c, null, null)}`;
}

function wallOfDate(d: Date): Temporal.PlainDateTime {
  return Temporal.Instant.fromEpochMilliseconds(d.getTime())
    .toZonedDateTimeISO("UTC")
    .toPlainDateTime();
}

/** rrule-temporal's wall times up to `stop`; null when it gives up (its iteration cap). */
function temporalWalls(
  c: Case,
  stop: (wall: Temporal.PlainDateTime, i: number) => boolean,
): Temporal.PlainDateTime[] | null {
  const walls: Temporal.PlainDateTime[] = [];
  try {
    new RRuleTemporal({ rruleString: referenceText(c), maxIterations: 20_000 }).all((z, i) => {
      const wall = z.toPlainDateTime();
      if (stop(wall, i)) return false;
      walls.push(wall);
      return true;
    });
  } catch (error) {
    if (error instanceof Error && /Maximum/.test(error.message)) return null;
    throw error;
  }
  return walls;
}

/** rrule.js's wall times from DTSTART to `last` (the span rrule-temporal covered, so it ends). */
function rruleJsWalls(c: Case, last: Temporal.PlainDateTime): Temporal.PlainDateTime[] {
  const from = new Date(Date.UTC(c.dtstart.year, c.dtstart.month - 1, c.dtstart.day) - 86_400_000);
  const to = new Date(last.toZonedDateTime("UTC").epochMilliseconds);
  // rrule.js lists a period's times in the order the parts were written: sorted here.
  return rrulestr(referenceText(c))
    .between(from, to, true)
    .sort((x, y) => x.getTime() - y.getTime())
    .map(wallOfDate);
}

interface Expected {
  readonly byTemporal: number[];
  readonly byRruleJs: number[];
  readonly referencesAgree: boolean;
  /** The references were expanded this far: later fires are not compared. */
  readonly horizonAt: number;
}

function expected(
  c: Case,
  end: { count: number } | { untilDays: number } | null,
  after: number,
  untilAt: number | null,
): Expected | null {
  const afterWall = Temporal.Instant.fromEpochMilliseconds(after)
    .toZonedDateTimeISO(c.zone)
    .toPlainDateTime();
  const latest = Temporal.PlainDateTime.compare(afterWall, c.dtstart) > 0 ? afterWall : c.dtstart;
  const horizon = latest.add({ years: 40 });
  const needed = end !== null && "count" in end ? end.count : 0;
  let beyond = 0;
  const stop = (wall: Temporal.PlainDateTime, i: number): boolean => {
    if (i >= MAX_WALLS || Temporal.PlainDateTime.compare(wall, horizon) > 0) return true;
    if (i < needed + 2) return false;
    // Enough wall times two days past `after` to hold the first `count` fires.
    if (Temporal.PlainDateTime.compare(wall, afterWall.add({ days: 2 })) > 0) beyond++;
    return beyond > c.count + 2;
  };
  const a = temporalWalls(c, stop);
  if (a === null || a.length === 0) return null;
  const b = rruleJsWalls(c, a[a.length - 1]!);
  const agree = a.length === b.length && a.every((w, i) => w.equals(b[i]!));
  // Compared up to where rrule-temporal stopped (less a day: a gap time lands up to a day later).
  const horizonAt =
    Math.min(oracleInstant(c.zone, horizon), oracleInstant(c.zone, a[a.length - 1]!)) -
    26 * 3_600_000;
  const firesOf = (walls: readonly Temporal.PlainDateTime[]): number[] => {
    const seen = new Set<number>();
    const instants: number[] = [];
    for (const wall of walls) {
      const at = oracleInstant(c.zone, wall);
      if (seen.has(at)) continue;
      if (needed > 0 && seen.size >= needed) break;
      seen.add(at);
      if (untilAt !== null && at > untilAt) continue;
      instants.push(at);
    }
    const rdates = c.rdates.map((w) => oracleInstant(c.zone, w));
    const exdates = new Set(c.exdateDtstart ? [oracleInstant(c.zone, c.dtstart)] : []);
    return [...new Set([...instants, ...rdates])]
      .filter((at) => at > after && !exdates.has(at) && at <= horizonAt)
      .sort((x, y) => x - y)
      .slice(0, c.count);
  };
  return { byTemporal: firesOf(a), byRruleJs: firesOf(b), referencesAgree: agree, horizonAt };
}

describe("rrule schedules against rrule-temporal and rrule.js, with a Temporal zone oracle", () => {
  it("give the same next occurrences for random rules, a third of them at DST transitions", () => {
    let compared = 0;
    let disagreements = 0;
    let refused = 0;
    let unverified = 0;
    let worstMsPerFire = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const dtstartAt = oracleInstant(c.zone, c.dtstart);
        const untilAt =
          c.end !== null && "untilDays" in c.end
            ? dtstartAt +
              c.end.untilDays *
                3_600_000 *
                (["HOURLY", "MINUTELY", "SECONDLY"].includes(c.parts["FREQ"] ?? "") ? 1 : 24)
            : null;
        const rule = ruleText(c, c.end, untilAt);
        const text = textOf(c, rule);
        const after = Math.floor(dtstartAt / 1000) * 1000 + c.afterShiftSeconds * 1000;
        let ours: number[];
        let elapsed: number;
        try {
          const ask = (): Date[] =>
            nextOccurrences(
              { type: "rrule", rrule: text },
              { after: new Date(after), count: c.count },
            );
          ours = ask().map((d) => d.getTime());
          // Timed warm, on the parsed schedule as a task holds it: the search for each next fire.
          const spec = parseSchedule(
            { type: "rrule", rrule: text },
            { referenceAt: instant(after), acceptEnded: true },
          );
          const started = performance.now();
          let previous = instant(after);
          for (let i = 0; i < ours.length; i++)
            previous = nextFireAfter(spec, previous) ?? previous;
          elapsed = performance.now() - started;
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          expect(error.message, text).toMatch(/no instance.* within 30 years/);
          refused++;
          return;
        }
        worstMsPerFire = Math.max(worstMsPerFire, elapsed / Math.max(1, ours.length));
        const want = expected(c, c.end, after, untilAt);
        if (want === null) {
          unverified++;
          return;
        }
        const got = ours.filter((at) => at <= want.horizonAt).map(iso);
        const where = `${text}\nafter ${iso(after)}`;
        if (want.referencesAgree) {
          compared++;
          expect(got, where).toEqual(want.byTemporal.map(iso));
          return;
        }
        // The references differ (each has rules it gets wrong, see rrule-rules.test.ts): ours must be
        // one of them.
        disagreements++;
        const matches = [want.byTemporal, want.byRruleJs].filter(
          (fires) => JSON.stringify(fires.map(iso)) === JSON.stringify(got),
        );
        expect(
          matches.length,
          `${where}\nrrule-temporal ${JSON.stringify(want.byTemporal.map(iso))}\nrrule.js ${JSON.stringify(want.byRruleJs.map(iso))}\nours ${JSON.stringify(got)}`,
        ).toBeGreaterThan(0);
      }),
      {
        numRuns: Number(process.env["RRULE_RUNS"] ?? 200),
        seed: Number(process.env["RRULE_SEED"] ?? 20261206),
      },
    );
    console.log(
      `rrule reference: ${compared} compared, ${disagreements} where the references disagree, ${refused} refused, ${unverified} the references could not expand; worst ${worstMsPerFire.toFixed(2)} ms per fire`,
    );
    expect(compared).toBeGreaterThan(Number(process.env["RRULE_RUNS"] ?? 200) / 2);
  }, 300_000);
});
