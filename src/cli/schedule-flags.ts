/**
 * The schedule `punctual tasks create|edit` send, from their flags: `--cron` (repeatable: several
 * expressions in one zone), `--every`, `--at`, `--rrule` (RFC 5545 text), `--tz` and `--exclude` (repeatable; the spelling of
 * exclude-argument.ts), on top of a base schedule (the `--body`'s, or on an edit the task's own). A flag
 * replaces its field only: the base's other fields (its zone, bounds, days to skip) stay while the
 * schedule keeps its type (and, on an edit, the server keeps the stored zone, bounds and days to skip
 * when the type changes); `--no-exclude` drops the days to skip.
 */
import { exclusionArgument } from "./exclude-argument.js";

export interface ScheduleFlags {
  readonly cron?: readonly string[];
  readonly tz?: string;
  readonly every?: string;
  readonly at?: string;
  readonly rrule?: string;
  /** The `--exclude` arguments; false for `--no-exclude`. */
  readonly exclude?: readonly string[] | false;
  /** `--on-excluded skip|previous|next` (docs/schedules.md#moved-occurrences). */
  readonly onExcluded?: string;
}

type Json = Record<string, unknown>;

/** Collects a repeatable flag (after a `--no-` flag set it to false, the list starts again). */
export function collect(value: string, previous: unknown): string[] {
  return [...(Array.isArray(previous) ? (previous as string[]) : []), value];
}

/**
 * The schedule the flags describe over `base`, or undefined when they name none of its fields.
 * @throws the usage error `usage(message)` for flags that do not go together
 */
/**
 * RFC 5545 text from one command-line argument: its lines may be separated by newlines, by the two
 * characters `\n`, or by blanks before each DTSTART, RRULE, RDATE or EXDATE.
 */
export function rruleArgument(text: string): string {
  return text
    .replace(/\\n/g, "\n")
    .replace(/\s+(?=(?:DTSTART|RRULE|RDATE|EXDATE)[;:])/gi, "\n")
    .trim();
}

export function scheduleFromFlags(
  flags: ScheduleFlags,
  base: unknown,
  usage: (message: string) => Error,
): Json | undefined {
  const cron = flags.cron ?? [];
  const kinds = [
    cron.length > 0,
    flags.every !== undefined,
    flags.at !== undefined,
    flags.rrule !== undefined,
  ];
  if (kinds.filter(Boolean).length > 1) throw usage("give one of --cron, --every, --at, --rrule");
  const type =
    cron.length > 0
      ? "cron"
      : flags.every !== undefined
        ? "interval"
        : flags.rrule !== undefined
          ? "rrule"
          : "once";
  if (type === "rrule" && flags.tz !== undefined) {
    throw usage("--tz does not apply to --rrule: its zone is DTSTART's TZID");
  }
  const from: Json | undefined =
    typeof base === "object" && base !== null && !Array.isArray(base) ? { ...base } : undefined;
  let schedule: Json;
  if (kinds.some(Boolean)) {
    schedule = from?.["type"] === type ? from : { type };
    if (type === "cron") schedule["cron"] = cron.length === 1 ? cron[0] : [...cron];
    else if (type === "interval") schedule["every"] = flags.every;
    else if (type === "rrule") schedule["rrule"] = rruleArgument(flags.rrule ?? "");
    else schedule["run_at"] = flags.at;
  } else if (
    flags.tz !== undefined ||
    flags.exclude !== undefined ||
    flags.onExcluded !== undefined
  ) {
    if (from === undefined) {
      throw usage(
        "--tz, --exclude and --on-excluded change a schedule: give --cron, --every, --at or --rrule too",
      );
    }
    schedule = from;
  } else {
    return undefined;
  }
  if (flags.tz !== undefined) schedule["timezone"] = flags.tz;
  if (flags.exclude === false) {
    // Named as null, so that an edit clears it (a patch keeps a stored exclude it does not name).
    if (schedule["type"] === "once") delete schedule["exclude"];
    else schedule["exclude"] = null;
  } else if (flags.exclude !== undefined) {
    if (schedule["type"] === "once")
      throw usage("--exclude applies to --cron, --every and --rrule schedules");
    schedule["exclude"] = flags.exclude.map(exclusionArgument);
  }
  if (flags.onExcluded !== undefined) {
    if (schedule["type"] === "once")
      throw usage("--on-excluded applies to --cron, --every and --rrule schedules");
    schedule["on_excluded"] = flags.onExcluded;
  }
  return schedule;
}
