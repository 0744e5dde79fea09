/**
 * UTC offsets and offset transitions of an IANA zone, read from `Intl` (one cached formatter per zone) and
 * cached per zone per UTC year. Takes zone names already validated by `timeZoneProblem`.
 */
import {
  MS_PER_DAY,
  MS_PER_SECOND,
  civilFromDays,
  daysFromCivil,
  floorSecond,
  wallMs,
} from "./civil-time.js";

/** An instant where the zone's UTC offset changes: `offsetAfter` applies from `at` on. */
export interface Transition {
  /** Epoch ms of the first instant on the new offset. */
  readonly at: number;
  readonly offsetBefore: number;
  readonly offsetAfter: number;
}

/** The offsets of one UTC year: the offset at its first instant and the transitions in (start, end]. */
interface YearTable {
  readonly start: number;
  readonly end: number;
  readonly startOffset: number;
  readonly transitions: readonly Transition[];
}

/** Transitions in `(start, end]` and, without one, the year's single offset. */
const yearTables = new Map<string, Map<number, YearTable>>();
const formatters = new Map<string, Intl.DateTimeFormat>();
/**
 * More than a search's horizon (400 years, and the year on each side): a search that fills the cache
 * clears it, and the next search would build every year again (seconds for a schedule whose exclusions
 * leave no fire).
 */
const MAX_CACHED_YEARS_PER_ZONE = 1024;
/** Years searched by schedules: Intl and the calendar arithmetic are exact over this range. */
export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

const FIXED_ZONE = /^(?:Etc\/)?(?:UTC|UCT|GMT|GMT[+-]?0|Universal|Zulu|Greenwich|GMT[+-]\d{1,2})$/;

/**
 * The names of UTC itself, whose offset is zero at every instant: their years are built without asking
 * Intl, since a process's first `Intl.DateTimeFormat` loads ICU's zone data (12-60 ms of CPU on the
 * benchmark's machine, paid by a replica's first cron search, in the burst; stored-task-fields.ts does
 * not ask Intl about `UTC` either).
 */
const UTC_ZONE = /^(?:Etc\/)?(?:UTC|UCT|GMT|GMT[+-]?0|Universal|Zulu|Greenwich)$/;

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The zone's offset at a whole second, asked of Intl (uncached). */
function probeOffset(zone: string, at: number): number {
  const second = floorSecond(at);
  const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, bc: false };
  for (const part of formatterFor(zone).formatToParts(second)) {
    switch (part.type) {
      case "era":
        fields.bc = part.value.startsWith("B");
        break;
      case "year":
      case "month":
      case "day":
      case "hour":
      case "minute":
      case "second":
        fields[part.type] = Number(part.value);
        break;
      default:
        break;
    }
  }
  const year = fields.bc ? 1 - fields.year : fields.year;
  return wallMs(year, fields.month, fields.day, fields.hour, fields.minute, fields.second) - second;
}

/** The first whole second in `(from, to]` whose offset differs from `offset` (one change assumed). */
function firstChange(zone: string, from: number, to: number, offset: number): number {
  let lo = from / MS_PER_SECOND;
  let hi = to / MS_PER_SECOND;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (probeOffset(zone, mid * MS_PER_SECOND) === offset) lo = mid;
    else hi = mid;
  }
  return hi * MS_PER_SECOND;
}

function buildYear(zone: string, year: number): YearTable {
  const start = daysFromCivil(year, 1, 1) * MS_PER_DAY;
  const end = daysFromCivil(year + 1, 1, 1) * MS_PER_DAY;
  if (UTC_ZONE.test(zone)) return { start, end, startOffset: 0, transitions: [] };
  const startOffset = probeOffset(zone, start);
  if (FIXED_ZONE.test(zone)) return { start, end, startOffset, transitions: [] };
  const transitions: Transition[] = [];
  // Probe once a day: every offset change since 1970 lasts far longer than a day, so none hides between
  // two probes; the binary search then pins each change to the exact second.
  let previousAt = start;
  let previousOffset = startOffset;
  while (previousAt < end) {
    const probeAt = Math.min(previousAt + MS_PER_DAY, end);
    const probed = probeOffset(zone, probeAt);
    let offset = previousOffset;
    let from = previousAt;
    while (probed !== offset) {
      const at = firstChange(zone, from, probeAt, offset);
      const offsetAfter = probeOffset(zone, at);
      transitions.push({ at, offsetBefore: offset, offsetAfter });
      offset = offsetAfter;
      from = at;
    }
    previousAt = probeAt;
    previousOffset = probed;
  }
  return { start, end, startOffset, transitions };
}

/** The UTC year (calendar year of the UTC date) containing `at`. */
export function utcYearOf(at: number): number {
  return civilFromDays(Math.floor(at / MS_PER_DAY)).year;
}

/** First instant of the UTC year after the one containing `at`. */
export function utcYearEndOf(at: number): number {
  return daysFromCivil(utcYearOf(at) + 1, 1, 1) * MS_PER_DAY;
}

function yearTable(zone: string, year: number): YearTable {
  let zoneTables = yearTables.get(zone);
  if (zoneTables === undefined) {
    zoneTables = new Map();
    yearTables.set(zone, zoneTables);
  }
  let table = zoneTables.get(year);
  if (table === undefined) {
    if (zoneTables.size >= MAX_CACHED_YEARS_PER_ZONE) zoneTables.clear();
    table = buildYear(zone, year);
    zoneTables.set(year, table);
  }
  return table;
}

/** The zone's UTC offset (ms) at an instant. */
export function offsetAt(zone: string, at: number): number {
  const table = yearTable(zone, utcYearOf(at));
  let offset = table.startOffset;
  for (const transition of table.transitions) {
    if (transition.at > at) break;
    offset = transition.offsetAfter;
  }
  return offset;
}

/** The first transition strictly after `at` and no later than the end of `at`'s UTC year, if any. */
export function nextTransitionInYear(zone: string, at: number): Transition | null {
  const table = yearTable(zone, utcYearOf(at));
  return table.transitions.find((transition) => transition.at > at) ?? null;
}

/** The last transition at or before `at`, looking back at most to the start of the previous UTC year. */
export function previousTransition(zone: string, at: number): Transition | null {
  const year = utcYearOf(at);
  for (const y of [year, year - 1]) {
    const found = yearTable(zone, y).transitions.findLast((transition) => transition.at <= at);
    if (found !== undefined) return found;
  }
  return null;
}

/** Every transition in `(from, to]`, in order. */
export function transitionsBetween(zone: string, from: number, to: number): Transition[] {
  const found: Transition[] = [];
  const lastYear = Math.min(utcYearOf(to), MAX_YEAR);
  for (let year = Math.max(utcYearOf(from), MIN_YEAR); year <= lastYear; year++) {
    for (const transition of yearTable(zone, year).transitions) {
      if (transition.at > from && transition.at <= to) found.push(transition);
    }
  }
  return found;
}
