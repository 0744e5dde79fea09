/**
 * Reads the text of an RFC 5545 recurrence (docs/schedules.md#rrule): a DTSTART line with TZID or in UTC,
 * one or more RRULE lines, optional RDATE and EXDATE lines. Every problem is named with the line, the
 * part and the rule of the RFC it breaks. Zone arithmetic (RDATE, EXDATE) is left to the caller.
 */
import { contentLine, dateTimeOf, DATE_ONLY, RFC, unfold } from "./rrule-content-lines.js";
import type { ContentLine } from "./rrule-content-lines.js";
import type { RecurrenceRule } from "./rrule-rule.js";
import { readRule } from "./rrule-rule-parts.js";
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

/** The most lines (RRULE, RDATE, EXDATE) and dates one recurrence holds. */
export const MAX_RRULE_LINES = 64;
export const MAX_RRULE_DATES = 1000;

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
