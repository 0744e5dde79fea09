/**
 * How a ScheduleSpec is stored: a JSON value that restores the same spec without re-running the checks
 * that depend on the current time. Storage adapters use only these two functions. Values stored by
 * earlier versions (without the fields added since) decode to the spec they meant.
 *
 * A named calendar is stored as a reference, its name and version, never its items
 * (docs/security.md#bounded-work): the store keeps each version's items once, as one packed JSON text
 * (`calendarItemsText`), and hands them back with the task row it reads (`resolveCalendars`), parsed
 * once for every task holding the same version (the texts are equal). A value stored before holds the
 * items itself (`itemsJson`, or `items` earlier still), which decode as they did. A day rule is stored
 * as its text only.
 */
import { NO_DAY_ITEMS } from "./schedule/cron-day-items.js";
import type { CronExpression } from "./schedule/cron-expression.js";
import { parseCron } from "./schedule/cron-expression.js";
import type {
  CalendarExclusion,
  CalendarItem,
  CronSchedule,
  Exclusion,
  IntervalSchedule,
  RRuleSchedule,
  ScheduleSpec,
} from "./schedule/schedule-spec.js";

/** A day rule as stored: its text (a value stored before also holds the parsed rule). */
interface StoredDayRule {
  readonly kind: "days";
  readonly text: string;
  readonly rule?: CronExpression;
}

type StoredItem = Exclude<CalendarItem, { kind: "days" }> | StoredDayRule;

/** A named calendar as stored: a reference (a value stored before holds `itemsJson` or `items`). */
interface StoredCalendar {
  readonly kind: "calendar";
  readonly name: string;
  readonly version: number;
  readonly itemsJson?: string;
  readonly items?: readonly StoredItem[];
}

function encodeItem(item: CalendarItem): StoredItem {
  return item.kind === "days" ? { kind: "days", text: item.text } : item;
}

/** Each items list's stored text, by list: a batch naming one calendar writes it once. */
const itemsTexts = new WeakMap<readonly CalendarItem[], string>();

/**
 * One item in a calendar's stored text, in its shortest form: a date as its day number, a range as
 * `[from, to]`, a day rule as its text (a 1,000-item calendar is 6 to 15 KB).
 */
type PackedItem = number | readonly [number, number] | string;

function packItem(item: CalendarItem): PackedItem {
  switch (item.kind) {
    case "date":
      return item.day;
    case "range":
      return [item.from, item.to];
    case "days":
      return item.text;
  }
}

function unpackItem(packed: PackedItem | StoredItem): CalendarItem {
  if (typeof packed === "number") return { kind: "date", day: packed };
  if (typeof packed === "string") return decodeItem({ kind: "days", text: packed });
  if (Array.isArray(packed)) {
    const [from, to] = packed as readonly [number, number];
    return { kind: "range", from, to };
  }
  return decodeItem(packed as StoredItem);
}

function itemsJsonOf(items: readonly CalendarItem[]): string {
  let text = itemsTexts.get(items);
  if (text === undefined) {
    text = JSON.stringify(items.map(packItem));
    itemsTexts.set(items, text);
  }
  return text;
}

function encodeExclusion(exclusion: Exclusion): StoredItem | StoredCalendar {
  if (exclusion.kind !== "calendar") return encodeItem(exclusion);
  return { kind: "calendar", name: exclusion.name, version: exclusion.version };
}

/** The text a store keeps for one calendar version's items (a 1,000-item calendar is 6 to 15 KB). */
export function calendarItemsText(items: readonly CalendarItem[]): string {
  return itemsJsonOf(items);
}

/** The items of a text `calendarItemsText` wrote (or a JSON list of stored items), parsed once per text. */
export function calendarItemsFromText(text: string): readonly CalendarItem[] {
  return itemsFromJson(text);
}

/**
 * The JSON value stored for `spec`: a cron expression as its text (about 20 bytes, not the 300 to 600
 * of its parsed fields), calendars as above.
 */
export function encodeSchedule(spec: ScheduleSpec): unknown {
  if (spec.type === "once") return spec;
  const exclude = spec.exclude.length === 0 ? spec.exclude : spec.exclude.map(encodeExclusion);
  if (spec.type === "interval" || spec.type === "rrule") return { ...spec, exclude };
  return { ...spec, rules: spec.rules.map((rule) => rule.text), exclude };
}

/** Expressions parsed from their text, by text (bounded): the tasks sharing a rule share its parse. */
const expressions = new Map<string, CronExpression>();
const MAX_EXPRESSIONS = 4096;

function expressionOf(text: string): CronExpression {
  const known = expressions.get(text);
  if (known !== undefined) return known;
  const parsed = parseCron(text);
  // The text was parsed when it was stored: a failure here is a corrupted row, named by the check.
  if (!parsed.ok) throw new Error(`cron "${text}": ${parsed.problems.join("; ")}`);
  if (expressions.size >= MAX_EXPRESSIONS) expressions.clear();
  expressions.set(text, parsed.value);
  return parsed.value;
}

/**
 * A day rule is read from its text, even where a parsed rule was stored with it: one parse per text,
 * shared by every calendar and task holding it (and the matcher's tables, kept by expression, with it).
 */
function decodeItem(item: StoredItem): CalendarItem {
  if (item.kind !== "days") return item;
  return { kind: "days", text: item.text, rule: expressionOf(`0 0 ${item.text}`) };
}

/** Calendar items decoded from their stored text, by text (bounded). */
const itemsByText = new Map<string, readonly CalendarItem[]>();
const MAX_ITEM_TEXTS = 256;

function itemsFromJson(text: string): readonly CalendarItem[] {
  const known = itemsByText.get(text);
  if (known !== undefined) return known;
  const items = Object.freeze((JSON.parse(text) as (PackedItem | StoredItem)[]).map(unpackItem));
  if (itemsByText.size >= MAX_ITEM_TEXTS) itemsByText.clear();
  itemsByText.set(text, items);
  return items;
}

/**
 * A reference not resolved yet: its items are the store's to supply (`resolveCalendars`). It has no
 * `items` at all, so that no path can decide against a calendar it did not read (reading them fails).
 */
function unresolvedCalendar(name: string, version: number): CalendarExclusion {
  return { kind: "calendar", name, version } as CalendarExclusion;
}

/** Whether `exclusion` is a reference whose items the store has not supplied yet. */
function isUnresolved(exclusion: Exclusion): boolean {
  return exclusion.kind === "calendar" && (exclusion.items as unknown) === undefined;
}

/** The items of one calendar version a store read with a task, or undefined when it holds none. */
export type CalendarVersionItems = (
  name: string,
  version: number,
) => readonly CalendarItem[] | undefined;

/**
 * `spec` with the items of the calendars it references, from `lookup` (the same spec when it holds
 * none to resolve). A version the lookup does not hold stays unresolved: reading its items throws.
 */
export function resolveCalendars(spec: ScheduleSpec, lookup: CalendarVersionItems): ScheduleSpec {
  if (spec.type === "once" || !spec.exclude.some(isUnresolved)) return spec;
  const exclude = spec.exclude.map((exclusion) => {
    if (exclusion.kind !== "calendar" || !isUnresolved(exclusion)) return exclusion;
    const items = lookup(exclusion.name, exclusion.version);
    return items === undefined
      ? exclusion
      : { kind: "calendar" as const, name: exclusion.name, version: exclusion.version, items };
  });
  return { ...spec, exclude };
}

/** The calendar versions `spec` references whose items are not read yet. */
export function unresolvedCalendars(spec: ScheduleSpec): { name: string; version: number }[] {
  if (spec.type === "once") return [];
  return spec.exclude.flatMap((e) =>
    e.kind === "calendar" && isUnresolved(e) ? [{ name: e.name, version: e.version }] : [],
  );
}

/** A stored calendar: a reference, or (stored before) its items, decoded when first read. */
function decodeCalendar(stored: StoredCalendar): CalendarExclusion {
  const { name, version, itemsJson } = stored;
  if (itemsJson === undefined) {
    if (stored.items === undefined) return unresolvedCalendar(name, version);
    return { kind: "calendar", name, version, items: stored.items.map(decodeItem) };
  }
  let items: readonly CalendarItem[] | undefined;
  return {
    kind: "calendar",
    name,
    version,
    get items(): readonly CalendarItem[] {
      items ??= itemsFromJson(itemsJson);
      return items;
    },
  };
}

function decodeExclusions(stored: readonly (StoredItem | StoredCalendar)[]): Exclusion[] {
  return stored.map((e) => (e.kind === "calendar" ? decodeCalendar(e) : decodeItem(e)));
}

/** A stored expression from before the day items (`L`, `W`, `#`) names none. */
function upgradeExpression(value: CronExpression): CronExpression {
  return (value as Partial<CronExpression>).dayItems === undefined
    ? { ...value, dayItems: NO_DAY_ITEMS }
    : value;
}

/**
 * A cron spec as stored: its rules as texts (earlier versions stored them parsed, and before several
 * rules per schedule, one expression in `cron`).
 */
interface StoredCronSpec extends Omit<CronSchedule, "rules" | "exclude"> {
  readonly rules?: readonly (string | CronExpression)[];
  readonly cron?: CronExpression;
  readonly exclude?: readonly (StoredItem | StoredCalendar)[];
}

/** The JSON value stored for a calendar's items (a day rule as its text). */
export function encodeCalendarItems(items: readonly CalendarItem[]): unknown {
  return items.map(encodeItem);
}

/** The items stored as `value` by `encodeCalendarItems` (or by an earlier version of it). */
export function decodeCalendarItems(value: unknown): CalendarItem[] {
  return (value as StoredItem[]).map(decodeItem);
}

/** The spec stored as `value` by `encodeSchedule` (or by an earlier version of it). */
export function decodeSchedule(value: unknown): ScheduleSpec {
  const spec = value as ScheduleSpec;
  switch (spec.type) {
    case "once":
      return spec;
    case "rrule": {
      const stored = spec as Omit<RRuleSchedule, "exclude"> & {
        readonly exclude?: readonly (StoredItem | StoredCalendar)[];
      };
      return { ...stored, exclude: decodeExclusions(stored.exclude ?? []) };
    }
    case "interval": {
      const stored = spec as Omit<Partial<IntervalSchedule>, "exclude"> & {
        readonly exclude?: readonly (StoredItem | StoredCalendar)[];
      };
      return {
        ...spec,
        timezone: stored.timezone ?? null,
        exclude: decodeExclusions(stored.exclude ?? []),
      };
    }
    case "cron": {
      const { cron, rules, exclude, ...rest } = spec as StoredCronSpec;
      const stored = rules ?? (cron === undefined ? [] : [cron]);
      return {
        ...rest,
        rules: stored.map((rule) =>
          typeof rule === "string" ? expressionOf(rule) : upgradeExpression(rule),
        ),
        exclude: decodeExclusions(exclude ?? []),
      };
    }
  }
}
