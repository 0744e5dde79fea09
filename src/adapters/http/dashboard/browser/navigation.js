// @ts-check
/**
 * Moving between the dashboard's hash routes: `go` to a page with a notice to show there, `reload` the
 * current one. The app shell hands over its router once, with `startRouting`.
 */
import { clearNotice, say } from "./page.js";

/** @import { Child } from "./dom-types.js" */

/** @type {() => Promise<void>} */
let render = () => Promise.resolve();
/** @type {Child} */
let pendingNotice = null;

/**
 * Shows the page at `hash` (rendering it again if it is the current one), then `message` on it.
 * @param {string} hash
 * @param {Child} message
 */
export function go(hash, message) {
  pendingNotice = message;
  if (location.hash === hash) {
    clearNotice();
    say(pendingNotice);
    pendingNotice = null;
    void render();
  } else {
    location.hash = hash;
  }
}

/** Renders the current page again. */
export function reload() {
  return render();
}

/**
 * The hash of a task's page (with `suffix`, of one of its sub-pages: `/edit`).
 * @param {string} id
 * @param {string} [suffix]
 */
export function taskHash(id, suffix = "") {
  return "#/tasks/" + encodeURIComponent(id) + suffix;
}

/**
 * Renders the current page with `router`, now and on each hash change.
 * @param {() => Promise<void>} router
 */
export function startRouting(router) {
  render = router;
  window.addEventListener("hashchange", () => {
    clearNotice();
    if (pendingNotice !== null) say(pendingNotice);
    pendingNotice = null;
    void render();
  });
  void render();
}

/** The query part of the current hash (`#/runs?status=failed` → `status=failed`). */
export function hashQuery() {
  const hash = location.hash;
  const at = hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : hash.slice(at + 1));
}

/**
 * `path` with `params` as its query (repeated for a list), the empty ones left out.
 * @param {string} path
 * @param {Readonly<Record<string, string | readonly string[]>>} params
 */
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const one of typeof value === "string" ? [value] : value) {
      if (one !== "") query.append(name, one);
    }
  }
  const text = query.toString();
  return text === "" ? path : path + "?" + text;
}
