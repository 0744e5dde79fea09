// @ts-check
/**
 * The pages' shared views: times in the schedule's zone and the browser's, status badges, the strip of
 * recent runs, the table of upcoming fires with DST and exclusions marked, and the run history table
 * (missed and excluded stretches with their range).
 */
import { h } from "./dom.js";
import { exclusionWords } from "./exclude-text.js";
import { actionButton } from "./page.js";

/**
 * @import { Child } from "./dom-types.js"
 * @import { Occurrence, Run, Schedule, SuppressedFire } from "./api-types.js"
 */

export const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const ACTIVE = ["queued", "launching", "running"];
/** @type {Map<string, Intl.DateTimeFormat>} */
const formats = new Map();
/** @type {Readonly<Record<SuppressedFire["kind"], string>>} */
const SUPPRESSED = {
  overlap_repeat: "DST overlap: the repeated wall time does not fire again",
  gap_skipped: "DST gap: skipped, the wall time does not exist",
  jump_skipped: "clock jump: skipped, the wall time does not exist",
  excluded: "excluded: on a date the schedule's exclude names",
};

/**
 * An instant in `zone`'s wall time, `YYYY-MM-DD HH:MM:SS` and the zone's abbreviation.
 * @param {string | null} iso
 * @param {string} zone
 */
export function when(iso, zone) {
  if (!iso) return "—";
  let format = formats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat("sv-SE", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
        timeZoneName: "short",
      });
    } catch {
      return iso + " (this browser does not know " + zone + ")";
    }
    formats.set(zone, format);
  }
  return format.format(new Date(iso));
}

/**
 * How far an instant is from now: "in 5 min", "3 h ago".
 * @param {string} iso
 */
export function relative(iso) {
  const ms = Date.parse(iso) - Date.now();
  const abs = Math.abs(ms);
  const text =
    abs < 60e3
      ? String(Math.round(abs / 1e3)) + " s"
      : abs < 3600e3
        ? String(Math.round(abs / 60e3)) + " min"
        : abs < 86400e3
          ? String(Math.round(abs / 3600e3)) + " h"
          : String(Math.round(abs / 86400e3)) + " d";
  return ms >= 0 ? "in " + text : text + " ago";
}

/**
 * The zone a schedule's wall times are shown in: its `timezone` (an interval's, which also says where
 * its excluded dates are read), else UTC.
 * @param {Schedule} schedule
 * @returns {string}
 */
export function zoneOf(schedule) {
  const zone = schedule["timezone"];
  return typeof zone === "string" && zone !== "" ? zone : "UTC";
}

/**
 * A wall time `YYYY-MM-DDTHH:MM:SS` as `YYYY-MM-DD HH:MM:SS`.
 * @param {string | null | undefined} wall
 */
export function wallText(wall) {
  return (wall || "").replace("T", " ");
}

/**
 * An instant in the schedule's zone, and below it in the browser's with how far it is from now.
 * @param {string | null} iso
 * @param {string} zone
 * @returns {Child}
 */
export function bothTimes(iso, zone) {
  if (!iso) return "—";
  return h(
    "span",
    {},
    h("span", { class: "zone-time mono" }, when(iso, zone), " (", zone, ")"),
    h("br"),
    h("span", { class: "small" }, "your time: ", when(iso, BROWSER_ZONE), " · ", relative(iso)),
  );
}

/** @param {number} ms */
function duration(ms) {
  if (ms < 1000) return String(ms) + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 3600000) return (ms / 60000).toFixed(1) + " min";
  return (ms / 3600000).toFixed(1) + " h";
}

/**
 * A status, colored by the stylesheet's `<kind>-<status>` class.
 * @param {"status" | "run" | "replica"} kind
 * @param {string} status
 */
export function badge(kind, status) {
  return h("span", { class: "badge " + kind + "-" + status }, status);
}

/** @param {...string} names */
export function thead(...names) {
  return h(
    "thead",
    {},
    h(
      "tr",
      {},
      names.map((name) => h("th", {}, name)),
    ),
  );
}

/**
 * The recent runs as colored cells, oldest first; hover for status, trigger and time.
 * @param {readonly Run[]} runs
 */
export function strip(runs) {
  return h(
    "div",
    { class: "strip", "aria-label": "recent runs, oldest first" },
    runs
      .slice()
      .reverse()
      .map((run) =>
        h("span", {
          class: "run-" + run.status,
          title: run.status + " · " + run.trigger + " · " + when(run.scheduled_for, BROWSER_ZONE),
        }),
      ),
  );
}

/**
 * The fires suppressed before one, in sentences: each on its own, or a run of three or more of one
 * kind and reason in one (a day's worth of excluded fires of a frequent schedule is one note).
 * @param {readonly SuppressedFire[]} fires
 * @returns {{ text: string, excluded: boolean }[]}
 */
function suppressedNotes(fires) {
  /** @param {SuppressedFire} s */
  const why = (s) =>
    s.kind === "excluded" ? "excluded: " + exclusionWords(s.exclusion) : SUPPRESSED[s.kind];
  /** @type {{ text: string, excluded: boolean }[]} */
  const notes = [];
  for (let i = 0; i < fires.length;) {
    const first = /** @type {SuppressedFire} */ (fires[i]);
    let end = i + 1;
    while (end < fires.length && why(/** @type {SuppressedFire} */ (fires[end])) === why(first))
      end++;
    const last = /** @type {SuppressedFire} */ (fires[end - 1]);
    const excluded = first.kind === "excluded";
    if (end - i >= 3) {
      const span = wallText(first.wall) + " to " + wallText(last.wall);
      notes.push({ text: why(first) + " (" + String(end - i) + " fires, " + span + ")", excluded });
    } else {
      for (const s of fires.slice(i, end))
        notes.push({ text: why(s) + " (" + wallText(s.wall) + ")", excluded: excluded });
    }
    i = end;
  }
  return notes;
}

/**
 * What DST does to a fire, and what DST or `exclude` suppressed before it, in sentences.
 * @param {Occurrence} fire
 * @returns {{ text: string, excluded: boolean }[]}
 */
function fireNotes(fire) {
  /** @type {{ text: string, excluded: boolean }[]} */
  const notes = [];
  const note = fire.note;
  /** @param {string} text */
  const dst = (text) => notes.push({ text: text, excluded: false });
  if (note && note.kind === "gap_shifted") {
    dst(
      "DST gap: " +
        wallText(note.nominal_wall) +
        " does not exist; fires at " +
        wallText(fire.wall) +
        (note.collapsed ? " (" + String(note.collapsed) + " more matches collapsed into it)" : ""),
    );
  }
  if (note && note.kind === "overlap_first")
    dst("DST overlap: the first of two " + wallText(fire.wall));
  if (note && note.kind === "overlap_second") dst("DST overlap: the second " + wallText(fire.wall));
  return notes.concat(suppressedNotes(fire.suppressed_before));
}

/**
 * The upcoming fires in the schedule's zone and the browser's, a DST row marked, the excluded fires
 * before each said with the item that excluded them; with several cron expressions, the one behind
 * each fire.
 * @param {readonly Occurrence[]} occurrences
 * @param {string} zone
 * @param {boolean} [severalRules]
 */
export function firesTable(occurrences, zone, severalRules) {
  if (occurrences.length === 0) return h("p", { class: "muted" }, "No upcoming fires.");
  const columns = ["#", "local time (" + zone + ")", "your time (" + BROWSER_ZONE + ")"];
  return h(
    "table",
    { class: "fires" },
    thead(...columns.concat(severalRules ? ["rule"] : [], ["DST, excluded"])),
    h(
      "tbody",
      {},
      occurrences.map((fire, i) => {
        const notes = fireNotes(fire);
        const dst = notes.some((n) => !n.excluded);
        const excluded = notes.some((n) => n.excluded);
        return h(
          "tr",
          { class: [dst ? "dst" : "", excluded ? "excluded" : ""].join(" ").trim() },
          h("td", {}, i + 1),
          h("td", { class: "mono" }, wallText(fire.wall), " ", fire.offset),
          h("td", { class: "mono" }, when(fire.at, BROWSER_ZONE)),
          severalRules ? h("td", { class: "mono rule" }, fire.rule || "") : null,
          h(
            "td",
            {},
            notes.map((n) =>
              h("div", { class: n.excluded ? "excluded-note" : "dst-note" }, n.text),
            ),
          ),
        );
      }),
    ),
  );
}

/**
 * What became of a run: its error or result and reason; a `missed` or `excluded` record says how
 * many nominal times it covers, from when to when.
 * @param {Run} run
 * @returns {Child}
 */
function runOutcome(run) {
  const text = run.error || (run.result === null ? "" : JSON.stringify(run.result));
  const reason = run.reason ? " (" + run.reason + ")" : "";
  const count = run.missed_count ?? 1;
  if (run.missed_until === null || count < 2) return [text, reason];
  const what = run.reason === "excluded" ? "excluded stretch: " : "missed: ";
  return h(
    "span",
    { class: "range" },
    what + String(count) + " occurrences, " + when(run.scheduled_for, BROWSER_ZONE),
    " to " + when(run.missed_until, BROWSER_ZONE),
    reason,
  );
}

/**
 * Whether the run is still in flight (queued, launching or running).
 * @param {Run} run
 */
export function isActive(run) {
  return ACTIVE.includes(run.status);
}

/**
 * The run history: status, trigger, times, lateness, attempt and outcome, with a cancel button on each
 * run in flight.
 * @param {readonly Run[]} runs
 * @param {(run: Run) => Promise<void>} cancel
 */
export function runsTable(runs, cancel) {
  if (runs.length === 0) return h("p", { class: "muted" }, "No runs yet.");
  const header = [
    "status",
    "trigger",
    "scheduled for",
    "launched",
    "lateness",
    "finished",
    "attempt",
    "error / result",
    "",
  ];
  return h(
    "table",
    { id: "runs" },
    thead(...header),
    h(
      "tbody",
      {},
      runs.map((run) =>
        h(
          "tr",
          { "data-run-id": run.id, class: run.reason === "excluded" ? "excluded" : "" },
          h(
            "td",
            {},
            badge("run", run.status),
            run.cancel_requested_at && isActive(run)
              ? h("div", { class: "small" }, "cancel requested")
              : null,
          ),
          h("td", {}, run.trigger),
          h(
            "td",
            { class: "mono" },
            when(run.scheduled_for, BROWSER_ZONE),
            // A jittered or moved occurrence (docs/schedules.md#moved-occurrences) fires at another time;
            // a moved one says so.
            run.fire_at !== run.scheduled_for && run.status !== "skipped" && run.status !== "missed"
              ? h(
                  "div",
                  { class: "small" },
                  (run.moved_from ? "moved: fires " : "fires ") + when(run.fire_at, BROWSER_ZONE),
                )
              : null,
          ),
          h("td", { class: "mono" }, when(run.launched_at, BROWSER_ZONE)),
          h("td", {}, latenessOf(run)),
          h("td", { class: "mono" }, when(run.finished_at, BROWSER_ZONE)),
          h("td", {}, run.attempt),
          h("td", { class: "small" }, runOutcome(run)),
          h(
            "td",
            {},
            isActive(run) ? actionButton("Cancel run", () => cancel(run), "danger") : null,
          ),
        ),
      ),
    ),
  );
}

/**
 * @param {Run} run
 * @returns {Child}
 */
function latenessOf(run) {
  if (run.lateness_ms === null) return "—";
  return h(
    "span",
    { class: run.late ? "late" : "" },
    duration(run.lateness_ms),
    run.late ? " (late)" : "",
  );
}
