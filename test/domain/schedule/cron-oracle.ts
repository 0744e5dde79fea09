/**
 * SPEC 3.1 read literally, as an oracle for the cron engine (docs/schedules.md#cron). It walks real
 * instants one minute at a time (and the listed seconds within each minute), maps each to its wall time
 * with nothing but `Intl.DateTimeFormat`, finds offset changes by watching that mapping, and applies the
 * day rule and the DST rule as the SPEC's sentences state them. It shares no code with
 * src/domain/schedule, so the engine is never judged by its own helpers.
 */
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const DST_LIMIT = 3 * HOUR;

// ---------------------------------------------------------------------------------------------------
// Wall clock from Intl only.

export const formatters = new Map<string, Intl.DateTimeFormat>();

export function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's wall time at `at`, written as if it were a UTC instant. */
export function wallAt(zone: string, at: number): number {
  const p: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(at))) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  return Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day, p.hour, p.minute, p.second);
}

export function offsetAt(zone: string, at: number): number {
  return wallAt(zone, at) - at;
}

export interface Change {
  readonly at: number;
  readonly before: number;
  readonly after: number;
}

/** Offset changes in `[from, to)`, to the minute, found by probing every hour then every minute. */
export function changesBetween(zone: string, from: number, to: number): Change[] {
  const found: Change[] = [];
  let at = Math.floor(from / HOUR) * HOUR;
  let offset = offsetAt(zone, at);
  while (at < to) {
    const next = offsetAt(zone, at + HOUR);
    if (next !== offset) {
      let previous = offset;
      for (let m = at + MINUTE; m <= at + HOUR; m += MINUTE) {
        const o = offsetAt(zone, m);
        if (o !== previous) {
          if (m >= from && m < to) found.push({ at: m, before: previous, after: o });
          previous = o;
        }
      }
    }
    offset = next;
    at += HOUR;
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------
// The grammar of the expressions generated here, read independently.

export const MONTHS = [
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
export const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

export interface OracleField {
  readonly text: string;
  readonly values: ReadonlySet<number>;
  /** Day items: L, L-n, LW, nW (day of month); VL, V#k (day of week). */
  readonly items: readonly string[];
}

export function numberOf(token: string, names: readonly string[] | null, base: number): number {
  const i = names?.indexOf(token.toLowerCase()) ?? -1;
  return i >= 0 ? i + base : Number(token);
}

export function readOracleField(
  text: string,
  min: number,
  max: number,
  names: readonly string[] | null,
): OracleField {
  const values = new Set<number>();
  const items: string[] = [];
  if (text === "?") {
    for (let v = min; v <= max; v++) values.add(v);
    return { text, values, items };
  }
  const base = names === MONTHS ? 1 : 0;
  for (const item of text.split(",")) {
    if (/^(L|L-\d+|LW|\d+W|\w+L|\w+#\d)$/i.test(item) && !/^[a-z]{3}$/i.test(item)) {
      items.push(item.toUpperCase());
      continue;
    }
    const [span = "", stepText] = item.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    let low = min;
    let high = max;
    if (span !== "*") {
      const [a = "", b] = span.split("-");
      low = numberOf(a, names, base);
      high = b === undefined ? low : numberOf(b, names, base);
    }
    for (let v = low; v <= high; v += step) values.add(max === 7 && v === 7 ? 0 : v);
  }
  return { text, values, items };
}

export interface OracleRule {
  readonly seconds: OracleField;
  readonly minutes: OracleField;
  readonly hours: OracleField;
  readonly dom: OracleField;
  readonly months: OracleField;
  readonly dow: OracleField;
  readonly fixed: boolean;
}

export const SHORTCUTS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export function readOracleRule(expression: string): OracleRule {
  const trimmed = expression.trim();
  let fields = (SHORTCUTS[trimmed] ?? trimmed).split(/\s+/);
  if (fields.length === 5) fields = ["0", ...fields];
  const [s = "", mi = "", h = "", dom = "", mo = "", dow = ""] = fields;
  return {
    seconds: readOracleField(s, 0, 59, null),
    minutes: readOracleField(mi, 0, 59, null),
    hours: readOracleField(h, 0, 23, null),
    dom: readOracleField(dom, 1, 31, null),
    months: readOracleField(mo, 1, 12, MONTHS),
    dow: readOracleField(dow, 0, 7, WEEKDAYS),
    // SPEC 3.1: fixed-time when none of second, minute, hour begins with `*`.
    fixed: ![s, mi, h].some((f) => f.startsWith("*")),
  };
}

export const lastDayOf = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();
export const weekdayOf = (y: number, m: number, d: number): number =>
  new Date(Date.UTC(y, m - 1, d)).getUTCDay();
export const isBusinessDay = (y: number, m: number, d: number): boolean => {
  const w = weekdayOf(y, m, d);
  return w >= 1 && w <= 5;
};

/** The day `nW` names in a month, or null (docs/schedules.md#day-items). */
export function nearestWeekday(y: number, m: number, n: number): number | null {
  const last = lastDayOf(y, m);
  if (n > last) return null;
  const w = weekdayOf(y, m, n);
  if (w === 6) return n === 1 ? 3 : n - 1;
  if (w === 0) return n === last ? n - 2 : n + 1;
  return n;
}

export function domItemMatches(item: string, y: number, m: number, d: number): boolean {
  const last = lastDayOf(y, m);
  if (item === "L") return d === last;
  if (item === "LW") {
    let day = last;
    while (!isBusinessDay(y, m, day)) day--;
    return d === day;
  }
  const minus = /^L-(\d+)$/.exec(item);
  if (minus !== null) return d === last - Number(minus[1]);
  const near = /^(\d+)W$/.exec(item);
  if (near !== null) return nearestWeekday(y, m, Number(near[1])) === d;
  throw new Error(`oracle: unknown day-of-month item ${item}`);
}

export function dowItemMatches(item: string, y: number, m: number, d: number): boolean {
  const lastOf = /^(\w+?)L$/.exec(item);
  const nth = /^(\w+)#(\d)$/.exec(item);
  const v = numberOf((lastOf ?? nth)?.[1] ?? "", WEEKDAYS, 0) % 7;
  if (weekdayOf(y, m, d) !== v) return false;
  if (lastOf !== null) return d + 7 > lastDayOf(y, m);
  if (nth !== null) return Math.ceil(d / 7) === Number(nth[2]);
  throw new Error(`oracle: unknown day-of-week item ${item}`);
}

/** SPEC 3.1 day rule: the month must match; then both day fields if either begins with `*` (or is `?`), else either. */
export function dateMatches(rule: OracleRule, y: number, m: number, d: number): boolean {
  if (!rule.months.values.has(m)) return false;
  const byDom = rule.dom.values.has(d) || rule.dom.items.some((i) => domItemMatches(i, y, m, d));
  const byDow =
    rule.dow.values.has(weekdayOf(y, m, d)) ||
    rule.dow.items.some((i) => dowItemMatches(i, y, m, d));
  const unrestricted = (f: OracleField): boolean => f.text.startsWith("*") || f.text === "?";
  return unrestricted(rule.dom) || unrestricted(rule.dow) ? byDom && byDow : byDom || byDow;
}

/** Whether a wall minute (second 0) matches date, hour and minute; the seconds are checked apart. */
export function minuteMatches(rule: OracleRule, wallMinute: number): boolean {
  const t = new Date(wallMinute);
  return (
    rule.minutes.values.has(t.getUTCMinutes()) &&
    rule.hours.values.has(t.getUTCHours()) &&
    dateMatches(rule, t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate())
  );
}

// ---------------------------------------------------------------------------------------------------
// The walk.

/**
 * Every fire of the rules (their union) in `(after, until]`, by SPEC 3.1:
 * - a wall time that exists once fires at that instant;
 * - gap of at most 3 hours: a fixed-time job whose wall time falls in it fires once, at the transition;
 *   a wildcard job skips the missing wall times;
 * - overlap of at most 3 hours: a fixed-time job fires on the first pass only; a wildcard job on both;
 * - larger jumps: nothing is caught up; repeated wall times fire on both passes (docs/schedules.md).
 */
export function oracleFires(
  expressions: readonly string[],
  zone: string,
  after: number,
  until: number,
): number[] {
  const rules = expressions.map(readOracleRule);
  // Start early enough to know about an overlap whose second pass contains `after`.
  const from = Math.floor((after - 4 * HOUR) / MINUTE) * MINUTE;
  const changes = changesBetween(zone, from - HOUR, until + HOUR);
  const fires = new Set<number>();
  for (const rule of rules) {
    const secondList = [...rule.seconds.values].sort((a, b) => a - b);
    for (const change of changes) {
      const shift = change.after - change.before;
      if (!rule.fixed || shift <= 0 || shift > DST_LIMIT) continue;
      if (change.at <= after || change.at > until) continue;
      // The wall minutes the gap skipped: [wall at the transition - shift, wall at the transition).
      const wallThere = change.at + change.after;
      for (let w = wallThere - shift; w < wallThere; w += MINUTE) {
        if (secondList.length > 0 && minuteMatches(rule, w)) {
          fires.add(change.at);
          break;
        }
      }
    }
    let offset = offsetAt(zone, from);
    let changeIndex = 0;
    for (let u = from; u <= until; u += MINUTE) {
      while (changeIndex < changes.length && (changes[changeIndex]?.at ?? Infinity) <= u) {
        offset = changes[changeIndex]?.after ?? offset;
        changeIndex++;
      }
      const wall = u + offset;
      if (!minuteMatches(rule, wall)) continue;
      if (rule.fixed) {
        const repeatedBy = changes.find((c) => {
          const back = c.before - c.after;
          return back > 0 && back <= DST_LIMIT && u >= c.at && u < c.at + back;
        });
        if (repeatedBy !== undefined) continue;
      }
      for (const s of secondList) {
        const at = u + s * SECOND;
        if (at > after && at <= until) fires.add(at);
      }
    }
  }
  return [...fires].sort((a, b) => a - b);
}

/** Whether the day rule of `expression` matches some local date in `[fromDay, fromDay + days)`. */
export function oracleMatchesADate(expression: string, fromDay: number, days: number): boolean {
  const rule = readOracleRule(expression);
  for (let d = 0; d < days; d++) {
    const date = new Date(fromDay + d * DAY);
    if (dateMatches(rule, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate())) {
      return true;
    }
  }
  return false;
}
