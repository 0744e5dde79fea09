// @ts-check
/**
 * A small inline chart of a task's launch lateness over its recent runs (oldest on the left), drawn as
 * SVG elements (no markup is parsed); late runs are marked. Its scale is written on its right (the
 * worst lateness at the top, 0 at the bottom); its text alternative states the median and the worst.
 */

/** @import { Run } from "./api-types.js" */

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 160;
const HEIGHT = 28;
/** Room on the right for the scale: the top value and zero. */
const SCALE = 44;

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 */
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/** @param {number} ms */
function seconds(ms) {
  return ms < 1000 ? String(Math.round(ms)) + " ms" : (ms / 1000).toFixed(1) + " s";
}

/**
 * One label of the scale, right of the chart.
 * @param {string} text
 * @param {number} y
 */
function scaleText(text, y) {
  const node = svg("text", { class: "scale", x: WIDTH + 3, y, "font-size": 9, fill: "#5b6573" });
  node.textContent = text;
  return node;
}

/**
 * The lateness of the launched runs among `runs` (newest first), as a sparkline; null when none launched.
 * @param {readonly Run[]} runs
 * @returns {Element | null}
 */
export function latenessSparkline(runs) {
  const launched = runs
    .filter((run) => run.lateness_ms !== null)
    .slice()
    .reverse();
  if (launched.length === 0) return null;
  const values = launched.map((run) => Math.max(0, run.lateness_ms ?? 0));
  const top = Math.max(...values, 1);
  const step = launched.length === 1 ? 0 : (WIDTH - 4) / (launched.length - 1);
  /** @type {readonly { x: number, y: number }[]} */
  const points = values.map((v, i) => ({
    x: 2 + i * step,
    y: HEIGHT - 2 - (v / top) * (HEIGHT - 4),
  }));
  const sorted = values.slice().sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const label =
    "launch lateness over the last " +
    String(values.length) +
    " launched runs: median " +
    seconds(median) +
    ", worst " +
    seconds(top);
  const chart = svg("svg", {
    class: "sparkline",
    width: WIDTH + SCALE,
    height: HEIGHT,
    viewBox: "0 0 " + String(WIDTH + SCALE) + " " + String(HEIGHT),
    role: "img",
    "aria-label": label,
  });
  const title = svg("title", {});
  title.textContent = label;
  chart.append(title);
  chart.append(
    svg("polyline", {
      points: points.map((p) => String(p.x) + "," + String(p.y)).join(" "),
      fill: "none",
      stroke: "#1565c0",
      "stroke-width": 1.5,
    }),
  );
  chart.append(
    svg("line", {
      x1: WIDTH,
      y1: 2,
      x2: WIDTH,
      y2: HEIGHT - 2,
      stroke: "#9aa5b1",
      "stroke-width": 1,
    }),
  );
  chart.append(scaleText(seconds(top), 9));
  chart.append(scaleText("0", HEIGHT - 2));
  launched.forEach((run, i) => {
    const point = points[i];
    if (!run.late || point === undefined) return;
    chart.append(svg("circle", { cx: point.x, cy: point.y, r: 2.5, fill: "#b71c1c" }));
  });
  return chart;
}
