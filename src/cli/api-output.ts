/**
 * How `punctual tasks|runs` show the API's answers to a person: tables of tasks, runs and fires, a
 * task's or run's fields one per line, an explanation in sentences; instants also in the viewer's zone.
 */
import type { PunctualApiError } from "../client/client-errors.js";
import type { ExclusionHitView, ScheduleView } from "../application/shapes/view-schemas.js";
import type {
  ExplanationView,
  OccurrenceView,
  PageView,
  RunView,
  TaskView,
} from "../application/shapes/view-mappers.js";
import { exclusionText } from "../domain/explain-words.js";
import { parseCalendarItems } from "../domain/schedule/schedule-spec.js";
import { DAY_MS } from "../domain/time.js";
import { notFiredLines } from "./not-fired.js";
import { table } from "./text-table.js";

/** An instant in the viewer's zone: `2026-03-09 09:00:00 GMT+1`-like, from an RFC 3339 string. */
export function localTime(value: string | null, timeZone?: string): string {
  if (value === null) return "-";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const parts = new Intl.DateTimeFormat("en-CA", {
    ...(timeZone === undefined ? {} : { timeZone }),
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "shortOffset",
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}:${get("second")} ${get("timeZoneName")}`;
}

/** A JSON value as text: strings as they are, null as empty, the rest as JSON. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return JSON.stringify(value);
}

function scheduleText(schedule: ScheduleView): string {
  switch (schedule.type) {
    case "cron": {
      // Several expressions read as their union: `cron "0 9 * * 1-5" + "0 10 * * 6" Europe/Berlin`.
      const rules = typeof schedule.cron === "string" ? [schedule.cron] : schedule.cron;
      return `cron ${rules.map((rule) => `"${rule}"`).join(" + ")} ${schedule.timezone}`;
    }
    case "once":
      return `once ${schedule.run_at}`;
    case "interval":
      return `every ${schedule.every}`;
    case "rrule":
      // The rule lines after DTSTART, on one line: `rrule FREQ=WEEKLY;INTERVAL=2;BYDAY=MO`.
      return `rrule ${schedule.rrule
        .split("\n")
        .filter((line) => !/^DTSTART/i.test(line))
        .map((line) => line.replace(/^RRULE:/i, ""))
        .join(" ")}`;
  }
}

export function taskRows(items: readonly TaskView[], timeZone?: string): string {
  return table(
    ["ID", "STATUS", "TITLE", "SCHEDULE", "NEXT RUN", "LAST ERROR"],
    items.map((t) => [
      t.id,
      t.status,
      t.title.slice(0, 40),
      scheduleText(t.schedule),
      localTime(t.next_run_at, timeZone),
      textOf(t.last_error).slice(0, 40),
    ]),
  );
}

/**
 * A run's nominal time, and for a run from a moved occurrence where it was moved to
 * (docs/schedules.md#moved-occurrences): `2026-12-25 09:00:00 (moved to 2026-12-24 09:00:00)`.
 */
export function scheduledText(run: RunView, timeZone?: string): string {
  const at = localTime(run.scheduled_for, timeZone);
  // A server before the marker answers without the field.
  return run.moved_from == null ? at : `${at} (moved to ${localTime(run.fire_at, timeZone)})`;
}

export function runRows(items: readonly RunView[], timeZone?: string): string {
  return table(
    ["ID", "TRIGGER", "STATUS", "SCHEDULED FOR", "LATENESS", "REASON / ERROR"],
    items.map((r) => [
      r.id,
      r.trigger,
      r.status,
      scheduledText(r, timeZone),
      r.lateness_ms === null ? "" : `${(r.lateness_ms / 1000).toFixed(1)}s${r.late ? " late" : ""}`,
      textOf(r.reason ?? r.error).slice(0, 50),
    ]),
  );
}

/** The rows of a page, then how to ask for the next one. */
export function pageText<T>(
  page: PageView<T>,
  rows: (items: readonly T[], timeZone?: string) => string,
  timeZone?: string,
): string {
  const next = page.next_cursor === null ? "" : `next page: --cursor ${page.next_cursor}\n`;
  return rows(page.items, timeZone) + next;
}

const OMITTED_WHEN_NULL: ReadonlySet<string> = new Set(["key", "group", "defect"]);

/** Every field on its own line; an instant also in the viewer's zone. */
export function detail(object: TaskView | RunView, timeZone?: string): string {
  // A task without a key (most are), or without a defect (nearly all), is not told so on lines of
  // their own.
  const shown = Object.entries(object).filter(
    ([key, value]: [string, unknown]) => !(OMITTED_WHEN_NULL.has(key) && value === null),
  );
  const lines = shown.map(([key, value]: [string, unknown]) => {
    const text =
      typeof value === "string" && /^\d{4}-\d\d-\d\dT.*Z$/.test(value)
        ? `${value}  (${localTime(value, timeZone)})`
        : typeof value === "object" && value !== null
          ? JSON.stringify(value)
          : String(value);
    return `${key.padEnd(20)} ${text}`;
  });
  return `${lines.join("\n")}\n`;
}

/** An item of `exclude` in words, as `explain` and `punctual next` put it (`the date 2026-12-25 of ...`). */
export function exclusionHitText(hit: ExclusionHitView, at: string): string {
  // The item excluded the occurrence at `at`, so it matches a date within 30 years of it.
  const { items } = parseCalendarItems([hit.item], "item", Math.floor(Date.parse(at) / DAY_MS));
  const [item] = items;
  if (item === undefined) return JSON.stringify(hit.item);
  return exclusionText({ item, calendar: hit.calendar });
}

/** The fires DST or `exclude` suppressed before one fire, as `not fired:` lines. */
function notFiredBefore(occurrence: OccurrenceView): string[] {
  return notFiredLines(
    occurrence.suppressed_before.map((fire) => ({
      kind: fire.kind,
      at: fire.at,
      wall: fire.wall,
      exclusion: fire.exclusion === undefined ? null : exclusionHitText(fire.exclusion, fire.at),
    })),
  );
}

/**
 * The next fires as a table, each preceded by the wall times DST or `exclude` suppressed before it
 * (`not fired:` lines, as `punctual next` prints them); with several cron expressions, a RULE column
 * names the one behind each fire.
 */
export function occurrenceRows(
  items: readonly OccurrenceView[],
  timeZone?: string,
  severalRules = false,
): string {
  const rule = (o: OccurrenceView): string[] => (severalRules ? [o.rule ?? ""] : []);
  const lines = table(
    ["UTC", "WALL TIME", "OFFSET", "LOCAL", ...(severalRules ? ["RULE"] : []), "DST"],
    items.map((o) => [
      o.at,
      o.wall.replace("T", " "),
      o.offset,
      localTime(o.at, timeZone),
      ...rule(o),
      o.note === null
        ? ""
        : o.note.kind === "gap_shifted"
          ? `${o.note.nominal_wall.slice(11)} does not exist; fired at ${o.wall.slice(11)}`
          : o.note.kind === "overlap_first"
            ? "repeated wall time, first pass"
            : "repeated wall time, second pass",
    ]),
  ).split("\n");
  const [header = "", ...rows] = lines;
  const body = items.flatMap((o, i) => [...notFiredBefore(o), rows[i] ?? ""]);
  return `${[header, ...body].join("\n")}\n`;
}

/** `explain`'s answer for a person: the verdict and its sentence, then the occurrences and the run. */
export function explanationText(explanation: ExplanationView, timeZone?: string): string {
  const lines = [`${explanation.verdict}: ${explanation.message}`];
  const occurrence = (label: string, o: ExplanationView["occurrence"]): void => {
    if (o === null) return;
    const note = o.dst_note;
    const dst =
      note === null
        ? ""
        : note.kind === "gap_shifted"
          ? ` (${note.nominal_wall.slice(11)} did not exist; fired at ${o.local_wall.slice(11)})`
          : note.kind === "overlap_first"
            ? " (repeated wall time, first pass)"
            : " (repeated wall time, second pass)";
    lines.push(
      `${label}: ${o.local_wall.replace("T", " ")} ${o.offset}, ` +
        `${localTime(o.scheduled_for, timeZone)}${dst}`,
    );
  };
  occurrence("occurrence", explanation.occurrence);
  occurrence("next occurrence", explanation.next_occurrence);
  if (explanation.run !== null) lines.push("", runRows([explanation.run], timeZone).trimEnd());
  return `${lines.join("\n")}\n`;
}

/** A refused call in one line: the problem's title and status, then its fields or its detail. */
export function problemText(error: PunctualApiError): string {
  if (typeof error.body !== "object" || error.body === null) return `HTTP ${error.status}`;
  const fields = error.errors.map((e) => `${e.field}: ${e.message}`).join("; ");
  const more = fields !== "" ? fields : error.detail;
  return `${error.title} (${error.status})${more === "" ? "" : `: ${more}`}`;
}
