/**
 * `punctual calendars list|get|put|delete` (docs/schedules.md#calendars): the owner's named calendars
 * through `punctual/client`, with the other client commands' flags, output and exit codes. `put` takes
 * its items from the command line (the `--exclude` spelling: `2026-12-25`, `2026-12-24..2026-12-26`,
 * `days:25 12 *`) and/or a JSON file, and replaces the calendar's items with them.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import type { CalendarItemInput } from "../domain/schedule/schedule-spec.js";
import type { HolidaysInput } from "../application/shapes/schedule-input.js";
import type { CalendarView, PutCalendarView } from "../application/shapes/view-mappers.js";
import { PunctualApiError } from "../client/client-errors.js";
import type { PunctualClient } from "../client/punctual-client.js";
import { localTime, pageText, problemText } from "./api-output.js";
import { exclusionArgument, exclusionArgumentText } from "./exclude-argument.js";
import { table } from "./text-table.js";

/** What the calendar commands share with `tasks` and `runs` (client-command.ts builds them). */
export interface ClientCommandKit {
  /** Adds `--server`, `--token`, `--json`. */
  readonly globals: (command: Command) => Command;
  /** An action that calls the API and prints its answer (JSON with `--json`, else `human`). */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- each command's options type
  readonly act: <O, A>(
    fn: (client: PunctualClient, options: O, args: string[]) => Promise<A>,
    human: (answer: A) => string,
  ) => (...args: unknown[]) => Promise<void>;
  /** A usage error (exit 2), its message on stderr. */
  readonly usage: (message: string) => Error;
  /** The viewer's time zone for human output. */
  readonly timeZone?: string | undefined;
}

/** How many items the list shows in its ITEMS column before it counts the rest. */
const LISTED_ITEMS = 3;

/** `3: 2026-12-25, 2026-12-31..2027-01-01, days:* * sun`. */
function itemsSummary(items: readonly unknown[]): string {
  const shown = items.slice(0, LISTED_ITEMS).map(exclusionArgumentText);
  const more = items.length > LISTED_ITEMS ? `, +${items.length - LISTED_ITEMS} more` : "";
  return items.length === 0 ? "0" : `${items.length}: ${shown.join(", ")}${more}`;
}

/** A calendar's fields one per line, then its items one per line, in the `--exclude` spelling. */
function calendarText(calendar: CalendarView | PutCalendarView, timeZone?: string): string {
  const at = (value: string) => `${value}  (${localTime(value, timeZone)})`;
  const lines = [
    `name             ${calendar.name}`,
    `version          ${calendar.version}`,
    ...(calendar.holidays === null
      ? []
      : [
          `holidays         ${calendar.holidays.region} ${calendar.holidays.from_year}..${calendar.holidays.through_year}`,
        ]),
    `created_at       ${at(calendar.created_at)}`,
    `updated_at       ${at(calendar.updated_at)}`,
    ...("tasks_refreshed" in calendar ? [`tasks_refreshed  ${calendar.tasks_refreshed}`] : []),
    `items            ${calendar.items.length}`,
    ...calendar.items.map((item) => `  ${exclusionArgumentText(item)}`),
    ...("warnings" in calendar ? calendar.warnings.map((warning) => `warning: ${warning}`) : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** The items of `--file`: a JSON array of items, or an object with `items` (a calendar as read). */
function itemsFromFile(path: string, usage: (message: string) => Error): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw usage(`cannot read the items of ${path}: ${(error as Error).message}`);
  }
  const items = Array.isArray(value) ? value : (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) {
    throw usage(`${path} must hold a JSON array of items, or an object with "items"`);
  }
  return items as unknown[];
}

interface PutOptions {
  readonly file?: string;
  readonly empty?: boolean;
  readonly holidays?: string;
  readonly holidayYears?: string;
}

/** `--holidays DE-BY [--holiday-years 2026..2035]` as the put's `holidays` (the server checks the region). */
function holidaysOption(
  opts: PutOptions,
  usage: (message: string) => Error,
): HolidaysInput | undefined {
  if (opts.holidays === undefined) {
    if (opts.holidayYears !== undefined) throw usage("--holiday-years goes with --holidays");
    return undefined;
  }
  if (opts.holidayYears === undefined) return { region: opts.holidays };
  const match = /^(\d{4})(?:\.\.(\d{4}))?$/.exec(opts.holidayYears);
  if (match === null) throw usage("--holiday-years takes a year (2026) or a range (2026..2035)");
  const fromYear = Number(match[1]);
  const toYear = match[2] === undefined ? fromYear : Number(match[2]);
  return { region: opts.holidays, from_year: fromYear, to_year: toYear };
}

/** Builds `calendars`. */
export function calendarCommand(kit: ClientCommandKit): Command {
  const { act, globals, usage, timeZone } = kit;
  const calendars = new Command("calendars").description(
    "named calendars of days to skip, through the HTTP API",
  );
  const sub = (name: string, description: string) =>
    globals(calendars.command(name).description(description));

  sub("list", "the owner's calendars, by name, a page at a time")
    .option("--limit <n>", "page size (1-200)")
    .option("--cursor <cursor>", "next page")
    .action(
      act(
        (c, opts: { limit?: string; cursor?: string }) => {
          // Its range is the API's to check, as for the other lists.
          if (opts.limit !== undefined && !/^\d{1,6}$/.test(opts.limit)) {
            throw usage("--limit must be a whole number");
          }
          return c.calendars.list({
            limit: opts.limit === undefined ? undefined : Number(opts.limit),
            cursor: opts.cursor,
          });
        },
        (page) =>
          pageText(page, (items) =>
            table(
              ["NAME", "VERSION", "UPDATED", "ITEMS"],
              items.map((calendar) => [
                calendar.name,
                String(calendar.version),
                localTime(calendar.updated_at, timeZone),
                itemsSummary(calendar.items).slice(0, 80),
              ]),
            ),
          ),
      ),
    );
  sub("get", "show a calendar and its items")
    .argument("<name>")
    .action(
      act(
        (c, _opts: unknown, [name = ""]) => c.calendars.get(name),
        (calendar) => calendarText(calendar, timeZone),
      ),
    );
  sub("put", "create a calendar or replace its items (the tasks naming it follow)")
    .argument("<name>")
    .argument("[items...]", "days to skip: 2026-12-25, 2026-12-24..2026-12-26, days:25 12 *")
    .option("--file <path>", "more items: a JSON array, or an object with items (as get --json)")
    .option("--empty", "put a calendar with no items")
    .option("--holidays <region>", "add a region's public holidays as dates: DE, DE-BY, US-CA")
    .option(
      "--holiday-years <years>",
      "the years of --holidays: 2026 or 2026..2035 (default: this year and the 9 after)",
    )
    .action(
      act(
        (c, opts: PutOptions, [name = "", ...rest]) => {
          // commander passes the variadic argument as one array after the name.
          const words = rest.flat();
          const fromFile = opts.file === undefined ? [] : itemsFromFile(opts.file, usage);
          const items = [...fromFile, ...words.map(exclusionArgument)];
          const holidays = holidaysOption(opts, usage);
          if (items.length === 0 && holidays === undefined && opts.empty !== true) {
            throw usage("give the calendar's items, or --file, or --holidays, or --empty for none");
          }
          if ((items.length > 0 || holidays !== undefined) && opts.empty === true) {
            throw usage("--empty puts no items: leave out the items, --file and --holidays");
          }
          // The server checks every item and names each bad one (`items.2`).
          return c.calendars.put(
            name,
            items as CalendarItemInput[],
            holidays === undefined ? {} : { holidays },
          );
        },
        (calendar) => calendarText(calendar, timeZone),
      ),
    );
  sub("delete", "delete a calendar no task names")
    .argument("<name>")
    .action(
      act(
        async (c, _opts: unknown, [name = ""]) => {
          try {
            await c.calendars.delete(name);
          } catch (error) {
            throw await withTaskTitle(c, error);
          }
          return { deleted: name };
        },
        ({ deleted }) => `deleted calendar ${deleted}\n`,
      ),
    );
  return calendars;
}

/**
 * A `calendar_in_use` refusal names the task by its id; the message adds its title, so a person sees
 * which schedule to change (exit 1, as the other refusals of a conflict).
 */
async function withTaskTitle(client: PunctualClient, error: unknown): Promise<unknown> {
  if (!(error instanceof PunctualApiError) || error.code !== "calendar_in_use") return error;
  const id = error.task_id;
  if (id === null) return error;
  const title = await client.tasks.get(id).then(
    (task) => task.title,
    () => null,
  );
  if (title === null) return error;
  return new Error(problemText(error).replace(id, `${id} ("${title}")`), { cause: error });
}
