/**
 * `punctual next <expr...> [--tz ZONE] [--from INSTANT] [--count N] [--exclude ITEM]... [--json]`, or
 * `punctual next --rrule TEXT ...` (docs/operations.md): previews the fires of one or several cron
 * expressions (their union), or of an RFC 5545 recurrence, with what DST and the days to skip do to
 * them. Reads the clock only for the default `--from`.
 */
import { Command, CommanderError } from "commander";
import { ValidationError, assertNever } from "../domain/errors.js";
import type { FieldError } from "../domain/errors.js";
import { instant } from "../domain/time.js";
import type { Instant } from "../domain/time.js";
import { formatInstant } from "../domain/schedule/civil-time.js";
import { parseInstantText } from "../domain/schedule/iso-text.js";
import { MAX_OCCURRENCES } from "../domain/schedule/next-occurrences.js";
import { exclusionText } from "../domain/explain-words.js";
import { describeOccurrences, parseSchedule } from "../domain/schedule/schedule-spec.js";
import type {
  DescribedOccurrence,
  DstNote,
  SuppressedFire,
} from "../domain/schedule/schedule-spec.js";
import { exclusionArgument } from "./exclude-argument.js";
import { rruleArgument } from "./schedule-flags.js";
import { notFiredLines } from "./not-fired.js";
import type { NotFired } from "./not-fired.js";

/** Where the command writes and what time it is: injected so tests capture output and fix "now". */
export interface NextCommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly now: () => Date;
}

const processIo: NextCommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  now: () => new Date(),
};

interface NextOptions {
  readonly tz?: string;
  readonly rrule?: string;
  readonly from?: string;
  readonly count: string;
  readonly exclude?: readonly string[];
  readonly onExcluded?: string;
  readonly json?: boolean;
}

/** How each input is named on the command line, for error messages. */
const LABELS: Readonly<Record<string, string>> = {
  cron: "invalid cron expression",
  rrule: "invalid --rrule",
  timezone: "invalid --tz",
  from: "invalid --from",
  count: "invalid --count",
  exclude: "invalid --exclude",
  on_excluded: "invalid --on-excluded",
};

/** `cron.1` is the second expression, `exclude.0.days` the first --exclude. */
function labelOf(field: string, options: NextOptions): string {
  const listed = /^(cron|exclude)\.(\d+)/.exec(field);
  if (listed?.[1] === "cron") return `invalid cron expression ${Number(listed[2]) + 1}`;
  if (listed?.[1] === "exclude") {
    return `invalid --exclude ${JSON.stringify(options.exclude?.[Number(listed[2])] ?? "")}`;
  }
  return LABELS[field] ?? field;
}

function parseArguments(options: NextOptions, io: NextCommandIo) {
  const problems: FieldError[] = [];
  let from: Instant = instant(Math.floor(io.now().getTime()));
  if (options.from !== undefined) {
    const parsed = parseInstantText(options.from);
    if (parsed.ok) from = instant(parsed.value);
    else problems.push({ field: "from", message: parsed.problem });
  }
  const count = /^\d+$/.test(options.count) ? Number(options.count) : NaN;
  if (!(count >= 1 && count <= MAX_OCCURRENCES)) {
    problems.push({ field: "count", message: `must be an integer from 1 to ${MAX_OCCURRENCES}` });
  }
  return { from, count, problems };
}

/** `02:30` (seconds only when not zero) of a `YYYY-MM-DDTHH:MM:SS` wall time. */
function clock(wall: string): string {
  return wall.endsWith(":00") ? wall.slice(11, 16) : wall.slice(11);
}

/** `readBefore`: a recurrence's gap time, read with the offset before the gap (RFC 5545 3.3.5). */
function noteText(note: DstNote | null, readBefore: boolean): string {
  if (note === null) return "";
  switch (note.kind) {
    case "gap_shifted": {
      const also =
        note.collapsed > 0 ? `; ${note.collapsed} more in the gap collapsed into it` : "";
      return readBefore
        ? `  DST: ${clock(note.nominalWall)} does not exist (clocks jump forward), read with the offset before the gap (RFC 5545 3.3.5)`
        : `  DST: ${clock(note.nominalWall)} does not exist (clocks jump forward), fired at the transition${also}`;
    }
    case "overlap_first":
      return "  DST: this wall time happens twice; first pass";
    case "overlap_second":
      return "  DST: this wall time happens twice; second pass";
    default:
      return assertNever(note);
  }
}

/** A suppressed fire as the `not fired:` lines take it. */
function notFired(fire: SuppressedFire): NotFired {
  return {
    kind: fire.kind,
    at: formatInstant(fire.at),
    wall: fire.wall,
    exclusion: fire.exclusion === undefined ? null : exclusionText(fire.exclusion),
  };
}

/** `  moved from 2026-12-25 09:00 (excluded: ...)` for a moved occurrence (docs/schedules.md#moved-occurrences). */
function movedText(from: SuppressedFire | undefined): string {
  if (from === undefined) return "";
  const why = from.exclusion === undefined ? "" : ` (excluded: ${exclusionText(from.exclusion)})`;
  return `  moved from ${from.wall.replace("T", " ")}${why}`;
}

function humanLines(
  fires: readonly DescribedOccurrence[],
  namesRule: boolean,
  readBefore: boolean,
): string[] {
  return fires.flatMap((fire) => [
    ...notFiredLines(fire.suppressedBefore.map(notFired)),
    `${formatInstant(fire.at)}  ${fire.wall.replace("T", " ")} ${fire.offset}${noteText(fire.note, readBefore)}` +
      (namesRule && fire.rule !== null ? `  (${fire.rule})` : "") +
      movedText(fire.movedFrom),
  ]);
}

/** Runs `next` and returns its exit code: 0, or 2 for invalid input (one line on stderr). */
export function runNext(
  exprs: string | readonly string[],
  options: NextOptions,
  io: NextCommandIo,
): number {
  const { from, count, problems } = parseArguments(options, io);
  const list = typeof exprs === "string" ? [exprs] : exprs;
  const excludes = options.exclude ?? [];
  const exclude = {
    ...(excludes.length === 0 ? {} : { exclude: excludes.map(exclusionArgument) }),
    ...(options.onExcluded === undefined ? {} : { on_excluded: options.onExcluded }),
  };
  if (options.rrule !== undefined && (list.length > 0 || options.tz !== undefined)) {
    io.stderr("punctual next: give cron expressions (with --tz) or --rrule, not both\n");
    return 2;
  }
  if (options.rrule === undefined && list.length === 0) {
    io.stderr("punctual next: give cron expressions or --rrule\n");
    return 2;
  }
  try {
    const spec = parseSchedule(
      options.rrule === undefined
        ? {
            type: "cron",
            cron: list.length === 1 ? list[0] : list,
            timezone: options.tz ?? "UTC",
            ...exclude,
          }
        : { type: "rrule", rrule: rruleArgument(options.rrule), ...exclude },
      { referenceAt: from, field: "" },
    );
    if (problems.length > 0) throw new ValidationError(problems);
    const fires = describeOccurrences(spec, from, count);
    if (options.json === true) {
      io.stdout(`${JSON.stringify(fires.map((fire) => formatInstant(fire.at)))}\n`);
    } else {
      const rules =
        spec.type === "cron" || spec.type === "rrule" ? spec.rules.map((rule) => rule.text) : list;
      const zone = spec.type === "rrule" ? spec.timezone : (options.tz ?? "UTC");
      const what = `${rules.map((rule) => `"${rule}"`).join(", ")} in ${zone}`;
      const moving =
        options.onExcluded === undefined || options.onExcluded === "skip"
          ? "skipping"
          : `moving to the ${options.onExcluded} free date`;
      const skipping = excludes.length === 0 ? "" : `, ${moving} ${excludes.join(", ")}`;
      const header = `next ${fires.length} fires of ${what}${skipping} after ${formatInstant(from)}:`;
      io.stdout(
        `${[header, ...humanLines(fires, rules.length > 1, spec.type === "rrule")].join("\n")}\n`,
      );
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const all = [...error.errors, ...problems.filter((p) => !error.errors.includes(p))];
    const text = all.map((e) => `${labelOf(e.field, options)}: ${e.message}`).join("; ");
    io.stderr(`punctual next: ${text}\n`);
    return 2;
  }
}

/** The `next` command, writing to `io` (the process's streams and clock by default). */
export function nextCommand(io: NextCommandIo = processIo): Command {
  return new Command("next")
    .description(
      "print the next fire times of cron expressions (their union) or of an RFC 5545 recurrence, with what DST and the days to skip do to them",
    )
    .argument(
      "[expr...]",
      'cron expressions, e.g. "30 2 * * *", "0 17 LW * *", "0 0 9 * * 1-5" or @daily',
    )
    .option("--tz <zone>", "IANA time zone the expressions run in (default UTC)")
    .option(
      "--rrule <text>",
      'an RFC 5545 recurrence instead of cron: "DTSTART;TZID=Europe/Berlin:20260105T093000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"',
    )
    .option("--from <instant>", "list fires after this RFC 3339 instant (default: now)")
    .option("--count <n>", `how many fires (1-${MAX_OCCURRENCES})`, "5")
    .option(
      "--exclude <item>",
      'a day to skip, repeatable: 2026-12-25, 2026-12-24..2026-12-26, or day fields "days:* * sat,sun"',
      (value: string, previous: readonly string[]) => [...previous, value],
      [] as readonly string[],
    )
    .option(
      "--on-excluded <what>",
      "what an occurrence on an excluded date does: skip (default), previous or next (moved to the nearest date not excluded, same wall time)",
    )
    .option("--json", "print a JSON array of RFC 3339 UTC instants")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .action((exprs: string[], options: NextOptions) => {
      const code = runNext(exprs, options, io);
      if (code !== 0) throw new CommanderError(code, "punctual.invalidInput", "invalid input");
    });
}
