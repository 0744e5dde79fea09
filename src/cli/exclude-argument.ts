/**
 * The command line's spelling of the days to skip (docs/schedules.md#exclude), shared by
 * `punctual next --exclude`, `punctual tasks create|edit --exclude` and `punctual calendars put`: one
 * argument as an item of `exclude`, and an item written back the same way.
 *
 * `2026-12-25` (a date), `2026-12-24..2026-12-26` (a range, both included), `days:25 12 *` (a day
 * rule), `calendar:holidays` (a named calendar), `{...}` (a JSON item as written), or else the three day
 * fields alone (`* * sat,sun`, as `punctual next` has always read them).
 *
 * No cron day field holds `:`, `..` or `{`, and no date is three fields, so the forms cannot be confused.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RANGE = /^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$/;

/** One `--exclude` argument as an item of `exclude` (the server or `parseSchedule` checks it). */
export function exclusionArgument(text: string): unknown {
  if (DATE.test(text)) return text;
  const range = RANGE.exec(text);
  if (range !== null) return { from: range[1], to: range[2] };
  if (text.startsWith("days:")) return { days: text.slice("days:".length).trim() };
  if (text.startsWith("calendar:")) return { calendar: text.slice("calendar:".length).trim() };
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return { days: text };
}

/** An item of `exclude` (or of a calendar) in the argument's spelling: `days:25 12 *`, `a..b`. */
export function exclusionArgumentText(item: unknown): string {
  if (typeof item === "string") return item;
  if (typeof item === "object" && item !== null) {
    const fields = item as Readonly<Record<string, unknown>>;
    const { days, calendar, from, to } = fields;
    if (typeof days === "string") return `days:${days}`;
    if (typeof calendar === "string") return `calendar:${calendar}`;
    if (typeof from === "string" && typeof to === "string") return `${from}..${to}`;
  }
  return JSON.stringify(item);
}
