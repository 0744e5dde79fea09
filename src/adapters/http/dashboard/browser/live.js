// @ts-check
/**
 * Live updates for a page (docs/dashboard.md#live-updates): polls while the page is current and the tab
 * is visible, every few seconds, backing off (doubling, up to a minute) while the server fails, paused
 * while the tab is hidden and resumed at once when it shows again. A status line says when it last
 * updated, or that it is retrying.
 */
import { h } from "./dom.js";
import { current } from "./page.js";

const EVERY_MS = 3000;
const MAX_MS = 60_000;

/**
 * Calls `refresh` every few seconds while `ticket` is current; returns the status line to show.
 * @param {number} ticket
 * @param {() => Promise<void>} refresh
 * @returns {HTMLElement}
 */
export function keepLive(ticket, refresh) {
  const status = h("span", { class: "live small", "aria-live": "polite" }, "live");
  let delay = EVERY_MS;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const schedule = () => {
    clearTimeout(timer);
    if (!current(ticket)) return;
    if (document.hidden) {
      status.textContent = "paused while the tab is hidden";
      return;
    }
    timer = setTimeout(() => void tick(), delay);
  };
  const tick = async () => {
    if (!current(ticket) || document.hidden) {
      schedule();
      return;
    }
    try {
      await refresh();
      delay = EVERY_MS;
      status.textContent = "live · updated " + new Date().toLocaleTimeString();
    } catch (error) {
      delay = Math.min(delay * 2, MAX_MS);
      status.textContent =
        "update failed (" +
        String((error instanceof Error && error.message) || error) +
        "); retrying in " +
        String(Math.round(delay / 1000)) +
        " s";
    }
    schedule();
  };
  const onVisibility = () => {
    if (!current(ticket)) {
      document.removeEventListener("visibilitychange", onVisibility);
      return;
    }
    if (!document.hidden) {
      delay = EVERY_MS;
      void tick();
    } else schedule();
  };
  document.addEventListener("visibilitychange", onVisibility);
  schedule();
  return status;
}

/**
 * Replaces `node`'s content with `next` only when it differs (so a refresh that changes nothing leaves
 * focus, selection and scroll alone).
 * @param {HTMLElement} node
 * @param {HTMLElement} next
 */
export function replaceIfChanged(node, next) {
  if (node.firstElementChild?.isEqualNode(next)) return;
  node.replaceChildren(next);
}
