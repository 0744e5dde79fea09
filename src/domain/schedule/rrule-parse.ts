/**
 * Reads the text of an RFC 5545 recurrence (docs/schedules.md#rrule): a DTSTART line with TZID or in UTC,
 * one or more RRULE lines, optional RDATE and EXDATE lines. Every problem is named with the line, the
 * part and the rule of the RFC it breaks. Zone arithmetic (RDATE, EXDATE) is left to the caller.
 */
import { civilOf, wallMs } from "./civil-time.js";
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
import { timeZoneProblem } from "./time-zone-name.js";

/** A date-time value: wall ms, and where it is read (`utc`, a zone named by TZID, or floating). */
export interface DateTimeValue {
  readonly wall: number;
  readonly utc: boolean;
  readonly zone: string | null;
}

/** The text read, before zone arithmetic. */
export interface RecurrenceText {
  readonly zone: string;
  readonly dtstartWall: number;
  readonly rules: readonly Omit<RecurrenceRule, "lastWall">[];
  readonly rdates: readonly DateTimeValue[];
  readonly exdates: readonly DateTimeValue[];
}

/** The most instances one COUNT may ask for (resolved once, at validation). */
export const MAX_RRULE_COUNT = 100_000;
/** The most lines (RRULE, RDATE, EXDATE) and dates one recurrence holds. */
export const MAX_RRULE_LINES = 64;
export const MAX_RRULE_DATES = 1000;

const DATE_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/;
const DATE_ONLY = /^\d{8}$/;

const RFC = "RFC 5545";
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

/** A content line: name, parameters (upper-case names), value. */
interface ContentLine {
  readonly number: number;
  readonly name: string;
  readonly params: ReadonlyMap<string, string>;
  readonly value: string;
}

/** RFC 5545 3.1: lines end in CRLF or LF; a line starting with a blank continues the previous one. */
function unfold(text: string): { number: number; text: string }[] {
  const lines: { number: number; text: string }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const last = lines[lines.length - 1];
    if ((raw.startsWith(" ") || raw.startsWith("\t")) && last !== undefined) {
      last.text += raw.slice(1);
    } else if (raw.trim() !== "") {
      lines.push({ number: i + 1, text: raw.trim() });
    }
  });
  return lines;
}

function contentLine(number: number, text: string, problems: string[]): ContentLine | null {
  // A bare rule ("FREQ=DAILY;...") is read as an RRULE line, as most libraries do.
  if (/^FREQ=/i.test(text)) return { number, name: "RRULE", params: new Map(), value: text };
  const colon = text.indexOf(":");
  if (colon < 0) {
    problems.push(`line ${number}: expected NAME:VALUE such as RRULE:FREQ=DAILY (${RFC} 3.1)`);
    return null;
  }
  const [name = "", ...rawParams] = text.slice(0, colon).split(";");
  const params = new Map<string, string>();
  for (const param of rawParams) {
    const eq = param.indexOf("=");
    if (eq <= 0) {
      problems.push(`line ${number}: parameter "${param}" must be NAME=VALUE (${RFC} 3.2)`);
      continue;
    }
    const value = param.slice(eq + 1).replace(/^"(.*)"$/, "$1");
    params.set(param.slice(0, eq).toUpperCase(), value);
  }
  return { number, name: name.toUpperCase(), params, value: text.slice(colon + 1).trim() };
}

function dateTimeOf(text: string): { wall: number; utc: boolean } | null {
  const m = DATE_TIME.exec(text.toUpperCase());
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const wall = wallMs(year, month, day, hour, minute, Math.min(second, 59));
  if (civilOf(wall).day !== day) return null;
  return { wall, utc: m[7] === "Z" };
}

/** TZID and VALUE of a DTSTART, RDATE or EXDATE line; a problem text when they are not usable. */
function zoneParam(line: ContentLine, problems: string[]): string | null | undefined {
  const where = `line ${line.number}: ${line.name}`;
  const type = line.params.get("VALUE")?.toUpperCase();
  if (type !== undefined && type !== "DATE-TIME") {
    problems.push(
      `${where}: VALUE=${type} is not supported: a schedule's instances are date-times (${RFC} 3.3.5); ` +
        "use exclude for whole days",
    );
    return undefined;
  }
  const tzid = line.params.get("TZID");
  if (tzid === undefined) return null;
  const problem = timeZoneProblem(tzid);
  if (problem !== null) {
    problems.push(`${where}: TZID ${problem}`);
    return undefined;
  }
  return tzid;
}

function readDateTimes(line: ContentLine, problems: string[]): DateTimeValue[] {
  const zone = zoneParam(line, problems);
  if (zone === undefined) return [];
  const values: DateTimeValue[] = [];
  for (const text of line.value.split(",")) {
    const parsed = dateTimeOf(text.trim());
    if (parsed === null) {
      problems.push(
        `line ${line.number}: ${line.name}: "${text}" is not a date-time such as 20260105T093000 or 20260105T093000Z (${RFC} 3.3.5)`,
      );
    } else if (parsed.utc && zone !== null) {
      problems.push(
        `line ${line.number}: ${line.name}: a UTC time (ending in Z) must not have a TZID (${RFC} 3.3.5)`,
      );
    } else {
      values.push({ ...parsed, zone });
    }
  }
  return values;
}

function readDtstart(line: ContentLine, problems: string[]): DateTimeValue | null {
  const where = `line ${line.number}: DTSTART`;
  if (DATE_ONLY.test(line.value) || line.params.get("VALUE")?.toUpperCase() === "DATE") {
    problems.push(
      `${where}: a schedule needs a time of day: write a DATE-TIME such as 20260105T093000 (${RFC} 3.3.5)`,
    );
    return null;
  }
  if (line.value.includes(",")) {
    problems.push(`${where}: holds exactly one date-time (${RFC} 3.8.2.4)`);
    return null;
  }
  const [value] = readDateTimes(line, problems);
  if (value === undefined) return null;
  if (!value.utc && value.zone === null) {
    problems.push(
      `${where}: a floating time has no zone to run in: add TZID=<IANA zone> or write UTC with a final Z (${RFC} 3.3.5)`,
    );
    return null;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// RRULE parts

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
function readRule(
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

/**
 * Reads the recurrence text. Returns the problems (each naming its line, part and RFC rule) when the
 * text is not a recurrence punctual can run.
 */
export function parseRecurrenceText(
  text: string,
): { ok: true; value: RecurrenceText } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const lines = unfold(text)
    .map((l) => contentLine(l.number, l.text, problems))
    .filter((l): l is ContentLine => l !== null);
  const dtstarts = lines.filter((l) => l.name === "DTSTART");
  const ruleLines = lines.filter((l) => l.name === "RRULE");
  for (const line of lines) {
    if (!["DTSTART", "RRULE", "RDATE", "EXDATE"].includes(line.name)) {
      problems.push(
        `line ${line.number}: ${line.name} is not a recurrence property: expected DTSTART, RRULE, RDATE or EXDATE (${RFC} 3.8.5)`,
      );
    }
  }
  if (dtstarts.length !== 1) {
    problems.push(
      dtstarts.length === 0
        ? `DTSTART is required, e.g. DTSTART;TZID=Europe/Berlin:20260105T093000 (${RFC} 3.8.2.4)`
        : `DTSTART must occur once, not ${dtstarts.length} times (${RFC} 3.8.2.4)`,
    );
  }
  if (ruleLines.length === 0) problems.push(`at least one RRULE line is required (${RFC} 3.8.5.3)`);
  if (ruleLines.length + lines.length > 2 * MAX_RRULE_LINES) {
    problems.push(`at most ${MAX_RRULE_LINES} lines (punctual's limit)`);
  }
  const [dtLine] = dtstarts;
  const dtstart = dtLine === undefined ? null : readDtstart(dtLine, problems);
  if (dtstart === null || problems.length > 0) return { ok: false, problems };
  const rules = ruleLines
    .map((line) => readRule(line, dtstart.wall, problems))
    .filter((r) => r !== null);
  const rdates = lines.filter((l) => l.name === "RDATE").flatMap((l) => readDateTimes(l, problems));
  const exdates = lines
    .filter((l) => l.name === "EXDATE")
    .flatMap((l) => readDateTimes(l, problems));
  if (rdates.length + exdates.length > MAX_RRULE_DATES) {
    problems.push(`at most ${MAX_RRULE_DATES} RDATE and EXDATE values (punctual's limit)`);
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: { zone: dtstart.zone ?? "UTC", dtstartWall: dtstart.wall, rules, rdates, exdates },
  };
}
