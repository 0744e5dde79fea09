// @ts-check
/**
 * The dashboard's entry module, the one the page loads: the router over the hash routes (`#/`,
 * `#/new`, `#/runs`, `#/overview`, `#/tasks/<id>`, `#/tasks/<id>/edit`, `#/calendars`, `#/calendars/<name>`; a
 * `?query` after a route carries its filters) and the token prompt.
 */
import { ApiError, keepToken, tokenOf, whenTokenRefused } from "./api.js";
import { element, h } from "./dom.js";
import { renderCalendar, renderCalendars } from "./calendars-page.js";
import { renderList } from "./list-page.js";
import { renderOverview } from "./overview-page.js";
import { renderRuns } from "./runs-page.js";
import { startRouting } from "./navigation.js";
import { askToken, clearNotice, current, login, mount, showProblem, startRender } from "./page.js";
import { renderEdit, renderForm } from "./task-form.js";
import { renderTask } from "./task-page.js";

/** Renders the page the hash names, once there is a token to call the API with. */
async function route() {
  if (!tokenOf()) {
    askToken("Paste an API token to use the dashboard.");
    return;
  }
  login.hidden = true;
  const ticket = startRender();
  const full = location.hash || "#/";
  const hash = full.split("?")[0] ?? full;
  const edit = /^#\/tasks\/([^/]+)\/edit$/.exec(hash)?.[1];
  const task = /^#\/tasks\/([^/]+)$/.exec(hash)?.[1];
  const calendar = /^#\/calendars\/([^/]+)$/.exec(hash)?.[1];
  try {
    if (edit !== undefined) await renderEdit(ticket, decodeURIComponent(edit));
    else if (task !== undefined) await renderTask(ticket, decodeURIComponent(task));
    else if (hash === "#/new") renderForm(ticket, null);
    else if (hash === "#/calendars") await renderCalendars(ticket);
    else if (hash === "#/runs") await renderRuns(ticket);
    else if (hash === "#/overview") await renderOverview(ticket);
    else if (calendar !== undefined) await renderCalendar(ticket, decodeURIComponent(calendar));
    else await renderList(ticket);
  } catch (error) {
    if (!current(ticket) || (error instanceof ApiError && error.status === 401)) return;
    mount(ticket, h("p", {}, h("a", { href: "#/" }, "Back to the tasks")));
    showProblem(error);
  }
}

whenTokenRefused((why) => {
  askToken("The server refused the token (" + why + "). Paste a valid token.");
});

login.addEventListener("submit", (e) => {
  e.preventDefault();
  const input = element("token", HTMLInputElement);
  const secret = input.value.trim();
  if (secret === "") return;
  keepToken(secret);
  input.value = "";
  clearNotice();
  void route();
});

element("forget", HTMLButtonElement).addEventListener("click", () => {
  askToken("Token forgotten. Paste a token to continue.");
});

startRouting(route);
