/**
 * The dashboard's task list (`#/`): each task with its status, schedule in words, next fire in the
 * schedule's zone and the browser's, last result and a strip of recent runs.
 */
export const SCRIPT_LIST = String.raw`
const LIST_SIZE = 50;
const STRIP_SIZE = 20;

function lastResult(task, runs) {
  const last = runs.find((run) => !ACTIVE.includes(run.status));
  const active = runs.find((run) => ACTIVE.includes(run.status));
  return h("span", { class: "last-result" },
    last ? [badge("run", last.status), " ", h("span", { class: "small" }, relative(last.finished_at || last.scheduled_for))]
      : h("span", { class: "muted" }, "no run yet"),
    active ? [h("br"), h("span", { class: "small" }, "now: ", active.status)] : null,
    task.last_error ? [h("br"), h("span", { class: "small late" }, task.last_error)] : null);
}

function tasksTable(rows) {
  return h("table", { id: "tasks" },
    thead("task", "status", "schedule", "next fire", "last result", "recent runs"),
    h("tbody", {}, rows.map(({ task, runs }) => h("tr", { "data-task-id": task.id },
      h("td", {}, h("a", { href: "#/tasks/" + enc(task.id) }, task.title)),
      h("td", {}, badge("status", task.status)),
      h("td", { class: "schedule-words" }, scheduleInWords(task.schedule)),
      h("td", {}, bothTimes(task.next_run_at, zoneOf(task.schedule))),
      h("td", {}, lastResult(task, runs)),
      h("td", {}, strip(runs))))));
}

async function renderList(ticket) {
  const page = (await api("GET", "/v1/tasks?limit=" + LIST_SIZE)).body;
  const rows = await Promise.all(page.items.map(async (task) => {
    const runs = await api("GET", "/v1/tasks/" + enc(task.id) + "/runs?limit=" + STRIP_SIZE);
    return { task: task, runs: runs.body.items };
  }));
  mount(ticket,
    h("div", { class: "actions" }, h("h2", {}, "Tasks"),
      h("a", { href: "#/new" }, "New task"),
      h("button", { type: "button", onclick: () => route() }, "Refresh")),
    rows.length === 0
      ? h("p", { class: "muted" }, "No tasks yet. ", h("a", { href: "#/new" }, "Create one."))
      : tasksTable(rows),
    page.next_cursor ? h("p", { class: "muted" }, "Showing the first " + LIST_SIZE + " tasks.") : null);
}
`;
