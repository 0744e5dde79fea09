/**
 * One RRULE line of a recurrence (docs/schedules.md#rrule): its rule parts read and checked against
 * RFC 5545 3.3.10, each problem named with the part and the rule it breaks, and DTSTART's defaults
 * applied.
 */
import { civilOf } from "./civil-time.js";
import { dateTimeOf, DATE_ONLY, RFC } from "./rrule-content-lines.js";
import type { ContentLine } from "./rrule-content-lines.js";
import type { NthWeekday, RecurrenceRule } from "./rrule-rule.js";
import {
  DAILY,
  HOURLY,
  MINUTELY,
  MONTHLY,
  RRULE_FREQUENCIES,
  SECONDLY,
  WEEKDAY_CODES,
  WEEKLY,
  YEARLY,
} from "./rrule-rule.js";

/** The most instances one COUNT may ask for (resolved once, at validation). */
export const MAX_RRULE_COUNT = 100_000;

const PART_NAMES = [
  "FREQ",
  "UNTIL",
  "COUNT",
  "INTERVAL",
  "BYSECOND",
  "BYMINUTE",
  "BYHOUR",
  "BYDAY",
  "BYMONTHDAY",
  "BYYEARDAY",
  "BYWEEKNO",
  "BYMONTH",
  "BYSETPOS",
  "WKST",
] as const;
type PartName = (typeof PART_NAMES)[number];

type Parts = Partial<Record<PartName, string>>;

function splitParts(line: ContentLine, problems: string[]): Parts | null {
  const parts: Parts = {};
  let ok = true;
  for (const item of line.value.split(";")) {
    if (item.trim() === "") continue;
    const eq = item.indexOf("=");
    const name = (eq < 0 ? item : item.slice(0, eq)).trim().toUpperCase();
    const known = PART_NAMES.find((p) => p === name);
    if (eq < 0 || known === undefined) {
      problems.push(
        eq < 0
          ? `"${item}" is not NAME=VALUE (${RFC} 3.3.10)`
          : `${name} is not a rule part of ${RFC} 3.3.10`,
      );
      ok = false;
      continue;
    }
    if (parts[known] !== undefined) {
      problems.push(`${known}: a rule part must not occur more than once (${RFC} 3.3.10)`);
      ok = false;
      continue;
    }
    parts[known] = item.slice(eq + 1).trim();
  }
  return ok ? parts : null;
}

/** A comma list of integers within ±[min, max] (zero refused when `signed`). */
function intList(
  name: PartName,
  text: string | undefined,
  min: number,
  max: number,
  signed: boolean,
  problems: string[],
): number[] | null {
  if (text === undefined) return null;
  const values: number[] = [];
  const pattern = signed ? /^[+-]?\d{1,3}$/ : /^\d{1,2}$/;
  for (const item of text.split(",")) {
    const value = Number(item);
    const fits = signed
      ? Math.abs(value) >= min && Math.abs(value) <= max
      : value >= min && value <= max;
    if (!pattern.test(item) || !fits) {
      const range = signed ? `${min} to ${max} or -${max} to -${min}` : `${min} to ${max}`;
      problems.push(`${name}: "${item}" must be an integer from ${range} (${RFC} 3.3.10)`);
      return null;
    }
    if (!values.includes(value)) values.push(value);
  }
  return values.sort((a, b) => a - b);
}

function weekdayOf(code: string): number {
  return WEEKDAY_CODES.findIndex((c) => c === code.toUpperCase());
}

function readByDay(text: string | undefined, problems: string[]): NthWeekday[] | null {
  if (text === undefined) return null;
  const days: NthWeekday[] = [];
  for (const item of text.split(",")) {
    const m = /^([+-]?\d{1,2})?([A-Za-z]{2})$/.exec(item);
    const weekday = m === null ? -1 : weekdayOf(m[2] ?? "");
    const n = m?.[1] === undefined ? 0 : Number(m[1]);
    if (weekday < 0 || (m?.[1] !== undefined && (n === 0 || Math.abs(n) > 53))) {
      problems.push(
        `BYDAY: "${item}" must be a weekday SU, MO, TU, WE, TH, FR or SA, optionally preceded by an ordinal from 1 to 53 or -53 to -1 (${RFC} 3.3.10)`,
      );
      return null;
    }
    if (!days.some((d) => d.weekday === weekday && d.n === n)) days.push({ weekday, n });
  }
  return days;
}

function positive(name: PartName, text: string | undefined, problems: string[]): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!/^\d{1,9}$/.test(text) || value < 1) {
    problems.push(`${name}: "${text}" must be a positive integer (${RFC} 3.3.10)`);
    return null;
  }
  return value;
}

function readUntil(text: string | undefined, problems: string[]): number | null {
  if (text === undefined) return null;
  if (DATE_ONLY.test(text)) {
    problems.push(
      `UNTIL: "${text}" is a DATE, but it must have DTSTART's value type, a DATE-TIME (${RFC} 3.3.10)`,
    );
    return null;
  }
  const parsed = dateTimeOf(text);
  if (parsed === null) {
    problems.push(`UNTIL: "${text}" is not a date-time such as 20261231T235959Z (${RFC} 3.3.10)`);
    return null;
  }
  if (!parsed.utc) {
    problems.push(
      `UNTIL: "${text}" must be a UTC time ending in Z when DTSTART has a TZID or is UTC (${RFC} 3.3.10)`,
    );
    return null;
  }
  return parsed.wall;
}

/** The cross-part rules of 3.3.10 ("MUST NOT ... when ..."). */
function combinationProblems(freq: number, parts: Parts, byDay: NthWeekday[] | null): string[] {
  const problems: string[] = [];
  const freqName = RRULE_FREQUENCIES[freq] ?? "";
  if (parts.COUNT !== undefined && parts.UNTIL !== undefined) {
    problems.push(`COUNT and UNTIL must not both occur in one rule (${RFC} 3.3.10)`);
  }
  const ordinal = byDay?.some((d) => d.n !== 0) ?? false;
  if (ordinal && freq !== MONTHLY && freq !== YEARLY) {
    problems.push(
      `BYDAY: an ordinal weekday (such as 1MO) is allowed only with FREQ=MONTHLY or YEARLY, not ${freqName} (${RFC} 3.3.10)`,
    );
  }
  if (ordinal && freq === YEARLY && parts.BYWEEKNO !== undefined) {
    problems.push(
      `BYDAY: an ordinal weekday is not allowed with FREQ=YEARLY and BYWEEKNO (${RFC} 3.3.10)`,
    );
  }
  if (parts.BYMONTHDAY !== undefined && freq === WEEKLY) {
    problems.push(`BYMONTHDAY is not allowed with FREQ=WEEKLY (${RFC} 3.3.10)`);
  }
  if (parts.BYYEARDAY !== undefined && (freq === DAILY || freq === WEEKLY || freq === MONTHLY)) {
    problems.push(`BYYEARDAY is not allowed with FREQ=${freqName} (${RFC} 3.3.10)`);
  }
  if (parts.BYWEEKNO !== undefined && freq !== YEARLY) {
    problems.push(`BYWEEKNO is allowed only with FREQ=YEARLY, not ${freqName} (${RFC} 3.3.10)`);
  }
  const byParts = Object.keys(parts).filter((k) => k.startsWith("BY") && k !== "BYSETPOS");
  if (parts.BYSETPOS !== undefined && byParts.length === 0) {
    problems.push(`BYSETPOS must be used with another BYxxx rule part (${RFC} 3.3.10)`);
  }
  return problems;
}

/** One RRULE line checked, with DTSTART's defaults applied (as python-dateutil and rrule.js apply them). */
export function readRule(
  line: ContentLine,
  dtstartWall: number,
  problems: string[],
): Omit<RecurrenceRule, "lastWall"> | null {
  const own: string[] = [];
  const parts = splitParts(line, own);
  const report = (): null => {
    for (const p of own) problems.push(`line ${line.number}: RRULE: ${p}`);
    return null;
  };
  if (parts === null) return report();
  const freqText = parts.FREQ?.toUpperCase();
  const freq = RRULE_FREQUENCIES.findIndex((f) => f === freqText);
  if (freq < 0) {
    own.push(
      parts.FREQ === undefined
        ? `FREQ is required (${RFC} 3.3.10)`
        : `FREQ: "${parts.FREQ}" must be one of ${RRULE_FREQUENCIES.join(", ")} (${RFC} 3.3.10)`,
    );
    return report();
  }
  const interval = positive("INTERVAL", parts.INTERVAL, own) ?? 1;
  const count = positive("COUNT", parts.COUNT, own);
  if (count !== null && count > MAX_RRULE_COUNT) {
    own.push(`COUNT: at most ${MAX_RRULE_COUNT} (punctual's limit; use UNTIL for longer series)`);
  }
  const untilAt = readUntil(parts.UNTIL, own);
  const bySecond = intList("BYSECOND", parts.BYSECOND, 0, 60, false, own);
  const byMinute = intList("BYMINUTE", parts.BYMINUTE, 0, 59, false, own);
  const byHour = intList("BYHOUR", parts.BYHOUR, 0, 23, false, own);
  const byDay = readByDay(parts.BYDAY, own);
  const byMonthDay = intList("BYMONTHDAY", parts.BYMONTHDAY, 1, 31, true, own);
  const byYearDay = intList("BYYEARDAY", parts.BYYEARDAY, 1, 366, true, own);
  const byWeekNo = intList("BYWEEKNO", parts.BYWEEKNO, 1, 53, true, own);
  const byMonth = intList("BYMONTH", parts.BYMONTH, 1, 12, false, own);
  const bySetPos = intList("BYSETPOS", parts.BYSETPOS, 1, 366, true, own);
  let wkst = 1;
  if (parts.WKST !== undefined) {
    wkst = weekdayOf(parts.WKST);
    if (wkst < 0)
      own.push(`WKST: "${parts.WKST}" must be SU, MO, TU, WE, TH, FR or SA (${RFC} 3.3.10)`);
  }
  own.push(...combinationProblems(freq, parts, byDay));
  if (own.length > 0) return report();

  // Defaults from DTSTART (RFC 5545 3.3.10: "information, not contained in the rule, ... derived from DTSTART").
  const start = civilOf(dtstartWall);
  let plain = byDay?.filter((d) => d.n === 0).map((d) => d.weekday) ?? null;
  let nth = byDay?.filter((d) => d.n !== 0) ?? null;
  if (plain?.length === 0) plain = null;
  if (nth?.length === 0) nth = null;
  let months = byMonth;
  let monthDays = byMonthDay;
  if (byWeekNo === null && byYearDay === null && byMonthDay === null && byDay === null) {
    if (freq === YEARLY) {
      months ??= [start.month];
      monthDays = [start.day];
    } else if (freq === MONTHLY) {
      monthDays = [start.day];
    } else if (freq === WEEKLY) {
      plain = [start.weekday];
    }
  }
  return {
    text: line.value,
    freq,
    interval,
    count,
    untilAt,
    byMonth: months,
    byWeekNo,
    byYearDay,
    byMonthDay: monthDays,
    byWeekday: plain,
    byNthWeekday: nth,
    byHour: byHour ?? (freq < HOURLY ? [start.hour] : null),
    byMinute: byMinute ?? (freq < MINUTELY ? [start.minute] : null),
    bySecond:
      (bySecond ?? (freq < SECONDLY ? [start.second] : null))?.filter((s) => s < 60) ?? null,
    bySetPos,
    wkst,
  };
}
