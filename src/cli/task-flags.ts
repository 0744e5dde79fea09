/**
 * The flags of `punctual tasks create` and `tasks edit` (client-command.ts), and the task body they
 * make: `--body` (JSON or @FILE) with the shortcut flags on top, field by field; the schedule flags are
 * schedule-flags.ts's.
 */
import { readFileSync } from "node:fs";
import type { Command, CommanderError } from "commander";
import { collect, scheduleFromFlags } from "./schedule-flags.js";
import type { ScheduleFlags } from "./schedule-flags.js";

/** Reports a usage error (exit 2) and answers the error to throw. */
type Usage = (message: string) => CommanderError;

type Json = Record<string, unknown>;

/** Parses `--body` text (JSON, `@file`, or `@-` is not supported: use a file). */
function bodyFrom(text: string, usage: Usage): Json {
  let raw = text;
  if (text.startsWith("@")) {
    try {
      raw = readFileSync(text.slice(1), "utf8");
    } catch (error) {
      throw usage(`cannot read ${text.slice(1)}: ${(error as Error).message}`);
    }
  }
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error("not an object");
    return value as Json;
  } catch (error) {
    throw usage(`--body must be a JSON object: ${(error as Error).message}`);
  }
}

export interface TaskFlags extends ScheduleFlags {
  readonly body?: string;
  readonly title?: string;
  readonly handler?: string;
  readonly webhook?: string;
  readonly input?: string;
}

/**
 * A task body from `--body` and the shortcut flags (flags win, field by field); the schedule flags
 * change `current` (the task's schedule, on an edit) when `--body` holds none (schedule-flags.ts).
 */
export function taskBody(
  flags: TaskFlags,
  usage: Usage,
  creating: boolean,
  current?: unknown,
): Json {
  const body: Json = flags.body === undefined ? {} : bodyFrom(flags.body, usage);
  if (flags.title !== undefined) body["title"] = flags.title;
  const schedule = scheduleFromFlags(flags, body["schedule"] ?? current, usage);
  if (schedule !== undefined) body["schedule"] = schedule;
  let input: unknown;
  if (flags.input !== undefined) {
    try {
      input = JSON.parse(flags.input);
    } catch {
      throw usage("--input must be JSON");
    }
  }
  if (flags.handler !== undefined) {
    body["target"] = {
      kind: "handler",
      name: flags.handler,
      ...(input === undefined ? {} : { input }),
    };
  } else if (flags.webhook !== undefined) {
    body["target"] = {
      kind: "webhook",
      url: flags.webhook,
      ...(input === undefined ? {} : { input }),
    };
  }
  if (creating) {
    if (body["title"] === undefined) throw usage("--title is required (or give --body)");
    if (body["schedule"] === undefined)
      throw usage("one of --cron, --every, --at, --rrule is required");
    body["target"] ??= { kind: "handler", name: "log", ...(input === undefined ? {} : { input }) };
  }
  return body;
}

export function withTaskFlags(command: Command): Command {
  return command
    .option("--body <json>", "the whole task as JSON, or @FILE")
    .option("--title <text>", "title")
    .option("--cron <expr>", "a cron schedule; repeat for several expressions in one zone", collect)
    .option("--tz <zone>", "IANA time zone of --cron or --at (of --every: where --exclude is read)")
    .option("--every <duration>", "an interval schedule, e.g. PT5M")
    .option("--at <instant>", "a once schedule")
    .option(
      "--rrule <text>",
      'an RFC 5545 recurrence: "DTSTART;TZID=Europe/Berlin:20260105T093000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"',
    )
    .option(
      "--exclude <item>",
      "a day to skip, repeatable: 2026-12-25, 2026-12-24..2026-12-26, days:25 12 *, calendar:NAME",
      collect,
    )
    .option(
      "--on-excluded <what>",
      "an occurrence on an excluded date: skip (default), or move it to the previous or next date not excluded",
    )
    .option("--handler <name>", "a handler target (default for create: log)")
    .option("--webhook <url>", "a webhook target")
    .option("--input <json>", "the target's input");
}
