/**
 * Days to skip (docs/schedules.md#exclude): a schedule's `exclude` list of local dates, inclusive date
 * ranges, day rules (the three day fields of a cron expression) and named calendars, read in the
 * schedule's zone. Parses the public shape, writes it back, and answers which item (if any) excludes a
 * local date. Pure: a named calendar arrives already read, as a snapshot with its version.
 */
import type { FieldError } from "../errors.js";
import { MS_PER_DAY, civilFromDays, daysFromCivil, daysInMonth } from "./civil-time.js";
import type { CronExpression } from "./cron-expression.js";
import { parseCron } from "./cron-expression.js";
import { dateMatches, firstMatchingWall } from "./cron-matcher.js";
import { spendWork } from "./work-budget.js";

/** One day or days to skip, as a calendar holds it. Dates are days since 1970-01-01. */
export type CalendarItem =
  | { readonly kind: "date"; readonly day: number }
  | { readonly kind: "range"; readonly from: number; readonly to: number }
  | { readonly kind: "days"; readonly text: string; readonly rule: CronExpression };

/** A named calendar as a schedule holds it: its items as read at `version`. */
export interface CalendarExclusion {
  readonly kind: "calendar";
  readonly name: string;
  readonly version: number;
  readonly items: readonly CalendarItem[];
}

export type Exclusion = CalendarItem | CalendarExclusion;

/** A calendar read from storage, as `parseExclusions` takes it. */
export interface CalendarSnapshot {
  readonly name: string;
  readonly version: number;
  readonly items: readonly CalendarItem[];
}

/** Which item excludes a date, and the calendar it came from (null for the schedule's own items). */
export interface ExclusionHit {
  readonly item: CalendarItem;
  readonly calendar: string | null;
}

/** The public shape of one item a calendar holds: `"2026-12-25"`, `{from, to}` or `{days}`. */
export type CalendarItemInput =
  string | { readonly from: string; readonly to: string } | { readonly days: string };

/** The public shape of one item of `exclude`: a calendar item, or `{calendar}`. */
export type ExclusionInput = CalendarItemInput | { readonly calendar: string };

/** The most items one `exclude` list or one calendar holds. */
export const MAX_EXCLUSION_ITEMS = 1000;

/**
 * The most items a schedule's exclusions hold with the calendars they name expanded (each calendar
 * counted once however often it is named): what one date's check can cost (docs/security.md#bounded-work).
 */
export const MAX_EXPANDED_EXCLUSION_ITEMS = 1000;

/** A calendar's name: letters, digits, `_`, `-` and `.`, 1 to 64 characters, not starting with `.`. */
export const CALENDAR_NAME_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const THIRTY_YEARS_DAYS = Math.round(30 * 365.2425);

/** A `YYYY-MM-DD` local date as days since 1970-01-01, or the reason it is not one. */
export function parseLocalDate(text: unknown): number | string {
  if (typeof text !== "string") return "must be a date such as 2026-12-25";
  const match = DATE.exec(text);
  if (match === null) return `"${text}" is not a date such as 2026-12-25 (YYYY-MM-DD)`;
  const [year, month, day] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return `"${text}" is not a real date`;
  }
  return daysFromCivil(year, month, day);
}

/** `YYYY-MM-DD` of a day count. */
export function formatLocalDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** The three day fields of a cron expression, parsed with the cron grammar. */
function parseDayRule(text: unknown, referenceDay: number): CronExpression | string {
  if (typeof text !== "string" || text.trim().split(/\s+/).length !== 3 || text.includes("@")) {
    return 'must be the three day fields of a cron expression (day-of-month month day-of-week), such as "25 12 *"';
  }
  const parsed = parseCron(`0 0 ${text}`);
  if (!parsed.ok) return parsed.problems.join("; ");
  const rule = parsed.value;
  // Searched month by month, not day by day: a rule matching one day in four years costs 48 steps.
  const from = referenceDay * MS_PER_DAY;
  const match = firstMatchingWall(rule, from, from + (THIRTY_YEARS_DAYS + 1) * MS_PER_DAY);
  return match === null ? "never matches a real date within 30 years" : rule;
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function keysProblem(
  value: Readonly<Record<string, unknown>>,
  keys: readonly string[],
): string | null {
  const extra = Object.keys(value).filter((key) => !keys.includes(key));
  return extra.length === 0 ? null : `unknown field ${extra.map((k) => `"${k}"`).join(", ")}`;
}

/** One item other than a calendar reference into `out`, or field errors. */
function parseItem(
  value: unknown,
  field: string,
  referenceDay: number,
  errors: FieldError[],
): CalendarItem | null {
  const fail = (name: string, message: string): null => {
    errors.push({ field: name, message });
    return null;
  };
  if (typeof value === "string") {
    const day = parseLocalDate(value);
    return typeof day === "string" ? fail(field, day) : { kind: "date", day };
  }
  if (isObject(value) && "days" in value) {
    const extra = keysProblem(value, ["days"]);
    if (extra !== null) return fail(field, extra);
    const rule = parseDayRule(value["days"], referenceDay);
    if (typeof rule === "string") return fail(`${field}.days`, rule);
    return { kind: "days", text: rule.text.slice("0 0 ".length), rule };
  }
  if (isObject(value) && ("from" in value || "to" in value)) {
    const extra = keysProblem(value, ["from", "to"]);
    if (extra !== null) return fail(field, extra);
    const from = parseLocalDate(value["from"]);
    const to = parseLocalDate(value["to"]);
    if (typeof from === "string") fail(`${field}.from`, from);
    if (typeof to === "string") fail(`${field}.to`, to);
    if (typeof from === "string" || typeof to === "string") return null;
    if (to < from) return fail(`${field}.to`, "must not be before from");
    return { kind: "range", from, to };
  }
  return fail(
    field,
    'must be a date ("2026-12-25"), a range ({"from": ..., "to": ...}), a day rule ({"days": "25 12 *"}) or a calendar ({"calendar": NAME})',
  );
}

function listOf(value: unknown, field: string, errors: FieldError[]): readonly unknown[] | null {
  if (!Array.isArray(value)) {
    errors.push({ field, message: "must be a list of dates, ranges, day rules or calendars" });
    return null;
  }
  if (value.length > MAX_EXCLUSION_ITEMS) {
    errors.push({ field, message: `must hold at most ${MAX_EXCLUSION_ITEMS} items` });
    return null;
  }
  return value as readonly unknown[];
}

/**
 * A named calendar's items (dates, ranges, day rules; no calendar references). `referenceDay` is today
 * (days since 1970-01-01): a day rule must match some date within 30 years of it.
 */
export function parseCalendarItems(
  value: unknown,
  field: string,
  referenceDay: number,
): { readonly items: CalendarItem[]; readonly errors: FieldError[] } {
  const errors: FieldError[] = [];
  const items: CalendarItem[] = [];
  const list = listOf(value, field, errors) ?? [];
  list.forEach((entry, i) => {
    if (isObject(entry) && "calendar" in entry) {
      errors.push({ field: `${field}.${i}`, message: "a calendar cannot name another calendar" });
      return;
    }
    const item = parseItem(entry, `${field}.${i}`, referenceDay, errors);
    if (item !== null) items.push(item);
  });
  return { items, errors };
}

/** The names of the calendars a schedule's input refers to (to read them before parsing it). */
export function calendarNamesIn(schedule: unknown): string[] {
  if (!isObject(schedule) || !Array.isArray(schedule["exclude"])) return [];
  const names = new Set<string>();
  for (const entry of schedule["exclude"] as readonly unknown[]) {
    if (isObject(entry) && typeof entry["calendar"] === "string") names.add(entry["calendar"]);
  }
  return [...names];
}

/**
 * A schedule's `exclude` list. Calendar references are resolved from `calendars` (null: none can be,
 * as in `nextOccurrences`, which has no store).
 */
export function parseExclusions(
  value: unknown,
  field: string,
  ctx: {
    readonly referenceDay: number;
    readonly calendars: ReadonlyMap<string, CalendarSnapshot> | null;
  },
): { readonly exclusions: Exclusion[]; readonly errors: FieldError[] } {
  const errors: FieldError[] = [];
  const exclusions: Exclusion[] = [];
  const named = new Set<string>();
  const list = listOf(value, field, errors) ?? [];
  list.forEach((entry, i) => {
    const at = `${field}.${i}`;
    if (!(isObject(entry) && "calendar" in entry)) {
      const item = parseItem(entry, at, ctx.referenceDay, errors);
      if (item !== null) exclusions.push(item);
      return;
    }
    const extra = keysProblem(entry, ["calendar"]);
    const name = entry["calendar"];
    if (extra !== null) errors.push({ field: at, message: extra });
    else if (typeof name !== "string" || !CALENDAR_NAME_PATTERN.test(name)) {
      errors.push({ field: `${at}.calendar`, message: "must be a calendar name" });
    } else if (ctx.calendars === null) {
      errors.push({
        field: `${at}.calendar`,
        message: "named calendars are kept by a scheduler: use its preview, or list the dates here",
      });
    } else {
      const calendar = ctx.calendars.get(name);
      if (calendar === undefined) {
        errors.push({ field: `${at}.calendar`, message: `no calendar named "${name}"` });
      } else if (!named.has(name)) {
        // A calendar named again adds nothing: the schedule holds it once.
        named.add(name);
        const { version, items } = calendar;
        exclusions.push({ kind: "calendar", name, version, items });
      }
    }
  });
  const expanded = exclusions.reduce(
    (sum, exclusion) => sum + (exclusion.kind === "calendar" ? exclusion.items.length : 1),
    0,
  );
  if (expanded > MAX_EXPANDED_EXCLUSION_ITEMS) {
    errors.push({
      field,
      message: `holds ${expanded} items with its calendars expanded, over the limit of ${MAX_EXPANDED_EXCLUSION_ITEMS}`,
    });
  }
  return { exclusions, errors };
}

/** The public shape of one calendar item. */
export function calendarItemInput(item: CalendarItem): CalendarItemInput {
  switch (item.kind) {
    case "date":
      return formatLocalDate(item.day);
    case "range":
      return { from: formatLocalDate(item.from), to: formatLocalDate(item.to) };
    case "days":
      return { days: item.text };
  }
}

/** The public shape of one exclusion (a calendar by its name). */
export function exclusionInput(exclusion: Exclusion): ExclusionInput {
  return exclusion.kind === "calendar"
    ? { calendar: exclusion.name }
    : calendarItemInput(exclusion);
}

/**
 * A schedule's exclusions made quick to ask about one date: dates by day, distinct day rules once each,
 * ranges as a list, every one with its place in the order written (calendars expanded), so the first
 * item that excludes a date is still the one named. Built once per exclusion list.
 */
interface CompiledExclusions {
  /** Each excluded date's first place. */
  readonly dates: ReadonlyMap<number, number>;
  readonly ranges: readonly { readonly from: number; readonly to: number; readonly at: number }[];
  /** Distinct day rules (by text), each at its first place. */
  readonly rules: readonly { readonly rule: CronExpression; readonly at: number }[];
  /** The hit each place names. */
  readonly hits: readonly ExclusionHit[];
  /** The steps one date's check costs (work-budget.ts). */
  readonly stepsPerDate: number;
}

const compiledExclusions = new WeakMap<readonly Exclusion[], CompiledExclusions>();

function compileExclusions(exclusions: readonly Exclusion[]): CompiledExclusions {
  const known = compiledExclusions.get(exclusions);
  if (known !== undefined) return known;
  const dates = new Map<number, number>();
  const ranges: { from: number; to: number; at: number }[] = [];
  const rules = new Map<string, { rule: CronExpression; at: number }>();
  const hits: ExclusionHit[] = [];
  const add = (item: CalendarItem, calendar: string | null): void => {
    const at = hits.length;
    hits.push({ item, calendar });
    if (item.kind === "date") {
      if (!dates.has(item.day)) dates.set(item.day, at);
    } else if (item.kind === "range") ranges.push({ from: item.from, to: item.to, at });
    else if (!rules.has(item.text)) rules.set(item.text, { rule: item.rule, at });
  };
  for (const exclusion of exclusions) {
    if (exclusion.kind === "calendar")
      for (const item of exclusion.items) add(item, exclusion.name);
    else add(exclusion, null);
  }
  spendWork(hits.length);
  const compiled: CompiledExclusions = {
    dates,
    ranges,
    rules: [...rules.values()],
    hits,
    stepsPerDate: 1 + ranges.length + rules.size,
  };
  compiledExclusions.set(exclusions, compiled);
  return compiled;
}

/** The first item (in the order written, calendars expanded) that excludes local date `day`. */
export function exclusionOn(exclusions: readonly Exclusion[], day: number): ExclusionHit | null {
  if (exclusions.length === 0) return null;
  const compiled = compileExclusions(exclusions);
  spendWork(compiled.stepsPerDate);
  let first = compiled.dates.get(day) ?? Infinity;
  for (const range of compiled.ranges) {
    if (range.at < first && range.from <= day && day <= range.to) first = range.at;
  }
  if (compiled.rules.length > 0) {
    const date = civilFromDays(day);
    for (const { rule, at } of compiled.rules) {
      if (at < first && dateMatches(rule, date.year, date.month, date.day)) first = at;
    }
  }
  return compiled.hits[first] ?? null;
}

/** The last day of the excluded stretch that starts at `day` (a range's end when one covers it). */
function coveredThrough(exclusions: readonly Exclusion[], day: number): number {
  const { ranges } = compileExclusions(exclusions);
  spendWork(ranges.length);
  let through = day;
  for (const range of ranges) {
    if (range.from <= day && day <= range.to && range.to > through) through = range.to;
  }
  return through;
}

/**
 * The first local date at or after `day` that no item excludes, looking no further than `lastDay`; null
 * when every date up to it is excluded. Ranges are jumped over whole.
 */
export function nextDayNotExcluded(
  exclusions: readonly Exclusion[],
  day: number,
  lastDay: number,
): number | null {
  let current = day;
  while (current <= lastDay) {
    if (exclusionOn(exclusions, current) === null) return current;
    current = coveredThrough(exclusions, current) + 1;
  }
  return null;
}

/** The local date (days since 1970-01-01) of wall milliseconds. */
export function localDayOf(wall: number): number {
  return Math.floor(wall / MS_PER_DAY);
}
