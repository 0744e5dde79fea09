/**
 * The command line's spelling of the days to skip (docs/schedules.md#exclude), shared by
 * `punctual next --exclude`, `punctual tasks create|edit --exclude` and `punctual calendars put`: one
 * argument as an item of `exclude`, and an item written back the same way.
 */

/**
 * One `--exclude` as an item of `exclude`: `2026-12-25`, a range `2026-12-24..2026-12-26`, a JSON
 * item (`{"days": "25 12 *"}`), or else the three day fields of a cron expression (`"* * sat,sun"`).
 */
export function exclusionArgument(text: string): unknown {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  const range = /^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$/.exec(text);
  if (range !== null) return { from: range[1], to: range[2] };
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return { days: text };
}
