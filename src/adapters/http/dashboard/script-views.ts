/**
 * The dashboard script's shared views: times in the schedule's zone and the browser's, status badges,
 * the strip of recent runs, the table of upcoming fires with DST marked, and the run history table.
 */
export const SCRIPT_VIEWS = String.raw`
const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const formats = new Map();
const SUPPRESSED = {
  overlap_repeat: "DST overlap: the repeated wall time does not fire again",
  gap_skipped: "DST gap: skipped, the wall time does not exist",
  jump_skipped: "clock jump: skipped, the wall time does not exist",
};

function when(iso, zone) {
  if (!iso) return "—";
  if (!formats.has(zone)) {
    try {
      formats.set(zone, new Intl.DateTimeFormat("sv-SE", {
        timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
      }));
    } catch {
      return iso + " (this browser does not know " + zone + ")";
    }
  }
  return formats.get(zone).format(new Date(iso));
}

function relative(iso) {
  const ms = Date.parse(iso) - Date.now();
  const abs = Math.abs(ms);
  const text = abs < 60e3 ? Math.round(abs / 1e3) + " s"
    : abs < 3600e3 ? Math.round(abs / 60e3) + " min"
    : abs < 86400e3 ? Math.round(abs / 3600e3) + " h"
    : Math.round(abs / 86400e3) + " d";
  return ms >= 0 ? "in " + text : text + " ago";
}

function zoneOf(schedule) {
  return schedule.type === "interval" ? "UTC" : schedule.timezone || "UTC";
}

function wallText(wall) {
  return String(wall || "").replace("T", " ");
}

function bothTimes(iso, zone) {
  if (!iso) return "—";
  return h("span", {},
    h("span", { class: "zone-time mono" }, when(iso, zone), " (", zone, ")"), h("br"),
    h("span", { class: "small" }, "your time: ", when(iso, BROWSER_ZONE), " · ", relative(iso)));
}

function duration(ms) {
  if (ms < 1000) return ms + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 3600000) return (ms / 60000).toFixed(1) + " min";
  return (ms / 3600000).toFixed(1) + " h";
}

function badge(kind, status) {
  return h("span", { class: "badge " + kind + "-" + status }, status);
}

function thead(...names) {
  return h("thead", {}, h("tr", {}, names.map((name) => h("th", {}, name))));
}

function strip(runs) {
  return h("div", { class: "strip", "aria-label": "recent runs, oldest first" },
    runs.slice().reverse().map((run) => h("span", {
      class: "run-" + run.status,
      title: run.status + " · " + run.trigger + " · " + when(run.scheduled_for, BROWSER_ZONE),
    })));
}

function dstNotes(fire) {
  const notes = [];
  const note = fire.note;
  if (note && note.kind === "gap_shifted") {
    notes.push("DST gap: " + wallText(note.nominal_wall) + " does not exist; fires at the transition" +
      (note.collapsed ? " (" + note.collapsed + " more matches collapsed into it)" : ""));
  }
  if (note && note.kind === "overlap_first") notes.push("DST overlap: the first of two " + wallText(fire.wall));
  if (note && note.kind === "overlap_second") notes.push("DST overlap: the second " + wallText(fire.wall));
  for (const s of fire.suppressed_before || []) notes.push(SUPPRESSED[s.kind] + " (" + wallText(s.wall) + ")");
  return notes;
}

function firesTable(occurrences, zone) {
  if (occurrences.length === 0) return h("p", { class: "muted" }, "No upcoming fires.");
  return h("table", { class: "fires" },
    thead("#", "local time (" + zone + ")", "your time (" + BROWSER_ZONE + ")", "DST"),
    h("tbody", {}, occurrences.map((fire, i) => {
      const notes = dstNotes(fire);
      return h("tr", { class: notes.length > 0 ? "dst" : "" },
        h("td", {}, i + 1),
        h("td", { class: "mono" }, wallText(fire.wall), " ", fire.offset),
        h("td", { class: "mono" }, when(fire.at, BROWSER_ZONE)),
        h("td", {}, notes.map((text) => h("div", { class: "dst-note" }, text))));
    })));
}

function runOutcome(run) {
  const text = run.error || (run.result === null ? "" : JSON.stringify(run.result));
  return [text, run.reason ? " (" + run.reason + ")" : ""];
}

function runsTable(runs, onCancel) {
  if (runs.length === 0) return h("p", { class: "muted" }, "No runs yet.");
  return h("table", { id: "runs" },
    thead("status", "trigger", "scheduled for", "launched", "lateness", "finished", "attempt", "error / result", ""),
    h("tbody", {}, runs.map((run) => h("tr", { "data-run-id": run.id },
      h("td", {}, badge("run", run.status),
        run.cancel_requested_at && ACTIVE.includes(run.status) ? h("div", { class: "small" }, "cancel requested") : null),
      h("td", {}, run.trigger),
      h("td", { class: "mono" }, when(run.scheduled_for, BROWSER_ZONE)),
      h("td", { class: "mono" }, when(run.launched_at, BROWSER_ZONE)),
      h("td", {}, run.lateness_ms === null ? "—"
        : h("span", { class: run.late ? "late" : "" }, duration(run.lateness_ms), run.late ? " (late)" : "")),
      h("td", { class: "mono" }, when(run.finished_at, BROWSER_ZONE)),
      h("td", {}, run.attempt),
      h("td", { class: "small" }, runOutcome(run)),
      h("td", {}, ACTIVE.includes(run.status)
        ? h("button", { type: "button", class: "danger", onclick: (e) => onCancel(e.currentTarget, run) }, "Cancel run")
        : null)))));
}
`;
