/**
 * The strict ISC/Vixie cron grammar of docs/schedules.md#cron: 5 fields, or 6 with a leading second, lower-case
 * shortcuts, three-letter names, and the Quartz-style day items (`?`, `L`, `W`, `#`: cron-day-items.ts).
 * Parses text into plain data; says nothing about zones or instants.
 */
import type { DayItems, DayItemsDraft } from "./cron-day-items.js";
import {
  emptyDraft,
  freezeDraft,
  parseDayOfMonthItem,
  parseDayOfWeekItem,
  quartzSymbolProblem,
  usesQuartzSymbol,
} from "./cron-day-items.js";

/** A parsed cron expression: the allowed values of each field as sorted lists, plus its DST class. */
export interface CronExpression {
  /** The expression with blanks normalised to single spaces (a shortcut stays a shortcut). */
  readonly text: string;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  /** 0 = Sunday ... 6 = Saturday (7 is folded into 0). */
  readonly daysOfWeek: readonly number[];
  /** `L`, `L-n`, `LW`, `nW`, `VL`, `V#k`: days that depend on the month (or none). */
  readonly dayItems: DayItems;
  /** The day-of-month text does not begin with `*` and is not `?` (Vixie day rule). */
  readonly dayOfMonthRestricted: boolean;
  /** The day-of-week text does not begin with `*` and is not `?` (Vixie day rule). */
  readonly dayOfWeekRestricted: boolean;
  /** No second, minute or hour text begins with `*` (docs/schedules.md#cron DST rule). */
  readonly fixedTime: boolean;
}

/** The outcome of parsing: the expression, or one message per faulty field. */
export type CronParseResult =
  | { readonly ok: true; readonly value: CronExpression }
  | { readonly ok: false; readonly problems: readonly string[] };

export interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const MONTH_NAMES = [
  "jan",
  "feb",
  "mar",
  "apr",
  "may",
  "jun",
  "jul",
  "aug",
  "sep",
  "oct",
  "nov",
  "dec",
];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FULL_DAY_NAMES = [
  "sunday",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
];
const FULL_MONTH_NAMES = [
  ...["january", "february", "march", "april", "may", "june", "july", "august"],
  ...["september", "october", "november", "december"],
];

const SECOND: FieldSpec = { name: "second", min: 0, max: 59 };
const MINUTE: FieldSpec = { name: "minute", min: 0, max: 59 };
const HOUR: FieldSpec = { name: "hour", min: 0, max: 23 };
export const DAY_OF_MONTH: FieldSpec = { name: "day-of-month", min: 1, max: 31 };
export const MONTH: FieldSpec = { name: "month", min: 1, max: 12, names: MONTH_NAMES };
export const DAY_OF_WEEK: FieldSpec = { name: "day-of-week", min: 0, max: 7, names: DAY_NAMES };

/** Vixie shortcuts and their meaning; `@hourly` is the only one with a wildcard time field. */
export const CRON_SHORTCUTS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** A value (number or name) of one field, or the reason it is not one. */
function parseValue(field: FieldSpec, token: string): number | string {
  if (/^\d+$/.test(token)) {
    const value = Number(token);
    if (value < field.min || value > field.max) {
      return `${token} is out of range ${field.min}-${field.max}`;
    }
    return value;
  }
  const lower = token.toLowerCase();
  const index = field.names?.indexOf(lower) ?? -1;
  if (field.names !== undefined && index >= 0) return index + (field === MONTH ? 1 : 0);
  if (field.names !== undefined && [...FULL_DAY_NAMES, ...FULL_MONTH_NAMES].includes(lower)) {
    return `full names such as "${token}" are not supported: use "${lower.slice(0, 3)}"`;
  }
  if (field.names !== undefined && /^[a-z]+$/.test(lower)) {
    return `"${token}" is not a ${field.name === "month" ? "month" : "day"} name (use ${field.names[0] ?? ""}-${field.names.at(-1) ?? ""})`;
  }
  return `"${token}" is not a number`;
}

/** Values of one comma-separated classic item, or the reason it is invalid. */
function parseItem(field: FieldSpec, item: string): number[] | string {
  if (item === "") return "empty item in the list";
  const parts = item.split("/");
  if (parts.length > 2) return `"${item}" has more than one step`;
  const [rangeText = "", stepText] = parts;
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d+$/.test(stepText)) return `step "${stepText}" in "${item}" is not a number`;
    step = Number(stepText);
    if (step === 0) return `step 0 in "${item}" is not allowed (the step must be at least 1)`;
  }
  let low = field.min;
  let high = field.max;
  if (rangeText !== "*") {
    const ends = rangeText.split("-");
    if (ends.length > 2 || ends.includes("")) return `"${item}" is not a valid value or range`;
    const values = ends.map((end) => parseValue(field, end));
    const [first, last = first] = values;
    if (typeof first === "string") return first;
    if (typeof last === "string") return last;
    if (first === undefined || last === undefined) return `"${item}" is not a valid value or range`;
    if (ends.length === 1 && stepText !== undefined) {
      return `"${item}" has a step without a range (write ${rangeText}-${field.max}/${stepText} or */${stepText})`;
    }
    if (first > last) return `range ${rangeText} is descending (ranges do not wrap around)`;
    low = first;
    high = last;
  }
  const values: number[] = [];
  for (let value = low; value <= high; value += step) values.push(value);
  return values;
}

/** A day item of a day field into `draft` (`true`), a classic item (`null`), or the reason it is refused. */
function parseDayItem(field: FieldSpec, item: string, draft: DayItemsDraft): string | null | true {
  if (field === DAY_OF_MONTH) return parseDayOfMonthItem(item, draft);
  if (field === DAY_OF_WEEK) return parseDayOfWeekItem(item, draft);
  return usesQuartzSymbol(item) ? quartzSymbolProblem(item) : null;
}

/**
 * Sorted distinct values of one field (its day items go into `draft`), or a message naming the field and
 * the reason. `?` is the whole day-of-month or day-of-week field, meaning any day.
 */
export function parseField(
  field: FieldSpec,
  text: string,
  draft: DayItemsDraft,
): number[] | string {
  const isDayField = field === DAY_OF_MONTH || field === DAY_OF_WEEK;
  if (isDayField && text === "?") return parseField(field, "*", draft);
  if (isDayField && text.includes("?")) {
    return `${field.name} field: "?" stands alone: it must be the whole field (it means any day)`;
  }
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const special = item === "" ? null : parseDayItem(field, item, draft);
    if (special === true) continue;
    const parsed = special ?? parseItem(field, item);
    if (typeof parsed === "string") return `${field.name} field: ${parsed}`;
    for (const value of parsed) values.add(field === DAY_OF_WEEK && value === 7 ? 0 : value);
  }
  return [...values].sort((a, b) => a - b);
}

function parseShortcut(text: string): string | { expanded: string } {
  const expanded = CRON_SHORTCUTS[text];
  if (expanded !== undefined) return { expanded };
  const lower = text.toLowerCase();
  if (CRON_SHORTCUTS[lower] !== undefined) return `shortcuts are lower case: write ${lower}`;
  if (lower === "@reboot") return "@reboot is not supported: a schedule needs a time";
  return `unknown shortcut ${text} (use ${Object.keys(CRON_SHORTCUTS).join(", ")})`;
}

/**
 * Results by input text (bounded): a batch of a thousand tasks with the same expressions parses them
 * once, and the matcher's tables, kept by expression object, are built once for them too.
 */
const parsedByText = new Map<string, CronParseResult>();
const MAX_PARSED = 4096;

/** Parses a cron expression strictly (docs/schedules.md#cron). */
export function parseCron(input: string): CronParseResult {
  const known = parsedByText.get(input);
  if (known !== undefined) return known;
  const result = parseCronText(input);
  if (parsedByText.size >= MAX_PARSED) parsedByText.clear();
  parsedByText.set(input, result);
  return result;
}

function parseCronText(input: string): CronParseResult {
  const text = input.trim().split(/\s+/).join(" ");
  if (text === "") return { ok: false, problems: ["the cron expression is empty"] };
  let fieldTexts: string[];
  if (text.startsWith("@")) {
    const resolved = parseShortcut(text);
    if (typeof resolved === "string") return { ok: false, problems: [resolved] };
    fieldTexts = ["0", ...resolved.expanded.split(" ")];
  } else {
    fieldTexts = text.split(" ");
    if (fieldTexts.length === 5) fieldTexts = ["0", ...fieldTexts];
    else if (fieldTexts.length !== 6) {
      return {
        ok: false,
        problems: [
          `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (with a leading second), got ${fieldTexts.length}`,
        ],
      };
    }
  }
  const specs = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];
  const draft = emptyDraft();
  const parsed = specs.map((spec, i) => parseField(spec, fieldTexts[i] ?? "", draft));
  const problems = parsed.filter((p): p is string => typeof p === "string");
  if (problems.length > 0) return { ok: false, problems };
  const lists = parsed.filter((p): p is number[] => typeof p !== "string");
  const [seconds = [], minutes = [], hours = [], daysOfMonth = [], months = [], daysOfWeek = []] =
    lists;
  const startsWild = (i: number): boolean => (fieldTexts[i] ?? "").startsWith("*");
  const anyDay = (i: number): boolean => startsWild(i) || fieldTexts[i] === "?";
  return {
    ok: true,
    // Frozen: one parse is shared by every caller that gives the same text.
    value: Object.freeze({
      text,
      seconds: Object.freeze(seconds),
      minutes: Object.freeze(minutes),
      hours: Object.freeze(hours),
      daysOfMonth: Object.freeze(daysOfMonth),
      months: Object.freeze(months),
      daysOfWeek: Object.freeze(daysOfWeek),
      dayItems: freezeDraft(draft),
      dayOfMonthRestricted: !anyDay(3),
      dayOfWeekRestricted: !anyDay(5),
      fixedTime: !startsWild(0) && !startsWild(1) && !startsWild(2),
    }),
  };
}
