/**
 * The dashboard's task page (`#/tasks/<id>`): details, upcoming fires with DST marked, run history with
 * lateness (refreshed while a run is active), explain, and the actions pause, resume, trigger, cancel
 * run and delete.
 */
export const SCRIPT_TASK = String.raw`
const HISTORY_SIZE = 50;

function targetText(target) {
  if (target.kind === "handler") return "handler " + target.name;
  if (target.kind === "webhook") return "webhook " + (target.method || "POST") + " " + target.url;
  return "agent " + target.server + " / " + target.assistant_id;
}

function details(task, zone) {
  const rows = [
    ["schedule", h("span", { class: "schedule-words" }, scheduleInWords(task.schedule))],
    ["as sent", h("code", {}, JSON.stringify(task.schedule))],
    ["next fire", bothTimes(task.next_run_at, zone)],
    ["target", targetText(task.target)],
    ["last run", bothTimes(task.last_run_at, zone)],
    ["last error", task.last_error || "—"],
    ["runs launched", task.run_count],
    ["description", task.description || "—"],
    ["version", task.version],
    ["id", h("code", {}, task.id)],
  ];
  return h("dl", { class: "details" }, rows.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]));
}

async function deleteTask(task) {
  if (!confirm("Delete the task “" + task.title + "”? Its queued runs are cancelled.")) return;
  const path = "/v1/tasks/" + enc(task.id);
  try {
    await api("DELETE", path);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    if (!confirm((error.problem.detail || "A run is active.") + " Cancel it and delete anyway?")) return;
    await api("DELETE", path + "?force=true");
  }
  go("#/", "Deleted “" + task.title + "”.");
}

function taskActions(task) {
  const base = "/v1/tasks/" + enc(task.id);
  const button = (label, work, cls) =>
    h("button", { type: "button", class: cls || "", onclick: (e) => act(e.currentTarget, work) }, label);
  const catchUp = h("select", { "aria-label": "catch up" },
    ["none", "latest", "all"].map((v) => h("option", { value: v }, "catch up: " + v)));
  return h("div", { class: "actions" },
    task.status === "enabled" ? button("Pause", async () => {
      await api("POST", base + "/pause");
      say("Paused.");
      await route();
    }) : null,
    task.status === "paused" ? [button("Resume", async () => {
      await api("POST", base + "/resume", { body: { catch_up: catchUp.value } });
      say("Resumed.");
      await route();
    }), catchUp] : null,
    button("Trigger now", async () => {
      const run = (await api("POST", base + "/trigger")).body;
      say("Triggered run ", h("code", {}, run.id), " (" + run.status + ").");
      await route();
    }),
    h("a", { href: "#/tasks/" + enc(task.id) + "/edit" }, "Edit"),
    button("Delete", () => deleteTask(task), "danger"));
}

function historySection(ticket, taskId, initial) {
  const box = h("section", { id: "run-history" });
  let timer = null;
  const refresh = async () => {
    clearTimeout(timer);
    const runs = (await api("GET", "/v1/tasks/" + enc(taskId) + "/runs?limit=" + HISTORY_SIZE)).body.items;
    show(runs);
  };
  const cancel = (button, run) => act(button, async () => {
    await api("POST", "/v1/runs/" + enc(run.id) + "/cancel");
    say("Cancel requested for run ", h("code", {}, run.id), ".");
    await refresh();
  });
  const show = (runs) => {
    if (!current(ticket)) return;
    box.replaceChildren(runsTable(runs, cancel));
    // A run in flight changes on its own: follow it until it ends or the page changes.
    if (runs.some((run) => ACTIVE.includes(run.status))) {
      timer = setTimeout(() => refresh().catch(showProblem), 1000);
    }
  };
  show(initial);
  return box;
}

function explainSection(task) {
  const at = h("input", { type: "text", class: "mono", value: new Date().toISOString(), "aria-label": "instant" });
  const out = h("div", { id: "explain-result" });
  const explain = async () => {
    const path = "/v1/tasks/" + enc(task.id) + "/explain?at=" + encodeURIComponent(at.value.trim());
    const answer = (await api("GET", path)).body;
    const occurrence = answer.occurrence;
    out.replaceChildren(...nodesOf([
      h("p", {}, h("span", { class: "badge" }, answer.verdict), " ", answer.message),
      occurrence ? h("p", { class: "small" }, "occurrence: ", wallText(occurrence.local_wall), " ", occurrence.offset,
        answer.run ? " · run " + answer.run.id + " " + answer.run.status : "") : null]));
  };
  const form = h("form", { class: "actions", onsubmit: (e) => {
    e.preventDefault();
    clearNotice();
    explain().catch(showProblem);
  } }, h("label", {}, "Why did it fire, or not, at this instant?", at), h("button", { type: "submit" }, "Explain"));
  explain().catch(showProblem);
  return h("section", {}, form, out);
}

async function renderTask(ticket, id) {
  const base = "/v1/tasks/" + enc(id);
  const [task, preview, runs] = await Promise.all([
    api("GET", base), api("GET", base + "/preview?count=10"), api("GET", base + "/runs?limit=" + HISTORY_SIZE),
  ].map((answer) => answer.then((a) => a.body)));
  if (!current(ticket)) return;
  const zone = zoneOf(task.schedule);
  mount(ticket,
    h("h2", {}, h("span", { id: "task-title" }, task.title), " ", badge("status", task.status)),
    taskActions(task),
    details(task, zone),
    h("h3", {}, "Upcoming fires"), firesTable(preview.occurrences, zone),
    h("h3", {}, "Run history"), historySection(ticket, id, runs.items),
    h("h3", {}, "Explain"), explainSection(task));
}
`;
