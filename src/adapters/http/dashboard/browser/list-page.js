// @ts-check
/**
 * The task list (`#/`, `#/?search=...&cursor=...`): each task with its status, schedule in words, next
 * fire in the schedule's zone and the browser's, last result, a strip of recent runs and their lateness;
 * searchable by title or key, by pages, kept live.
 */
import { listRuns, listTasks } from "./api.js";
import { h } from "./dom.js";
import { keepLive, replaceIfChanged } from "./live.js";
import { hashQuery, reload, taskHash, withQuery } from "./navigation.js";
import { mount } from "./page.js";
import { latenessSparkline } from "./sparkline.js";
import { scheduleInWords } from "./schedule-in-words.js";
import { badge, bothTimes, isActive, relative, strip, thead, zoneOf } from "./views.js";

/** @import { Run, Task } from "./api-types.js" */

const LIST_SIZE = 50;
const STRIP_SIZE = 20;

/**
 * The last finished run's status and when, the run in flight, the task's last error.
 * @param {Task} task
 * @param {readonly Run[]} runs newest first
 */
function lastResult(task, runs) {
  const last = runs.find((run) => !isActive(run));
  const active = runs.find((run) => isActive(run));
  return h(
    "span",
    { class: "last-result" },
    last
      ? [
          badge("run", last.status),
          " ",
          h("span", { class: "small" }, relative(last.finished_at || last.scheduled_for)),
        ]
      : h("span", { class: "muted" }, "no run yet"),
    active ? [h("br"), h("span", { class: "small" }, "now: ", active.status)] : null,
    task.last_error ? [h("br"), h("span", { class: "small late" }, task.last_error)] : null,
  );
}

/** @param {readonly { task: Task, runs: readonly Run[] }[]} rows */
function tasksTable(rows) {
  return h(
    "table",
    { id: "tasks" },
    thead("task", "status", "schedule", "next fire", "last result", "recent runs", "lateness"),
    h(
      "tbody",
      {},
      rows.map(({ task, runs }) =>
        h(
          "tr",
          { "data-task-id": task.id },
          h(
            "td",
            {},
            h("a", { href: taskHash(task.id) }, task.title),
            task.key ? h("div", { class: "small mono" }, task.key) : null,
          ),
          h("td", {}, badge("status", task.status)),
          h("td", { class: "schedule-words" }, scheduleInWords(task.schedule)),
          h("td", {}, bothTimes(task.next_run_at, zoneOf(task.schedule))),
          h("td", {}, lastResult(task, runs)),
          h("td", {}, strip(runs)),
          h("td", {}, latenessSparkline(runs)),
        ),
      ),
    ),
  );
}

/**
 * One page of tasks with their recent runs.
 * @param {{ search?: string, cursor?: string }} query
 */
async function loadRows(query) {
  const page = await listTasks(LIST_SIZE, query);
  const rows = await Promise.all(
    page.items.map(async (task) => ({
      task: task,
      runs: (await listRuns(task.id, STRIP_SIZE)).items,
    })),
  );
  return { page, rows };
}

/**
 * @param {readonly { task: Task, runs: readonly Run[] }[]} rows
 * @param {string} search
 */
function listBody(rows, search) {
  if (rows.length > 0) return tasksTable(rows);
  if (search !== "") return h("p", { class: "muted" }, "No task matches “" + search + "”.");
  return h("p", { class: "muted" }, "No tasks yet. ", h("a", { href: "#/new" }, "Create one."));
}

/** @param {string} current */
function searchForm(current) {
  const input = h("input", {
    type: "search",
    name: "search",
    value: current,
    placeholder: "title or key",
    "aria-label": "Search tasks by title or key",
  });
  return h(
    "form",
    {
      class: "search",
      role: "search",
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        const text = input.value.trim();
        location.hash = withQuery("#/", text === "" ? {} : { search: text });
      },
    },
    input,
    h("button", { type: "submit" }, "Search"),
  );
}

/** @param {number} ticket */
export async function renderList(ticket) {
  const params = hashQuery();
  const search = params.get("search") ?? "";
  const cursor = params.get("cursor") ?? "";
  const query = {
    ...(search === "" ? {} : { search }),
    ...(cursor === "" ? {} : { cursor }),
  };
  const { page, rows } = await loadRows(query);
  const body = h("div", { class: "scroll" }, listBody(rows, search));
  const paging = h("p", { class: "paging" });
  /** @param {string | null} next */
  const showPaging = (next) => {
    paging.replaceChildren(
      ...(cursor === ""
        ? []
        : [h("a", { href: withQuery("#/", search === "" ? {} : { search }) }, "First page"), " "]),
      ...(next
        ? [
            h(
              "a",
              { href: withQuery("#/", { ...(search === "" ? {} : { search }), cursor: next }) },
              "Next page",
            ),
          ]
        : []),
    );
  };
  showPaging(page.next_cursor);
  const live = keepLive(ticket, async () => {
    const fresh = await loadRows(query);
    replaceIfChanged(body, listBody(fresh.rows, search));
    showPaging(fresh.page.next_cursor);
  });
  mount(
    ticket,
    h(
      "div",
      { class: "actions" },
      h("h2", {}, "Tasks"),
      h("a", { href: "#/new" }, "New task"),
      h("a", { href: "#/runs" }, "Runs"),
      h("a", { href: "#/calendars" }, "Calendars"),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            void reload();
          },
        },
        "Refresh",
      ),
      live,
    ),
    searchForm(search),
    body,
    paging,
  );
}
