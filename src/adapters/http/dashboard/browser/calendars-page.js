// @ts-check
/**
 * The named calendars (`#/calendars`, `#/calendars/<name>`; docs/schedules.md#calendars): the list,
 * a new calendar, and one calendar's items edited one per line (the spelling of exclude-text.js) and
 * saved with `PUT`, which says how many tasks took them and warns of any it holds still. Delete asks
 * first; while a task names the calendar the server refuses (409), and the page links that task.
 */
import { ApiError, deleteCalendar, getCalendar, listCalendars, putCalendar } from "./api.js";
import { h } from "./dom.js";
import { go, taskHash } from "./navigation.js";
import { act, actionButton, mount, showProblem } from "./page.js";
import { itemsOfText, lineOfItem, textOfItems } from "./exclude-text.js";
import { BROWSER_ZONE, thead, when } from "./views.js";

/**
 * @import { Calendar, PutCalendar } from "./api-types.js"
 * @import { Child } from "./dom-types.js"
 */

/** How many items the list names before it counts the rest. */
const LISTED_ITEMS = 3;

/**
 * The hash of a calendar's page.
 * @param {string} name
 */
export function calendarHash(name) {
  return "#/calendars/" + encodeURIComponent(name);
}

/** @param {readonly Calendar[]} calendars */
function calendarsTable(calendars) {
  if (calendars.length === 0) return h("p", { class: "muted" }, "No calendars yet.");
  return h(
    "table",
    { id: "calendars" },
    thead("calendar", "items", "version", "updated"),
    h(
      "tbody",
      {},
      calendars.map((calendar) => {
        const named = calendar.items.slice(0, LISTED_ITEMS).map(lineOfItem).join(", ");
        const rest = calendar.items.length - LISTED_ITEMS;
        return h(
          "tr",
          { "data-calendar": calendar.name },
          h("td", {}, h("a", { href: calendarHash(calendar.name) }, calendar.name)),
          h("td", { class: "mono" }, named, rest > 0 ? ", +" + String(rest) + " more" : ""),
          h("td", {}, calendar.version),
          h("td", { class: "mono" }, when(calendar.updated_at, BROWSER_ZONE)),
        );
      }),
    ),
  );
}

/**
 * What a put did, for the notice: saved, how many tasks took the items, and its warnings.
 * @param {PutCalendar} saved
 * @returns {Child}
 */
function savedNotice(saved) {
  const tasks = saved.tasks_refreshed === 1 ? "1 task" : String(saved.tasks_refreshed) + " tasks";
  return [
    "Saved “" +
      saved.name +
      "” (version " +
      String(saved.version) +
      "); " +
      tasks +
      " took its items.",
    saved.warnings.length === 0
      ? null
      : h(
          "ul",
          { class: "warnings" },
          saved.warnings.map((w) => h("li", {}, w)),
        ),
  ];
}

/**
 * The items editor, and its name field for a new calendar; saving puts the calendar.
 * @param {Calendar | null} calendar null for a new one
 */
function calendarForm(calendar) {
  const name = h("input", {
    name: "calendar-name",
    class: "mono",
    required: true,
    maxLength: 64,
    pattern: "[A-Za-z0-9_\\-][A-Za-z0-9_.\\-]*",
    value: calendar ? calendar.name : "",
  });
  const items = h("textarea", {
    name: "items",
    class: "mono",
    rows: 8,
    value: calendar ? textOfItems(calendar.items) : "",
    placeholder: "2026-12-25\n2026-12-24..2026-12-26\ndays:1 1 *",
  });
  const submit = h("button", { type: "submit", class: "primary" }, "Save calendar");
  return h(
    "form",
    {
      class: "calendar-form",
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        void act(submit, async () => {
          const saved = await putCalendar(name.value.trim(), itemsOfText(items.value));
          go(calendarHash(saved.name), savedNotice(saved));
        });
      },
    },
    calendar ? null : h("label", {}, "Name (letters, digits, _ - .)", name),
    h("label", {}, "Days to skip (one per line: a date, from..to, days:DOM MONTH DOW)", items),
    h("div", { class: "actions" }, submit),
  );
}

/**
 * Deletes the calendar once the user confirms; a refusal while a task names it links the task.
 * @param {Calendar} calendar
 */
async function confirmDelete(calendar) {
  if (!confirm("Delete the calendar “" + calendar.name + "”?")) return;
  try {
    await deleteCalendar(calendar.name);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    const task = error.problem.task_id;
    const link = task === undefined ? null : h("a", { href: taskHash(task) }, "Open that task");
    showProblem(error, link);
    return;
  }
  go("#/calendars", "Deleted the calendar “" + calendar.name + "”.");
}

/** @param {number} ticket */
export async function renderCalendars(ticket) {
  const { items } = await listCalendars();
  mount(
    ticket,
    h("div", { class: "actions" }, h("h2", {}, "Calendars"), h("a", { href: "#/" }, "Tasks")),
    h(
      "p",
      { class: "muted" },
      "Days to skip that any of your schedules names in its exclude as calendar:NAME.",
    ),
    calendarsTable(items),
    h("h3", {}, "New calendar"),
    calendarForm(null),
  );
}

/**
 * @param {number} ticket
 * @param {string} name
 */
export async function renderCalendar(ticket, name) {
  const calendar = await getCalendar(name);
  mount(
    ticket,
    h(
      "h2",
      {},
      "Calendar ",
      h("span", { id: "calendar-name", class: "mono" }, calendar.name),
      " ",
      h("span", { class: "badge" }, "version " + String(calendar.version)),
    ),
    h(
      "div",
      { class: "actions" },
      h("a", { href: "#/calendars" }, "All calendars"),
      actionButton("Delete calendar", () => confirmDelete(calendar), "danger"),
    ),
    h("p", { class: "small" }, "updated ", when(calendar.updated_at, BROWSER_ZONE)),
    calendarForm(calendar),
  );
}
