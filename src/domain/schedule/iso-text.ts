/**
 * ISO-8601 texts of schedules: instants with an offset, local wall times without one, and fixed-length
 * durations. Each parser returns a value or a message in words a user understands; none throws.
 */
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  daysInMonth,
  wallMs,
} from "./civil-time.js";

/** A parse outcome: the value, or why the text is not one. */
export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const problem = <T>(text: string): Parsed<T> => ({ ok: false, problem: text });

/** A date and time as written: wall milliseconds, whether it had a non-zero fraction, and its offset. */
export interface DateTimeText {
  readonly wall: number;
  readonly hasFraction: boolean;
  /** Offset in ms, or `null` when the text has none (a local wall time). */
  readonly offsetMs: number | null;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** Parses `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]`, checking every calendar field. */
export function parseDateTime(text: string): Parsed<DateTimeText> {
  const match = DATE_TIME.exec(text);
  if (match === null) {
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
      return problem(`"${text}" is a date without a time: write e.g. ${text}T09:00:00`);
    }
    return problem(`"${text}" is not an ISO-8601 date and time such as 2026-12-01T09:00:00Z`);
  }
  // Groups that did not take part in the match are undefined at run time.
  const groups: readonly (string | undefined)[] = match;
  const [, y = "", mo = "", d = "", h = "", mi = "", s = "0", fraction = "", zulu, sign, oh, om] =
    groups;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1) return problem(`"${text}" has year 0000, which is out of range`);
  if (month < 1 || month > 12) return problem(`"${text}" has month ${mo}, out of range 01-12`);
  if (day < 1 || day > daysInMonth(year, month)) {
    return problem(`"${text}" has day ${d}, which does not exist in ${y}-${mo}`);
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return problem(`"${text}" has a time of day out of range (00:00:00-23:59:59)`);
  }
  const offsetHours = Number(oh ?? "0");
  const offsetMinutes = Number(om ?? "0");
  if (offsetHours > 23 || offsetMinutes > 59) return problem(`"${text}" has an invalid offset`);
  const offsetMagnitude = offsetHours * MS_PER_HOUR + offsetMinutes * MS_PER_MINUTE;
  const offsetMs =
    zulu !== undefined
      ? 0
      : sign === undefined
        ? null
        : sign === "-"
          ? -offsetMagnitude
          : offsetMagnitude;
  const millis = Number(fraction.padEnd(3, "0").slice(0, 3));
  return ok({
    wall: wallMs(year, month, day, hour, minute, second) + millis,
    hasFraction: /[1-9]/.test(fraction),
    offsetMs,
  });
}

/** Parses an instant that carries an offset or `Z`, to epoch milliseconds. */
export function parseInstantText(text: string): Parsed<number> {
  const parsed = parseDateTime(text);
  if (!parsed.ok) return parsed;
  if (parsed.value.offsetMs === null) {
    return problem(`"${text}" has no offset: add Z or an offset such as +01:00`);
  }
  return ok(parsed.value.wall - parsed.value.offsetMs);
}

const UNIT_MS = {
  W: 7 * MS_PER_DAY,
  D: MS_PER_DAY,
  H: MS_PER_HOUR,
  M: MS_PER_MINUTE,
  S: MS_PER_SECOND,
};
const DURATION =
  /^P(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i;
/** Longest accepted duration: 100 years of 365 days. */
export const MAX_DURATION_MS = 36_500 * MS_PER_DAY;

function componentMs(text: string, unitMs: number): number {
  const [whole = "0", fraction = ""] = text.split(/[.,]/);
  const fractionMs =
    fraction === ""
      ? 0
      : (Number(fraction.slice(0, 9)) * unitMs) / 10 ** Math.min(fraction.length, 9);
  return Number(whole) * unitMs + fractionMs;
}

/** The short form: units in this order, each at most once, lower case (`M` would read as months). */
const SHORT_DURATION = /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const SHORT_UNITS_MS = [UNIT_MS.W, UNIT_MS.D, UNIT_MS.H, UNIT_MS.M, UNIT_MS.S, 1];

/** `1h30m`, `90s`, `2d`, `500ms` in milliseconds, or null when `text` is not in the short form. */
function shortDurationMs(text: string): number | null {
  const match = text === "" ? null : SHORT_DURATION.exec(text);
  if (match === null) return null;
  // Groups that did not take part in the match are undefined at run time.
  const parts: readonly (string | undefined)[] = match.slice(1);
  return parts.reduce<number>(
    (sum, part, i) => sum + (part === undefined ? 0 : Number(part) * (SHORT_UNITS_MS[i] ?? 0)),
    0,
  );
}

/**
 * Parses a fixed-length duration (docs/semantics.md#durations): an ISO-8601 duration of weeks, days (24
 * hours), hours, minutes and seconds (`PT1H30M`), the short form (`1h30m`, `5m`, `90s`, `2d`, `1w`,
 * `500ms`), or a whole number of seconds (as a number or digits). The result is whole seconds unless
 * `wholeSeconds` is false (the CLI's tuning flags take `500ms`), and at least `minMs`. Months and years
 * are refused: they have no fixed length.
 */
export function parseDuration(
  value: unknown,
  minMs: number,
  { wholeSeconds = true }: { readonly wholeSeconds?: boolean } = {},
): Parsed<number> {
  let ms: number;
  const short = typeof value === "string" ? shortDurationMs(value) : null;
  if (typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value))) {
    const seconds = Number(value);
    if (!Number.isSafeInteger(seconds))
      return problem(`${String(value)} is not a whole number of seconds`);
    ms = seconds * MS_PER_SECOND;
  } else if (short !== null) {
    ms = short;
    if (wholeSeconds && ms % MS_PER_SECOND !== 0) {
      return problem(`"${String(value)}" is not a whole number of seconds`);
    }
  } else if (typeof value === "string") {
    const match = DURATION.exec(value);
    if (match === null || value.length < 3 || /T$/i.test(value)) {
      return problem(
        `"${value}" is not a duration such as 5m, 1h30m, 2d, PT5M or P1DT2H, nor a number of seconds`,
      );
    }
    // Groups that did not take part in the match are undefined at run time.
    const groups: readonly (string | undefined)[] = match.slice(1);
    if (groups[0] !== undefined || groups[1] !== undefined) {
      return problem(`"${value}": months and years have no fixed length; use a cron schedule`);
    }
    const units = [UNIT_MS.W, UNIT_MS.D, UNIT_MS.H, UNIT_MS.M, UNIT_MS.S];
    const present = units.flatMap((unitMs, i) => {
      const part = groups[i + 2];
      return part === undefined ? [] : [{ part, unitMs }];
    });
    if (present.slice(0, -1).some((c) => /[.,]/.test(c.part))) {
      return problem(`"${value}": only the last component may have a fraction`);
    }
    ms = present.reduce((sum, c) => sum + componentMs(c.part, c.unitMs), 0);
    if (!Number.isInteger(ms) || (wholeSeconds && ms % MS_PER_SECOND !== 0)) {
      return problem(`"${value}" is not a whole number of seconds`);
    }
  } else {
    return problem("must be a duration (such as 5m or PT5M) or a number of seconds");
  }
  if (ms < minMs) {
    return problem(
      minMs === 0
        ? "must not be negative"
        : `must be at least ${minMs / MS_PER_SECOND} second${minMs === MS_PER_SECOND ? "" : "s"}`,
    );
  }
  if (ms > MAX_DURATION_MS) return problem("must be at most 100 years (36500 days)");
  return ok(ms);
}

/** The ISO-8601 text of a whole-second duration, in days, hours, minutes and seconds (`PT0S` for 0). */
export function formatDuration(ms: number): string {
  let rest = Math.floor(ms / MS_PER_SECOND);
  const days = Math.floor(rest / 86_400);
  rest -= days * 86_400;
  const hours = Math.floor(rest / 3600);
  const minutes = Math.floor((rest % 3600) / 60);
  const seconds = rest % 60;
  const time = `${hours > 0 ? `${hours}H` : ""}${minutes > 0 ? `${minutes}M` : ""}${seconds > 0 ? `${seconds}S` : ""}`;
  if (days === 0 && time === "") return "PT0S";
  return `P${days > 0 ? `${days}D` : ""}${time === "" ? "" : `T${time}`}`;
}
