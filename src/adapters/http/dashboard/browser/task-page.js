// @ts-check
/**
 * A task's page (`#/tasks/<id>`): details, upcoming fires with DST and exclusions marked (and the rule
 * behind each, with several), run history with lateness and excluded stretches (refreshed while a run
 * is active), explain, and the actions pause, resume, trigger, cancel run and delete.
 */
import {
  ApiError,
  cancelRun,
  deleteTask,
  explainTask,
  getTask,
  listRuns,
  pauseTask,
  previewTask,
  resumeTask,
  triggerTask,
} from "./api.js";
import { h, nodesOf } from "./dom.js";
import { go, reload, taskHash } from "./navigation.js";
import { actionButton, clearNotice, current, mount, say, showProblem } from "./page.js";
import { scheduleInWords } from "./schedule-in-words.js";
import { badge, bothTimes, firesTable, isActive, runsTable, wallText, zoneOf } from "./views.js";
import { latenessSparkline } from "./sparkline.js";

/**
 * @import { Child } from "./dom-types.js"
 * @import { Run, Target, Task } from "./api-types.js"
 */

const HISTORY_SIZE = 50;
const PREVIEW_COUNT = 10;

/** @param {Target} target */
function targetText(target) {
  if (target.kind === "handler") return "handler " + target.name;
  if (target.kind === "webhook") return "webhook " + (target.method || "POST") + " " + target.url;
  return "agent " + target.server + " / " + target.assistant_id;
}

/**
 * @param {Task} task
 * @param {string} zone
 */
function details(task, zone) {
  /** @type {[string, Child][]} */
  const rows = [
    ["schedule", h("span", { class: "schedule-words" }, scheduleInWords(task.schedule))],
    ["as sent", h("code", {}, JSON.stringify(task.schedule))],
    [
      "next fire",
      task.next_run_at === null && ["enabled", "paused"].includes(task.status)
        ? "— (none ahead: Explain below says why)"
        : bothTimes(task.next_run_at, zone),
    ],
    ["target", targetText(task.target)],
    ["last run", bothTimes(task.last_run_at, zone)],
    ["last error", task.last_error || "—"],
    ["runs launched", task.run_count],
    ["description", task.description || "—"],
    ["version", task.version],
    ["id", h("code", {}, task.id)],
  ];
  return h(
    "dl",
    { class: "details" },
    rows.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]),
  );
}

/**
 * Deletes the task once the user confirms; a run in flight asks again before deleting with `force`.
 * @param {Task} task
 */
async function confirmDelete(task) {
  if (!confirm("Delete the task “" + task.title + "”? Its queued runs are cancelled.")) return;
  try {
    await deleteTask(task.id, false);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    if (!confirm((error.problem.detail || "A run is active.") + " Cancel it and delete anyway?"))
      return;
    await deleteTask(task.id, true);
  }
  go("#/", "Deleted “" + task.title + "”.");
}

/** @param {Task} task */
function taskActions(task) {
  const catchUp = h(
    "select",
    { "aria-label": "catch up" },
    ["none", "latest", "all"].map((v) => h("option", { value: v }, "catch up: " + v)),
  );
  return h(
    "div",
    { class: "actions" },
    task.status === "enabled"
      ? actionButton("Pause", async () => {
          await pauseTask(task.id);
          say("Paused.");
          await reload();
        })
      : null,
    task.status === "paused"
      ? [
          actionButton("Resume", async () => {
            await resumeTask(task.id, catchUp.value);
            say("Resumed.");
            await reload();
          }),
          catchUp,
        ]
      : null,
    actionButton("Trigger now", async () => {
      const run = await triggerTask(task.id);
      say("Triggered run ", h("code", {}, run.id), " (" + run.status + ").");
      await reload();
    }),
    h("a", { href: taskHash(task.id, "/edit") }, "Edit"),
    actionButton("Delete", () => confirmDelete(task), "danger"),
  );
}

/**
 * The run history, followed while a run is in flight, until it ends or the page changes.
 * @param {number} ticket
 * @param {string} taskId
 * @param {readonly Run[]} initial
 */
function historySection(ticket, taskId, initial) {
  const box = h("section", { id: "run-history" });
  /** @type {number | undefined} */
  let timer;
  const refresh = async () => {
    clearTimeout(timer);
    show((await listRuns(taskId, HISTORY_SIZE)).items);
  };
  /** @param {Run} run */
  const cancel = async (run) => {
    await cancelRun(run.id);
    say("Cancel requested for run ", h("code", {}, run.id), ".");
    await refresh();
  };
  /** @param {readonly Run[]} runs */
  const show = (runs) => {
    if (!current(ticket)) return;
    const chart = latenessSparkline(runs);
    box.replaceChildren(
      chart === null
        ? ""
        : h("p", { class: "lateness-chart" }, "Launch lateness, oldest first: ", chart),
      h("div", { class: "scroll" }, runsTable(runs, cancel)),
    );
    if (runs.some((run) => isActive(run))) {
      timer = setTimeout(() => {
        refresh().catch(showProblem);
      }, 1000);
    }
  };
  show(initial);
  return box;
}

/**
 * "Why did it fire, or not, at this instant?", asked for now at once.
 * @param {Task} task
 */
function explainSection(task) {
  const at = h("input", {
    type: "text",
    class: "mono",
    value: new Date().toISOString(),
    "aria-label": "instant",
  });
  const out = h("div", { id: "explain-result" });
  const explain = async () => {
    const answer = await explainTask(task.id, at.value.trim());
    const occurrence = answer.occurrence;
    out.replaceChildren(
      ...nodesOf([
        h("p", {}, h("span", { class: "badge" }, answer.verdict), " ", answer.message),
        occurrence
          ? h(
              "p",
              { class: "small" },
              "occurrence: ",
              wallText(occurrence.local_wall),
              " ",
              occurrence.offset,
              answer.run ? " · run " + answer.run.id + " " + answer.run.status : "",
            )
          : null,
      ]),
    );
  };
  const form = h(
    "form",
    {
      class: "actions",
      onsubmit: (e) => {
        e.preventDefault();
        clearNotice();
        explain().catch(showProblem);
      },
    },
    h("label", {}, "Why did it fire, or not, at this instant?", at),
    h("button", { type: "submit" }, "Explain"),
  );
  explain().catch(showProblem);
  return h("section", {}, form, out);
}

/**
 * @param {number} ticket
 * @param {string} id
 */
export async function renderTask(ticket, id) {
  const [task, preview, runs] = await Promise.all([
    getTask(id),
    previewTask(id, PREVIEW_COUNT),
    listRuns(id, HISTORY_SIZE),
  ]);
  if (!current(ticket)) return;
  const zone = zoneOf(task.schedule);
  mount(
    ticket,
    h("h2", {}, h("span", { id: "task-title" }, task.title), " ", badge("status", task.status)),
    taskActions(task),
    details(task, zone),
    h("h3", {}, "Upcoming fires"),
    h(
      "div",
      { class: "scroll" },
      firesTable(preview.occurrences, zone, Array.isArray(task.schedule["cron"])),
    ),
    h("h3", {}, "Run history"),
    historySection(ticket, id, runs.items),
    h("h3", {}, "Explain"),
    explainSection(task),
  );
}
