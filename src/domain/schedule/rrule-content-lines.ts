/**
 * The content lines of an RFC 5545 recurrence text (docs/schedules.md#rrule): lines unfolded, each read
 * as NAME;PARAMS:VALUE, and the DATE-TIME values they hold. What the lines mean is rrule-parse.ts's and
 * rrule-rule-parts.ts's.
 */
import { civilOf, wallMs } from "./civil-time.js";

const DATE_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/;
export const DATE_ONLY = /^\d{8}$/;

export const RFC = "RFC 5545";

/** A content line: name, parameters (upper-case names), value. */
export interface ContentLine {
  readonly number: number;
  readonly name: string;
  readonly params: ReadonlyMap<string, string>;
  readonly value: string;
}

/** RFC 5545 3.1: lines end in CRLF or LF; a line starting with a blank continues the previous one. */
export function unfold(text: string): { number: number; text: string }[] {
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

export function contentLine(number: number, text: string, problems: string[]): ContentLine | null {
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

export function dateTimeOf(text: string): { wall: number; utc: boolean } | null {
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
