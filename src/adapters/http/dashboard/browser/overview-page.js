// @ts-check
/**
 * The overview (`#/overview`): the fleet as the token sees it over the last hour, from `GET /v1/runs`
 * alone: runs by status per minute (by the minute they finished) as a stacked bar chart drawn as SVG
 * elements, the failure rate, launch lateness p50 and p99, and the queue (queued and in flight now);
 * and, for an admin token, the replicas with their last heartbeat and handlers (`GET /v1/replicas`);
 * kept live (docs/dashboard.md#what-it-shows).
 */
import { listAllRuns, listReplicas } from "./api.js";
import { h } from "./dom.js";
import { badge, relative, thead } from "./views.js";
import { keepLive, replaceIfChanged } from "./live.js";
import { mount } from "./page.js";

/** @import { ReplicaList, Run } from "./api-types.js" */

const SVG = "http://www.w3.org/2000/svg";
const HOUR = 3_600_000;
const MINUTE = 60_000;
const PAGE = 200;
/** At most this many pages of runs are read for one figure; beyond, the figure says "at least". */
const MAX_PAGES = 10;
/** The statuses a finished run ends in, in the chart's order (bottom first), with their colors. */
/** @type {readonly (readonly [string, string])[]} */
const ENDED = [
  ["succeeded", "#2e7d32"],
  ["failed", "#c62828"],
  ["timed_out", "#ef6c00"],
  ["cancelled", "#78909c"],
  ["skipped", "#b0bec5"],
  ["missed", "#8d6e63"],
];
const WIDTH = 600;
const HEIGHT = 160;
const LEFT = 30;
const BOTTOM = 18;

/**
 * Every run matching the filter, up to MAX_PAGES pages; `complete` is false when there were more.
 * @param {import("./api.js").RunFilter} filter
 * @returns {Promise<{ runs: Run[], complete: boolean }>}
 */
async function allRuns(filter) {
  /** @type {Run[]} */
  const runs = [];
  let cursor = "";
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await listAllRuns(PAGE, { ...filter, ...(cursor ? { cursor } : {}) });
    runs.push(...page.items);
    if (!page.next_cursor) return { runs, complete: true };
    cursor = page.next_cursor;
  }
  return { runs, complete: false };
}

/**
 * The value at quantile `q` of sorted `values` (nearest rank).
 * @param {readonly number[]} sorted
 * @param {number} q
 */
function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? null;
}

/** @param {number | null} ms */
function duration(ms) {
  if (ms === null) return "none launched";
  return ms < 1000 ? String(Math.round(ms)) + " ms" : (ms / 1000).toFixed(1) + " s";
}

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 * @param {string} [text]
 */
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Runs ended per minute over the hour before `now`, stacked by status, with its scale and a legend.
 * @param {readonly Run[]} runs
 * @param {number} now
 */
function perMinuteChart(runs, now) {
  /** @type {Map<string, number>[]} */
  const minutes = Array.from({ length: 60 }, () => new Map());
  for (const run of runs) {
    if (run.finished_at === null) continue;
    const ago = now - Date.parse(run.finished_at);
    if (ago < 0 || ago >= HOUR) continue;
    const bucket = minutes[59 - Math.floor(ago / MINUTE)];
    bucket?.set(run.status, (bucket.get(run.status) ?? 0) + 1);
  }
  const top = Math.max(1, ...minutes.map((m) => [...m.values()].reduce((a, b) => a + b, 0)));
  const plot = HEIGHT - BOTTOM - 4;
  const bar = (WIDTH - LEFT) / 60;
  const chart = svg("svg", {
    class: "overview-chart",
    viewBox: "0 0 " + String(WIDTH) + " " + String(HEIGHT),
    role: "img",
    "aria-label":
      "runs ended per minute over the last hour, by status: " +
      String(runs.filter((run) => run.finished_at !== null).length) +
      " in all, at most " +
      String(top) +
      " in one minute",
  });
  chart.append(svg("line", { x1: LEFT, y1: 4, x2: LEFT, y2: 4 + plot, stroke: "#9aa5b1" }));
  chart.append(svg("line", { x1: LEFT, y1: 4 + plot, x2: WIDTH, y2: 4 + plot, stroke: "#9aa5b1" }));
  chart.append(
    svg("text", { class: "scale", x: LEFT - 4, y: 12, "text-anchor": "end" }, String(top)),
  );
  chart.append(
    svg("text", { class: "scale", x: LEFT - 4, y: 4 + plot, "text-anchor": "end" }, "0"),
  );
  chart.append(svg("text", { class: "scale", x: LEFT, y: HEIGHT - 4 }, "60 min ago"));
  chart.append(
    svg("text", { class: "scale", x: WIDTH, y: HEIGHT - 4, "text-anchor": "end" }, "now"),
  );
  minutes.forEach((counts, i) => {
    let y = 4 + plot;
    for (const [status, color] of ENDED) {
      const count = counts.get(status) ?? 0;
      if (count === 0) continue;
      const height = (count / top) * plot;
      y -= height;
      const rect = svg("rect", {
        class: "bar run-" + status,
        x: LEFT + i * bar + 1,
        y,
        width: Math.max(1, bar - 2),
        height,
        fill: color,
      });
      rect.append(
        svg("title", {}, String(count) + " " + status + ", " + String(59 - i) + " min ago"),
      );
      chart.append(rect);
    }
  });
  const legend = h(
    "p",
    { class: "legend small" },
    ENDED.map(([status]) => h("span", {}, h("span", { class: "swatch swatch-" + status }), status)),
  );
  return h("div", { class: "overview-figure" }, chart, legend);
}

/**
 * @param {string} label
 * @param {string} value
 * @param {string} id
 */
function figure(label, value, id) {
  return h("div", { class: "figure" }, h("div", { class: "small" }, label), h("b", { id }, value));
}

/**
 * The replicas that beat in the last day, live first, with their last heartbeat and handlers; a note for
 * a token that may not list them.
 * @param {ReplicaList | null} list
 */
function replicasTable(list) {
  if (list === null) {
    return h("p", { class: "muted", id: "replicas" }, "Listing the replicas needs an admin token.");
  }
  if (list.items.length === 0) {
    return h("p", { class: "muted", id: "replicas" }, "No replica beat in the last 24 hours.");
  }
  return h(
    "table",
    { id: "replicas" },
    thead("replica", "last heartbeat", "handlers"),
    h(
      "tbody",
      {},
      list.items.map((replica) =>
        h(
          "tr",
          { "data-replica-id": replica.id, class: replica.live ? "live" : "silent" },
          h(
            "td",
            { class: "wrap" },
            h("div", {}, replica.id),
            badge("replica", replica.live ? "live" : "silent"),
          ),
          h("td", { title: replica.heartbeat_at }, relative(replica.heartbeat_at)),
          h(
            "td",
            { class: "wrap small" },
            replica.handler_names === null ? "not registered" : replica.handler_names.join(", "),
          ),
        ),
      ),
    ),
  );
}

/** The overview's content: reads the runs of the last hour, the queue and the replicas. */
async function overview() {
  const now = Date.now();
  const hour = await allRuns({ finished_after: new Date(now - HOUR).toISOString() });
  const queued = await allRuns({ status: ["queued"] });
  const active = await allRuns({ status: ["launching", "running"] });
  const replicas = await listReplicas();
  const atLeast = (/** @type {{ runs: Run[], complete: boolean }} */ r) =>
    (r.complete ? "" : "at least ") + String(r.runs.length);
  const ended = hour.runs.filter((run) =>
    ["succeeded", "failed", "timed_out"].includes(run.status),
  );
  const failed = ended.filter((run) => run.status !== "succeeded").length;
  const rate =
    ended.length === 0
      ? "no run ended"
      : String(Math.round((failed / ended.length) * 1000) / 10) +
        " % (" +
        String(failed) +
        " of " +
        String(ended.length) +
        ")";
  const lateness = hour.runs
    .map((run) => run.lateness_ms)
    .filter((ms) => ms !== null)
    .map((ms) => Math.max(0, ms))
    .sort((a, b) => a - b);
  return h(
    "div",
    { id: "overview" },
    h(
      "div",
      { class: "figures" },
      figure("ended in the last hour", atLeast(hour), "ended-count"),
      figure("failure rate (failed or timed out)", rate, "failure-rate"),
      figure("launch lateness p50", duration(quantile(lateness, 0.5)), "lateness-p50"),
      figure("launch lateness p99", duration(quantile(lateness, 0.99)), "lateness-p99"),
      figure("queued now", atLeast(queued), "queue-depth"),
      figure("launching or running now", atLeast(active), "active-count"),
    ),
    h("h3", {}, "Runs ended per minute, by status"),
    perMinuteChart(hour.runs, now),
    h("h3", {}, "Replicas"),
    replicasTable(replicas),
  );
}

/** @param {number} ticket */
export async function renderOverview(ticket) {
  const body = h("div", {}, await overview());
  const live = keepLive(ticket, async () => {
    replaceIfChanged(body, await overview());
  });
  mount(
    ticket,
    h(
      "div",
      { class: "actions" },
      h("h2", {}, "Overview"),
      h("a", { href: "#/runs" }, "Runs"),
      live,
    ),
    body,
  );
}
