// @ts-check
/**
 * Runs across tasks (`#/runs?status=failed&since=1h...`): the operator's "what failed in the last
 * hour?", filtered by status, target kind, trigger, lateness and age, by pages, kept live; a failed,
 * timed-out or cancelled run can be retried from here (docs/dashboard.md#runs-across-tasks).
 */
import { getTask, listAllRuns, retryRun } from "./api.js";
import { h } from "./dom.js";
import { keepLive, replaceIfChanged } from "./live.js";
import { hashQuery, reload, taskHash, withQuery } from "./navigation.js";
import { actionButton, mount, say } from "./page.js";
import { BROWSER_ZONE, badge, thead, when } from "./views.js";

/** @import { Run } from "./api-types.js" */
/** @import { RunFilter } from "./api.js" */

const PAGE_SIZE = 50;
const STATUSES = [
  "failed",
  "timed_out",
  "cancelled",
  "succeeded",
  "queued",
  "launching",
  "running",
  "skipped",
  "missed",
];
const RETRYABLE = ["failed", "timed_out", "cancelled"];
/** @type {readonly [string, string, number][]} */
const SINCE = [
  ["", "any time", 0],
  ["1h", "the last hour", 3_600_000],
  ["24h", "the last 24 hours", 86_400_000],
  ["7d", "the last 7 days", 7 * 86_400_000],
];

/** The filter the hash names. */
function filterOfHash() {
  const q = hashQuery();
  return {
    status: q.getAll("status").filter((s) => STATUSES.includes(s)),
    target_kind: q.get("target_kind") ?? "",
    trigger: q.get("trigger") ?? "",
    late: q.get("late") ?? "",
    since: q.get("since") ?? "",
    cursor: q.get("cursor") ?? "",
  };
}

/** @typedef {ReturnType<typeof filterOfHash>} HashFilter */

/**
 * The API's filter for the hash's (`since` becomes `finished_after`, from now).
 * @param {HashFilter} f
 * @returns {RunFilter}
 */
function apiFilter(f) {
  const since = SINCE.find(([value]) => value === f.since)?.[2] ?? 0;
  return {
    status: f.status,
    ...(f.target_kind ? { target_kind: f.target_kind } : {}),
    ...(f.trigger ? { trigger: f.trigger } : {}),
    ...(f.late ? { late: f.late } : {}),
    ...(since > 0 ? { finished_after: new Date(Date.now() - since).toISOString() } : {}),
    ...(f.cursor ? { cursor: f.cursor } : {}),
  };
}

/**
 * @param {HashFilter} f
 * @param {string} [cursor]
 */
function hashOf(f, cursor) {
  return withQuery("#/runs", {
    status: f.status,
    target_kind: f.target_kind,
    trigger: f.trigger,
    late: f.late,
    since: f.since,
    cursor: cursor ?? "",
  });
}

/**
 * @param {string} label
 * @param {string} name
 * @param {string} value
 * @param {readonly (readonly [string, string])[]} options
 */
function select(label, name, value, options) {
  return h(
    "label",
    {},
    label,
    h(
      "select",
      { name },
      options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)),
    ),
  );
}

/** @param {HashFilter} f */
function filterForm(f) {
  const form = h(
    "form",
    {
      class: "run-filters",
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        const data = new FormData(form);
        /** @param {string} name */
        const one = (name) => {
          const value = data.get(name);
          return typeof value === "string" ? value : "";
        };
        location.hash = hashOf({
          status: data.getAll("status").filter((v) => typeof v === "string"),
          target_kind: one("target_kind"),
          trigger: one("trigger"),
          late: one("late"),
          since: one("since"),
          cursor: "",
        });
      },
    },
    h(
      "fieldset",
      { class: "statuses" },
      h("legend", {}, "Status"),
      STATUSES.map((s) =>
        h(
          "label",
          { class: "check" },
          h("input", { type: "checkbox", name: "status", value: s, checked: f.status.includes(s) }),
          s,
        ),
      ),
    ),
    select("Target", "target_kind", f.target_kind, [
      ["", "any"],
      ["handler", "handler"],
      ["webhook", "webhook"],
      ["agent", "agent"],
    ]),
    select("Trigger", "trigger", f.trigger, [
      ["", "any"],
      ["scheduled", "scheduled"],
      ["manual", "manual"],
      ["backfill", "backfill"],
    ]),
    select("Late", "late", f.late, [
      ["", "either"],
      ["true", "late only"],
      ["false", "on time only"],
    ]),
    select(
      "Finished in",
      "since",
      f.since,
      SINCE.map(([value, text]) => /** @type {const} */ ([value, text])),
    ),
    h("button", { type: "submit", class: "primary" }, "Apply"),
  );
  return form;
}

/**
 * Task titles by id, kept for the tab's life: a run lists only its task's id, and an operator reads
 * titles. A task that cannot be read (deleted since) keeps its id.
 * @type {Map<string, Promise<string | null>>}
 */
const titles = new Map();

/**
 * The titles of the tasks `runs` name, fetched once each.
 * @param {readonly Run[]} runs
 * @returns {Promise<Map<string, string>>}
 */
async function titlesOf(runs) {
  const ids = [...new Set(runs.map((run) => run.task_id))];
  for (const id of ids) {
    if (!titles.has(id)) {
      titles.set(
        id,
        getTask(id).then(
          (task) => task.title,
          () => null,
        ),
      );
    }
  }
  /** @type {Map<string, string>} */
  const found = new Map();
  for (const id of ids) {
    const title = await titles.get(id);
    if (title) found.set(id, title);
  }
  return found;
}

/**
 * @param {readonly Run[]} runs
 * @param {ReadonlyMap<string, string>} taskTitles
 */
function runsAcrossTable(runs, taskTitles) {
  if (runs.length === 0) return h("p", { class: "muted" }, "No run matches.");
  return h(
    "table",
    { id: "all-runs" },
    thead("status", "task", "trigger", "scheduled for", "finished", "attempt", "error", ""),
    h(
      "tbody",
      {},
      runs.map((run) =>
        h(
          "tr",
          { "data-run-id": run.id },
          h(
            "td",
            {},
            badge("run", run.status),
            run.reason ? h("div", { class: "small" }, run.reason) : null,
          ),
          h("td", {}, taskLink(run.task_id, taskTitles.get(run.task_id))),
          h("td", {}, run.trigger),
          h("td", { class: "mono" }, when(run.scheduled_for, BROWSER_ZONE)),
          h("td", { class: "mono" }, when(run.finished_at, BROWSER_ZONE)),
          h("td", {}, run.attempt),
          h("td", { class: "small" }, run.error ?? ""),
          h(
            "td",
            {},
            RETRYABLE.includes(run.status)
              ? actionButton("Retry", async () => {
                  const queued = await retryRun(run.id);
                  say(
                    "Run " +
                      queued.id +
                      " is queued again for attempt " +
                      String(queued.attempt + 1) + // `attempt` counts claims: the next one adds one
                      ".",
                  );
                  await reload();
                })
              : null,
          ),
        ),
      ),
    ),
  );
}

/**
 * The task as a link: its title, or its id when the title cannot be read.
 * @param {string} id
 * @param {string | undefined} title
 */
function taskLink(id, title) {
  return title
    ? h("a", { href: taskHash(id), class: "task-title", title: id }, title)
    : h("a", { href: taskHash(id), class: "mono" }, id);
}

/** @param {number} ticket */
export async function renderRuns(ticket) {
  const f = filterOfHash();
  const page = await listAllRuns(PAGE_SIZE, apiFilter(f));
  const body = h(
    "div",
    { class: "scroll" },
    runsAcrossTable(page.items, await titlesOf(page.items)),
  );
  const paging = h("p", { class: "paging" });
  /** @param {string | null} next */
  const showPaging = (next) => {
    paging.replaceChildren(
      ...(f.cursor ? [h("a", { href: hashOf(f) }, "First page"), " "] : []),
      ...(next ? [h("a", { href: hashOf(f, next) }, "Next page")] : []),
    );
  };
  showPaging(page.next_cursor);
  const live = keepLive(ticket, async () => {
    const fresh = await listAllRuns(PAGE_SIZE, apiFilter(f));
    replaceIfChanged(body, runsAcrossTable(fresh.items, await titlesOf(fresh.items)));
    showPaging(fresh.next_cursor);
  });
  mount(
    ticket,
    h("div", { class: "actions" }, h("h2", {}, "Runs"), h("a", { href: "#/" }, "Tasks"), live),
    filterForm(f),
    body,
    paging,
  );
}
