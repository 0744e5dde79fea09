/**
 * Proleptic Gregorian calendar arithmetic on "wall milliseconds": a local date and time written as if it
 * were UTC epoch milliseconds. Pure integer arithmetic; no `Date`, no zone.
 */

/** A wall date and time broken into calendar fields (month 1-12, weekday 0 = Sunday). */
export interface CivilDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly weekday: number;
}

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 of a calendar date (H. Hinnant's `days_from_civil`). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The calendar date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Gregorian leap year: divisible by 4, except centuries not divisible by 400. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Number of days of a month (1-12) of a year. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Wall milliseconds of a calendar date and time. */
export function wallMs(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  return (
    daysFromCivil(year, month, day) * MS_PER_DAY +
    hour * MS_PER_HOUR +
    minute * MS_PER_MINUTE +
    second * MS_PER_SECOND
  );
}

/** Calendar fields of wall milliseconds (sub-second part ignored). */
export function civilOf(wall: number): CivilDateTime {
  const days = Math.floor(wall / MS_PER_DAY);
  const secondOfDay = Math.floor((wall - days * MS_PER_DAY) / MS_PER_SECOND);
  const { year, month, day } = civilFromDays(days);
  return {
    year,
    month,
    day,
    hour: Math.floor(secondOfDay / 3600),
    minute: Math.floor((secondOfDay % 3600) / 60),
    second: secondOfDay % 60,
    weekday: (((days + 4) % 7) + 7) % 7,
  };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** `YYYY-MM-DDTHH:MM:SS` of wall milliseconds. */
export function formatWall(wall: number): string {
  const c = civilOf(wall);
  return `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}T${pad(c.hour, 2)}:${pad(c.minute, 2)}:${pad(c.second, 2)}`;
}

/** `+HH:MM` (or `+HH:MM:SS` when the offset has seconds) of an offset in milliseconds. */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? "-" : "+";
  const total = Math.abs(Math.round(offsetMs / MS_PER_SECOND));
  const hh = pad(Math.floor(total / 3600), 2);
  const mm = pad(Math.floor((total % 3600) / 60), 2);
  const ss = total % 60;
  return ss === 0 ? `${sign}${hh}:${mm}` : `${sign}${hh}:${mm}:${pad(ss, 2)}`;
}

/** RFC 3339 UTC text of epoch milliseconds: no fraction for whole seconds, else milliseconds. */
export function formatInstant(at: number): string {
  const ms = ((at % MS_PER_SECOND) + MS_PER_SECOND) % MS_PER_SECOND;
  const base = formatWall(at - ms);
  return ms === 0 ? `${base}Z` : `${base}.${pad(ms, 3)}Z`;
}

/** Largest whole second at or before `ms`. */
export function floorSecond(ms: number): number {
  return Math.floor(ms / MS_PER_SECOND) * MS_PER_SECOND;
}

/** Smallest whole second at or after `ms`. */
export function ceilSecond(ms: number): number {
  return Math.ceil(ms / MS_PER_SECOND) * MS_PER_SECOND;
}
