// @ts-check
/**
 * `scheduleInWords`: a schedule, in the API's shape, in plain words ("every day at 09:00 (Europe/Paris)"),
 * each of several cron expressions in turn and the days `exclude` skips (docs/schedules.md#exclude).
 * Pure and free of the DOM, so the page and Node import the same module; what it cannot put in words it
 * quotes as cron text.
 */

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August"].concat([
  "September",
  "October",
  "November",
  "December",
]);
/** @type {Readonly<Record<string, string>>} */
const SHORTCUTS = {
  "@hourly": "every hour at :00",
  "@daily": "every day at 00:00",
  "@midnight": "every day at 00:00",
  "@weekly": "every Sunday at 00:00",
  "@monthly": "on day 1 of every month at 00:00",
  "@yearly": "every year on January 1 at 00:00",
  "@annually": "every year on January 1 at 00:00",
};
const INTERVAL_UNITS = ["week", "day", "hour", "minute", "second"];

/**
 * @param {unknown} value
 * @returns {string}
 */
const text = (value) =>
  typeof value === "string" || typeof value === "number" ? String(value) : "";

/** @param {number} n */
const pad = (n) => String(n).padStart(2, "0");

/**
 * @param {number} n
 * @param {string} unit
 */
const count = (n, unit) => (n === 1 ? unit : `${n} ${unit}s`);

/** @param {readonly string[]} items */
const joined = (items) =>
  items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1) ?? ""}`;

/**
 * A cron field made of plain numbers, sorted and deduplicated; null when it is anything else.
 * @param {string} field
 * @param {number} max
 * @returns {number[] | null}
 */
function numbers(field, max) {
  if (!/^\d+(,\d+)*$/.test(field)) return null;
  const list = field.split(",").map(Number);
  return list.every((n) => n <= max) ? [...new Set(list)].sort((a, b) => a - b) : null;
}

/**
 * @param {string} item
 * @returns {number | null}
 */
function dayIndex(item) {
  const named = DAYS.findIndex((d) => d.slice(0, 3).toLowerCase() === item.toLowerCase());
  if (named >= 0) return named;
  return /^[0-7]$/.test(item) ? Number(item) % 7 : null;
}

/**
 * @param {string} field
 * @returns {string | null}
 */
function weekdays(field) {
  /** @type {string[]} */
  const parts = [];
  for (const item of field.split(",")) {
    const [from, to, ...rest] = item.split("-");
    const a = dayIndex(from ?? "");
    const b = to === undefined ? a : dayIndex(to);
    if (a === null || b === null || rest.length > 0) return null;
    parts.push(a === b ? (DAYS[a] ?? "") : `${DAYS[a] ?? ""} to ${DAYS[b] ?? ""}`);
  }
  return joined(parts);
}

/** @param {Readonly<Record<string, unknown>>} schedule */
function bounds(schedule) {
  const until = text(schedule["end_at"]);
  const max = text(schedule["max_runs"]);
  return (until === "" ? "" : `, until ${until}`) + (max === "" ? "" : `, at most ${max} runs`);
}

/** @param {string} wall */
const wallWords = (wall) => wall.replace("T", " ").replace(/^(.*\d\d:\d\d):00$/, "$1");

/**
 * @param {string} field
 * @returns {number | null}
 */
const step = (field) => (/^\*\/\d+$/.test(field) ? Number(field.slice(2)) : null);

/**
 * A cron expression in words, and whether the words name a local time (then the zone is said too).
 * @param {string} expression
 * @returns {{ words: string, local: boolean } | null}
 */
function cronWords(expression) {
  const shortcut = SHORTCUTS[expression];
  if (shortcut !== undefined) return { words: shortcut, local: true };
  const fields = expression.split(/\s+/);
  const second = fields.length === 6 ? fields.shift() : "0";
  const [minute = "", hour = "", dom = "", month = "", dow = ""] = fields;
  if (fields.length !== 5) return null;
  if ([hour, dom, month, dow].every((f) => f === "*")) {
    if (minute === "*" && second === "*") return { words: "every second", local: false };
    const seconds = step(second ?? "");
    if (minute === "*" && seconds !== null)
      return { words: `every ${count(seconds, "second")}`, local: false };
    if (second !== "0") return null;
    if (minute === "*") return { words: "every minute", local: false };
    const minutes = step(minute);
    if (minutes !== null) return { words: `every ${count(minutes, "minute")}`, local: false };
  }
  if (second !== "0") return null;
  const minuteList = numbers(minute, 59);
  if (minuteList === null) return null;
  const restAny = [dom, month, dow].every((f) => f === "*");
  const hours = step(hour);
  if (restAny && hour === "*" && minuteList.length === 1)
    return { words: `every hour at :${pad(minuteList[0] ?? 0)}`, local: true };
  if (restAny && hours !== null && minuteList.length === 1)
    return { words: `every ${count(hours, "hour")} at :${pad(minuteList[0] ?? 0)}`, local: true };
  const hourList = numbers(hour, 23);
  if (hourList === null || hourList.length * minuteList.length > 6) return null;
  const times = joined(hourList.flatMap((h) => minuteList.map((m) => `${pad(h)}:${pad(m)}`)));
  const days = numbers(dom, 31);
  const months = numbers(month, 12);
  if (restAny) return { words: `every day at ${times}`, local: true };
  if (dom === "*" && month === "*") {
    const names = weekdays(dow);
    return names === null ? null : { words: `every ${names} at ${times}`, local: true };
  }
  if (days !== null && month === "*" && dow === "*") {
    const which = `${days.length === 1 ? "day" : "days"} ${joined(days.map(String))}`;
    return { words: `on ${which} of every month at ${times}`, local: true };
  }
  if (days?.length === 1 && months?.length === 1 && dow === "*") {
    const name = MONTHS[(months[0] ?? 1) - 1] ?? "";
    return { words: `every year on ${name} ${days[0] ?? ""} at ${times}`, local: true };
  }
  return null;
}

/** How many items of `exclude` are named before the rest are counted. */
const EXCLUDE_NAMED = 3;

/**
 * One item of `exclude` in words: `2026-12-25`, `2026-12-24 to 2026-12-26`, `days "L * *"`,
 * `calendar "holidays"`.
 * @param {unknown} item
 * @returns {string}
 */
function exclusionWords(item) {
  if (typeof item === "string") return item;
  if (typeof item !== "object" || item === null) return "";
  /** @type {Readonly<Record<string, unknown>>} */
  const fields = /** @type {Readonly<Record<string, unknown>>} */ (item);
  if (typeof fields["calendar"] === "string") return `calendar "${fields["calendar"]}"`;
  if (typeof fields["days"] === "string") return `days "${fields["days"]}"`;
  return `${text(fields["from"])} to ${text(fields["to"])}`;
}

/**
 * `, except 2026-12-25 and calendar "holidays"`: the days a schedule skips, or nothing.
 * @param {Readonly<Record<string, unknown>>} schedule
 */
function exceptWords(schedule) {
  const items = Array.isArray(schedule["exclude"]) ? schedule["exclude"].map(exclusionWords) : [];
  if (items.length === 0) return "";
  const named = items.slice(0, EXCLUDE_NAMED);
  const rest = items.length - named.length;
  const moved =
    schedule["on_excluded"] === "previous" || schedule["on_excluded"] === "next"
      ? ` (moved to the ${schedule["on_excluded"]} date not excluded, same time)`
      : "";
  return `, except ${joined(rest === 0 ? named : [...named, `${rest} more`])}${moved}`;
}

/**
 * A schedule's cron expressions: `cron` is one, or a list of them (their fires are the union).
 * @param {unknown} cron
 * @returns {string[]}
 */
function cronRules(cron) {
  return (Array.isArray(cron) ? cron : [cron]).map((rule) => text(rule).trim());
}

/** @param {Readonly<Record<string, unknown>>} schedule */
function intervalWords(schedule) {
  const every = text(schedule["every"]);
  const iso = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(every);
  const amounts = iso?.slice(1) ?? (/^\d+$/.test(every) ? ["", "", "", "", every] : []);
  // An absent group is undefined at run time, whatever the type says: Number() makes it NaN.
  const parts = amounts.flatMap((n, i) =>
    Number(n) > 0 ? [count(Number(n), INTERVAL_UNITS[i] ?? "")] : [],
  );
  const start = text(schedule["start_at"]);
  const words = parts.length === 0 ? `every ${every}` : `every ${joined(parts)}`;
  const except = exceptWords(schedule);
  // An interval counts in UTC; its `timezone` says only where the excluded dates are read.
  const zone = except === "" ? "" : ` (${text(schedule["timezone"]) || "UTC"})`;
  return words + (start === "" ? "" : ` from ${start}`) + bounds(schedule) + except + zone;
}

/** RFC 5545 weekday codes in words. */
const RRULE_DAYS = /** @type {Readonly<Record<string, string>>} */ ({
  MO: "Monday",
  TU: "Tuesday",
  WE: "Wednesday",
  TH: "Thursday",
  FR: "Friday",
  SA: "Saturday",
  SU: "Sunday",
});
const RRULE_UNITS = /** @type {Readonly<Record<string, string>>} */ ({
  YEARLY: "year",
  MONTHLY: "month",
  WEEKLY: "week",
  DAILY: "day",
  HOURLY: "hour",
  MINUTELY: "minute",
  SECONDLY: "second",
});

/**
 * `every 2 weeks on Monday from 2026-01-05 09:30 (Europe/Berlin)`: the common rules in words; any other
 * part makes it the rule text as written.
 * @param {Readonly<Record<string, unknown>>} schedule
 */
function rruleWords(schedule) {
  const lines = text(schedule["rrule"])
    .split("\n")
    .map((line) => line.trim());
  const start = lines.find((line) => /^DTSTART/i.test(line)) ?? "";
  const zone = /TZID=([^:;]+)/i.exec(start)?.[1] ?? "UTC";
  const when = /:(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z?$/.exec(start);
  const from = when ? ` from ${when[1]}-${when[2]}-${when[3]} ${when[4]}:${when[5]}` : "";
  const rules = lines.filter((line) => /^(RRULE:|FREQ=)/i.test(line));
  const extra = lines.length - rules.length - 1 > 0 ? " (with extra and excluded dates)" : "";
  const words = rules.map((line) => {
    const parts = new Map(
      line
        .replace(/^RRULE:/i, "")
        .split(";")
        .map((p) => /** @type {[string, string]} */ (p.toUpperCase().split("=", 2))),
    );
    const unit = RRULE_UNITS[parts.get("FREQ") ?? ""];
    const known = ["FREQ", "INTERVAL", "BYDAY", "COUNT", "UNTIL", "WKST"];
    const days = (parts.get("BYDAY") ?? "").split(",").filter((d) => d !== "");
    const plainDays = days.every((d) => RRULE_DAYS[d] !== undefined);
    if (unit === undefined || [...parts.keys()].some((k) => !known.includes(k)) || !plainDays) {
      return `rule "${line.replace(/^RRULE:/i, "")}"`;
    }
    const n = Number(parts.get("INTERVAL") ?? "1");
    const on = days.length > 0 ? ` on ${joined(days.map((d) => RRULE_DAYS[d] ?? d))}` : "";
    const times = parts.has("COUNT") ? `, ${count(Number(parts.get("COUNT")), "time")}` : "";
    return `every ${n === 1 ? unit : count(n, unit)}${on}${times}`;
  });
  return `${joined(words)}${from} (${zone})${extra}${bounds(schedule)}${exceptWords(schedule)}`;
}

/**
 * A schedule, as the API writes it (`{type: "cron", cron, timezone}`, `{type: "once", run_at}`,
 * `{type: "interval", every}`, with their bounds and `exclude`), in plain words.
 * @param {Readonly<Record<string, unknown>>} schedule
 * @returns {string}
 */
export function scheduleInWords(schedule) {
  switch (schedule["type"]) {
    case "cron": {
      const zone = text(schedule["timezone"]) || "UTC";
      // Each rule in words (or quoted), in the order written; the zone is said once for all.
      const rules = cronRules(schedule["cron"]).map(
        (expression) => cronWords(expression) ?? { words: `cron "${expression}"`, local: true },
      );
      const local = rules.some((rule) => rule.local);
      const words = joined(rules.map((rule) => rule.words));
      return `${words}${local ? ` (${zone})` : ""}${bounds(schedule)}${exceptWords(schedule)}`;
    }
    case "once": {
      const at = text(schedule["run_at"]);
      if (/(Z|[+-]\d\d:?\d\d)$/.test(at)) return `once at ${wallWords(at.replace(/Z$/, ""))} UTC`;
      return `once at ${wallWords(at)} (${text(schedule["timezone"]) || "UTC"})`;
    }
    case "interval":
      return intervalWords(schedule);
    case "rrule":
      return rruleWords(schedule);
    default:
      return "an unknown schedule";
  }
}
