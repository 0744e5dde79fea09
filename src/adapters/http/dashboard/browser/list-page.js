// @ts-check
/**
 * The task list (`#/`): each task with its status, schedule in words, next fire in the schedule's zone
 * and the browser's, last result and a strip of recent runs.
 */
import { listRuns, listTasks } from "./api.js";
import { h } from "./dom.js";
import { reload, taskHash } from "./navigation.js";
import { mount } from "./page.js";
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
    thead("task", "status", "schedule", "next fire", "last result", "recent runs"),
    h(
      "tbody",
      {},
      rows.map(({ task, runs }) =>
        h(
          "tr",
          { "data-task-id": task.id },
          h("td", {}, h("a", { href: taskHash(task.id) }, task.title)),
          h("td", {}, badge("status", task.status)),
          h("td", { class: "schedule-words" }, scheduleInWords(task.schedule)),
          h("td", {}, bothTimes(task.next_run_at, zoneOf(task.schedule))),
          h("td", {}, lastResult(task, runs)),
          h("td", {}, strip(runs)),
        ),
      ),
    ),
  );
}

/** @param {number} ticket */
export async function renderList(ticket) {
  const page = await listTasks(LIST_SIZE);
  const rows = await Promise.all(
    page.items.map(async (task) => ({
      task: task,
      runs: (await listRuns(task.id, STRIP_SIZE)).items,
    })),
  );
  mount(
    ticket,
    h(
      "div",
      { class: "actions" },
      h("h2", {}, "Tasks"),
      h("a", { href: "#/new" }, "New task"),
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
    ),
    rows.length === 0
      ? h("p", { class: "muted" }, "No tasks yet. ", h("a", { href: "#/new" }, "Create one."))
      : tasksTable(rows),
    page.next_cursor
      ? h("p", { class: "muted" }, "Showing the first " + String(LIST_SIZE) + " tasks.")
      : null,
  );
}
