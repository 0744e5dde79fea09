/**
 * The Quartz-style day items of the cron grammar (docs/schedules.md#day-items): `L`, `L-n`, `LW`, `nW` in
 * the day-of-month field, `VL` and `V#k` in the day-of-week field. Parses one item and says which days of
 * a given month it names; classic items (`N`, `A-B/S`, ...) are left to cron-expression.ts.
 */
import { daysFromCivil, daysInMonth } from "./civil-time.js";

/** The day items that depend on the month they are read in. Empty lists when there are none. */
export interface DayItems {
  /** `L` (0) and `L-n` (n): that many days before the month's last day. */
  readonly lastDay: readonly number[];
  /** `LW`: the month's last Monday-Friday. */
  readonly lastWorkday: boolean;
  /** `nW`: the Monday-Friday nearest day n, inside the month. */
  readonly nearestWorkday: readonly number[];
  /** `VL`: the month's last weekday V (0 = Sunday). */
  readonly lastWeekday: readonly number[];
  /** `V#k`: the k-th weekday V of the month, `[V, k]`. */
  readonly nthWeekday: readonly (readonly [number, number])[];
}

export const NO_DAY_ITEMS: DayItems = Object.freeze({
  lastDay: [],
  lastWorkday: false,
  nearestWorkday: [],
  lastWeekday: [],
  nthWeekday: [],
});

/** True when the expression has any month-dependent day item. */
export function hasDayItems(items: DayItems): boolean {
  return (
    items.lastDay.length > 0 ||
    items.lastWorkday ||
    items.nearestWorkday.length > 0 ||
    items.lastWeekday.length > 0 ||
    items.nthWeekday.length > 0
  );
}

/** A mutable collector of day items while a field is parsed. */
export interface DayItemsDraft {
  lastDay: number[];
  lastWorkday: boolean;
  nearestWorkday: number[];
  lastWeekday: number[];
  nthWeekday: [number, number][];
}

export function emptyDraft(): DayItemsDraft {
  return { lastDay: [], lastWorkday: false, nearestWorkday: [], lastWeekday: [], nthWeekday: [] };
}

const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/** True when an item uses a Quartz symbol (`?`, `#`, or only the letters L and W beside digits). */
export function usesQuartzSymbol(item: string): boolean {
  if (item.includes("?") || item.includes("#")) return true;
  const letters = item.toUpperCase().replace(/[^A-Z]/g, "");
  return letters !== "" && /^[LW]+$/.test(letters);
}

/** Where the Quartz symbols are allowed, for fields that take none. */
export function quartzSymbolProblem(item: string): string {
  if (item.includes("?")) {
    return `"?" is allowed only as the whole day-of-month or day-of-week field`;
  }
  if (item.includes("#")) return `"#" is allowed only in the day-of-week field (FRI#2)`;
  return `"${item}": L and W are allowed only in the day-of-month and day-of-week fields`;
}

/** `FRIL`: a weekday name and L, which `usesQuartzSymbol` does not see (the name has other letters). */
const LAST_NAMED_WEEKDAY = /^[A-Za-z]{3}[Ll]$/;

const COMBINED = "cannot be combined with a range, a step or *";

/**
 * A day-of-month day item into `draft` (`true`); `null` when `item` is a classic item (parsed elsewhere), or the
 * reason it is refused.
 */
export function parseDayOfMonthItem(item: string, draft: DayItemsDraft): string | null | true {
  if (!usesQuartzSymbol(item) && !LAST_NAMED_WEEKDAY.test(item)) return null;
  const upper = item.toUpperCase();
  if (upper === "L") {
    draft.lastDay.push(0);
    return true;
  }
  if (upper === "LW") {
    draft.lastWorkday = true;
    return true;
  }
  const before = /^L-(\d+)$/.exec(upper);
  if (before?.[1] !== undefined) {
    const n = Number(before[1]);
    if (n < 1 || n > 30) return `"${item}": L-n takes n from 1 to 30`;
    draft.lastDay.push(n);
    return true;
  }
  const nearest = /^(\d+)W$/.exec(upper);
  if (nearest?.[1] !== undefined) {
    const n = Number(nearest[1]);
    if (n < 1 || n > 31) return `"${item}": nW takes a day n from 1 to 31`;
    draft.nearestWorkday.push(n);
    return true;
  }
  if (item.includes("#") || /^(?:\d+|[A-Z]{3})L$/.test(upper)) {
    return `"${item}" is a day-of-week item: write it in the day-of-week field`;
  }
  if (/[-/*]/.test(item)) return `"${item}": L and W ${COMBINED}`;
  if (upper === "W") {
    return `"${item}": W needs a day, such as 15W (the weekday nearest the 15th) or LW`;
  }
  return `"${item}" is not a day-of-month item (use L, L-n, LW or nW)`;
}

function weekdayValue(token: string): number | string {
  if (/^\d+$/.test(token)) {
    const value = Number(token);
    if (value > 7) return `${token} is out of range 0-7`;
    return value % 7;
  }
  const index = DAY_NAMES.indexOf(token.toLowerCase());
  if (index >= 0) return index;
  return `"${token}" is not a day name (use sun-sat)`;
}

/**
 * A day-of-week day item into `draft` (`true`); `null` when `item` is a classic item (parsed elsewhere), or the
 * reason it is refused.
 */
export function parseDayOfWeekItem(item: string, draft: DayItemsDraft): string | null | true {
  if (!usesQuartzSymbol(item) && !LAST_NAMED_WEEKDAY.test(item)) return null;
  const upper = item.toUpperCase();
  if (upper === "L") {
    return `a lone "L" is a day-of-month item (the last day): in the day-of-week field write VL, such as 5L or FRIL`;
  }
  if (/[-/*]/.test(item) && (item.includes("#") || /L$/.test(upper))) {
    return `"${item}": L and # ${COMBINED}`;
  }
  const last = /^(\d+|[A-Z]{3})L$/.exec(upper);
  if (last?.[1] !== undefined) {
    const weekday = weekdayValue(last[1]);
    if (typeof weekday === "string") return weekday;
    draft.lastWeekday.push(weekday);
    return true;
  }
  const nth = /^(\d+|[A-Z]{3})#(\d*)$/.exec(upper);
  if (nth?.[1] !== undefined && nth[2] !== undefined) {
    const weekday = weekdayValue(nth[1]);
    if (typeof weekday === "string") return weekday;
    if (nth[2] === "") return `"${item}": # needs a number from 1 to 5 after it (FRI#2)`;
    const k = Number(nth[2]);
    if (k < 1 || k > 5) return `"${item}": V#k takes k from 1 to 5`;
    draft.nthWeekday.push([weekday, k]);
    return true;
  }
  if (/^(?:L-\d+|LW|\d+W)$/.test(upper)) {
    return `"${item}" is a day-of-month item: write it in the day-of-month field`;
  }
  return `"${item}" is not a day-of-week item (use VL such as FRIL, or V#k such as FRI#2)`;
}

export function freezeDraft(draft: DayItemsDraft): DayItems {
  const sorted = (values: number[]): number[] => [...new Set(values)].sort((a, b) => a - b);
  const pairs = new Map(draft.nthWeekday.map((p) => [p[0] * 10 + p[1], p] as const));
  return {
    lastDay: sorted(draft.lastDay),
    lastWorkday: draft.lastWorkday,
    nearestWorkday: sorted(draft.nearestWorkday),
    lastWeekday: sorted(draft.lastWeekday),
    nthWeekday: [...pairs.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]),
  };
}

/** Weekday (0 = Sunday) of a calendar date. */
export function weekdayOf(year: number, month: number, day: number): number {
  return (((daysFromCivil(year, month, day) + 4) % 7) + 7) % 7;
}

function isWorkday(weekday: number): boolean {
  return weekday !== 0 && weekday !== 6;
}

/** The Monday-Friday nearest day `n`, never in another month; null when the month has no day n. */
function nearestWorkday(n: number, last: number, firstWeekday: number): number | null {
  if (n > last) return null;
  const weekday = (firstWeekday + n - 1) % 7;
  // Saturday moves back to Friday (the 1st forward to Monday the 3rd); Sunday forward to Monday (the
  // last day back to Friday).
  if (weekday === 6) return n === 1 ? 3 : n - 1;
  if (weekday === 0) return n === last ? n - 2 : n + 1;
  return n;
}

/** Bit d set for each day d of the month the day-of-month items name. */
export function dayOfMonthItemsMask(items: DayItems, year: number, month: number): number {
  const last = daysInMonth(year, month);
  const firstWeekday = weekdayOf(year, month, 1);
  let mask = 0;
  for (const offset of items.lastDay) if (last - offset >= 1) mask |= 1 << (last - offset);
  if (items.lastWorkday) {
    let day = last;
    while (!isWorkday((firstWeekday + day - 1) % 7)) day--;
    mask |= 1 << day;
  }
  for (const n of items.nearestWorkday) {
    const day = nearestWorkday(n, last, firstWeekday);
    if (day !== null) mask |= 1 << day;
  }
  return mask;
}

/** Bit d set for each day d of the month the day-of-week items name. */
export function dayOfWeekItemsMask(items: DayItems, year: number, month: number): number {
  const last = daysInMonth(year, month);
  const firstWeekday = weekdayOf(year, month, 1);
  const lastWeekday = (firstWeekday + last - 1) % 7;
  let mask = 0;
  for (const weekday of items.lastWeekday) mask |= 1 << (last - ((lastWeekday - weekday + 7) % 7));
  for (const [weekday, k] of items.nthWeekday) {
    const day = 1 + ((weekday - firstWeekday + 7) % 7) + 7 * (k - 1);
    if (day <= last) mask |= 1 << day;
  }
  return mask;
}
