// @ts-check
/**
 * The create and edit form (`#/new`, `#/tasks/<id>/edit`), with a live preview of the next fires from
 * `POST /v1/schedules/preview` while the user types: the cron expressions and the days to skip are
 * edited one per line, and the preview names the rule behind each fire and the fires excluded. An edit sends only the fields that changed, with
 * the task's version in `If-Match`, so an unchanged schedule is never re-anchored.
 */
import {
  ApiError,
  createTask,
  getTask,
  listCalendars,
  previewSchedule,
  updateTask,
} from "./api.js";
import { h } from "./dom.js";
import { go, taskHash } from "./navigation.js";
import { act, mount, problemList, showProblem } from "./page.js";
import { itemsOfText, textOfItems } from "./exclude-text.js";
import { scheduleInWords } from "./schedule-in-words.js";
import { BROWSER_ZONE, firesTable, zoneOf } from "./views.js";

/**
 * @import { Attrs, Child } from "./dom-types.js"
 * @import { Task } from "./api-types.js"
 */

/**
 * @typedef {"title" | "description" | "type" | "cron" | "timezone" | "run_at" | "every" | "rrule" | "start_at"
 *   | "end_at" | "max_runs" | "jitter" | "exclude" | "kind" | "name" | "url" | "server"
 *   | "assistant_id" | "input"
 * } FieldName
 * @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control
 * @typedef {Readonly<Record<FieldName, Control>>} Fields
 */

const PREVIEW_COUNT = 10;
/** @type {Readonly<Record<string, readonly FieldName[]>>} */
const FIELDS_BY_TYPE = {
  cron: ["cron", "timezone", "start_at", "end_at", "max_runs", "jitter", "exclude"],
  once: ["run_at", "timezone", "jitter"],
  interval: ["every", "timezone", "start_at", "end_at", "max_runs", "jitter", "exclude"],
  rrule: ["rrule", "start_at", "end_at", "max_runs", "jitter", "exclude"],
};
/** @type {Readonly<Record<string, readonly FieldName[]>>} */
const TARGET_FIELDS = { handler: ["name"], webhook: ["url"], agent: ["server", "assistant_id"] };

/**
 * The fields a schedule type (or a target kind) takes besides its type.
 * @param {Readonly<Record<string, readonly FieldName[]>>} table
 * @param {string} key
 */
const fieldsFor = (table, key) => table[key] ?? [];

/**
 * @param {string} name
 * @param {unknown} value a string or number the API sent; empty when absent
 * @param {Attrs} [attrs]
 */
function textInput(name, value, attrs) {
  return h("input", Object.assign({ name: name, value: textValue(value) }, attrs));
}

/**
 * @param {unknown} value a string or number the API sent; empty when absent
 * @returns {string}
 */
function textValue(value) {
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}

/**
 * The form's controls, filled from `task` (or with a new task's defaults).
 * @param {Task | null} task
 * @returns {Fields}
 */
function formFields(task) {
  /** @type {Readonly<Record<string, unknown>>} */
  const s = task ? task.schedule : { type: "cron", cron: "0 9 * * *", timezone: BROWSER_ZONE };
  /** @type {Readonly<Record<string, unknown>>} */
  const t = task ? task.target : { kind: "handler", name: "log" };
  /**
   * @param {string} name
   * @param {readonly string[]} values
   * @param {unknown} selected
   */
  const choice = (name, values, selected) =>
    h(
      "select",
      { name: name },
      values.map((v) => h("option", { value: v, selected: v === selected }, v)),
    );
  return {
    title: textInput("title", task && task.title, { required: true, maxLength: 200 }),
    description: h("textarea", { name: "description", value: (task && task.description) || "" }),
    type: choice("type", ["cron", "once", "interval", "rrule"], s["type"]),
    // One expression per line: several are the rules of one zone, their fires the union.
    cron: h("textarea", {
      name: "cron",
      class: "mono",
      rows: 2,
      value: Array.isArray(s["cron"]) ? s["cron"].join("\n") : textValue(s["cron"]),
      placeholder: "0 9 * * 1-5\n0 10 * * sat",
    }),
    timezone: textInput("timezone", s["timezone"] || "UTC", { list: "zones" }),
    run_at: textInput("run_at", s["run_at"], { class: "mono", placeholder: "2026-12-01T09:00:00" }),
    every: textInput("every", s["every"], { class: "mono", placeholder: "PT15M" }),
    // RFC 5545 text, one property per line (docs/schedules.md#rrule).
    rrule: h("textarea", {
      name: "rrule",
      class: "mono",
      rows: 3,
      value: textValue(s["rrule"]),
      placeholder:
        "DTSTART;TZID=Europe/Berlin:20260105T093000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
    }),
    start_at: textInput("start_at", s["start_at"], {
      class: "mono",
      placeholder: "2026-12-01T00:00:00Z",
    }),
    end_at: textInput("end_at", s["end_at"], { class: "mono" }),
    max_runs: textInput("max_runs", s["max_runs"], { inputMode: "numeric" }),
    jitter: textInput("jitter", s["jitter"], { class: "mono", placeholder: "PT30S" }),
    exclude: h("textarea", {
      name: "exclude",
      class: "mono",
      rows: 3,
      value: textOfItems(s["exclude"]),
      placeholder: "2026-12-25\n2026-12-24..2026-12-26\ndays:* * sat,sun\ncalendar:holidays",
    }),
    kind: choice("kind", ["handler", "webhook", "agent"], t["kind"]),
    name: textInput("name", t["name"]),
    url: textInput("url", t["url"], { class: "mono" }),
    server: textInput("server", t["server"]),
    assistant_id: textInput("assistant_id", t["assistant_id"]),
    input: h("textarea", {
      name: "input",
      class: "mono",
      value:
        t["input"] === undefined || t["input"] === null ? "" : JSON.stringify(t["input"], null, 2),
    }),
  };
}

/**
 * The schedule the form describes: the type's fields that are filled, counts and seconds as numbers,
 * the cron expressions and the days to skip one per line. An interval's zone is sent only with days to
 * skip (it says where their dates are read).
 * @param {Fields} f
 */
function scheduleOf(f) {
  const type = f.type.value;
  /** @type {Record<string, unknown>} */
  const schedule = { type: type };
  for (const name of fieldsFor(FIELDS_BY_TYPE, type)) {
    const value = f[name].value.trim();
    if (value === "") continue;
    const numeric = /^\d+$/.test(value) && ["max_runs", "every", "jitter"].includes(name);
    schedule[name] = numeric ? Number(value) : value;
  }
  if (typeof schedule["cron"] === "string") {
    const rules = schedule["cron"].split("\n").map((rule) => rule.trim());
    const listed = rules.filter((rule) => rule !== "");
    schedule["cron"] = listed.length === 1 ? listed[0] : listed;
  }
  if (typeof schedule["exclude"] === "string") schedule["exclude"] = itemsOfText(f.exclude.value);
  if (type === "interval" && schedule["exclude"] === undefined) delete schedule["timezone"];
  return schedule;
}

/**
 * The target the form describes; an edit keeps the fields of the task's target the form does not show.
 * @param {Fields} f
 * @param {Task | null} task
 */
function targetOf(f, task) {
  const kind = f.kind.value;
  /** @type {Record<string, unknown>} */
  const target =
    task && task.target.kind === kind ? Object.assign({}, task.target) : { kind: kind };
  for (const name of fieldsFor(TARGET_FIELDS, kind)) target[name] = f[name].value.trim();
  const input = f.input.value.trim();
  delete target["input"];
  if (input !== "") {
    try {
      target["input"] = JSON.parse(input);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new ApiError(0, { title: "The target input is not JSON", detail: detail });
    }
  }
  return target;
}

/**
 * The schedule in words and its next fires, asked for 250 ms after the user stops typing; an answer
 * overtaken by a later one is dropped.
 * @param {Fields} f
 */
function livePreview(f) {
  const box = h("div", { id: "live-preview", class: "preview", "aria-live": "polite" });
  const words = h("p", { id: "live-words", class: "schedule-words" });
  let sequence = 0;
  /** @type {number | undefined} */
  let timer;
  const update = async () => {
    const mine = ++sequence;
    const schedule = scheduleOf(f);
    words.textContent = scheduleInWords(schedule);
    try {
      const answer = await previewSchedule(schedule, PREVIEW_COUNT);
      const several = Array.isArray(schedule["cron"]);
      if (mine === sequence)
        box.replaceChildren(firesTable(answer.occurrences, zoneOf(schedule), several));
    } catch (error) {
      if (mine !== sequence) return;
      if (error instanceof ApiError && error.status === 422)
        box.replaceChildren(problemList(error.problem));
      else showProblem(error);
    }
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      void update();
    }, 250);
  };
  return { node: h("div", {}, h("h3", {}, "Next fires"), words, box), schedule: schedule };
}

/**
 * Shows the fields of the chosen schedule type and target kind, hides the others'.
 * @param {Fields} f
 * @param {ReadonlyMap<FieldName, HTMLElement>} labels
 */
function showFieldsFor(f, labels) {
  const shown = fieldsFor(FIELDS_BY_TYPE, f.type.value).concat(
    fieldsFor(TARGET_FIELDS, f.kind.value),
  );
  const optional = Object.values(FIELDS_BY_TYPE).concat(Object.values(TARGET_FIELDS)).flat();
  for (const [name, label] of labels) {
    label.hidden = optional.includes(name) && !shown.includes(name);
  }
}

/**
 * The fields an edit changed, as a PATCH body; a schedule or target compared as the form reads it.
 * @param {Fields} f
 * @param {Task} task
 */
function changedFields(f, task) {
  /** @type {Record<string, unknown>} */
  const patch = {};
  if (f.title.value !== task.title) patch["title"] = f.title.value;
  if (f.description.value !== (task.description || ""))
    patch["description"] = f.description.value || null;
  const schedule = scheduleOf(f);
  if (JSON.stringify(schedule) !== JSON.stringify(scheduleOf(formFields(task))))
    patch["schedule"] = schedule;
  const target = targetOf(f, task);
  if (JSON.stringify(target) !== JSON.stringify(targetOf(formFields(task), task)))
    patch["target"] = target;
  return patch;
}

/**
 * @param {string} message
 * @param {readonly string[]} warnings
 * @returns {Child}
 */
function warned(message, warnings) {
  return warnings.length === 0
    ? message
    : [
        message,
        h(
          "ul",
          {},
          warnings.map((w) => h("li", {}, w)),
        ),
      ];
}

/**
 * Creates the task, or saves the edit; then shows the task's page.
 * @param {Fields} f
 * @param {Task | null} task
 */
async function save(f, task) {
  if (!task) {
    /** @type {Record<string, unknown>} */
    const body = { title: f.title.value, schedule: scheduleOf(f), target: targetOf(f, null) };
    if (f.description.value.trim() !== "") body["description"] = f.description.value;
    const created = await createTask(body);
    go(taskHash(created.task.id), warned("Created.", created.warnings));
    return;
  }
  const patch = changedFields(f, task);
  if (Object.keys(patch).length === 0) {
    go(taskHash(task.id), "Nothing changed.");
    return;
  }
  const updated = await updateTask(task.id, task.version, patch);
  go(taskHash(task.id), warned("Saved.", updated.warnings));
}

/**
 * Lists the owner's calendars under the days to skip, each a button adding its `calendar:` line; says
 * nothing when there are none or the store keeps none.
 * @param {HTMLElement} box
 * @param {Control} exclude
 * @param {() => void} changed
 */
async function offerCalendars(box, exclude, changed) {
  let names;
  try {
    names = (await listCalendars()).items.map((calendar) => calendar.name);
  } catch {
    return;
  }
  if (names.length === 0) return;
  box.replaceChildren(
    "Your calendars: ",
    ...names.map((name) =>
      h(
        "button",
        {
          type: "button",
          class: "link",
          onclick: () => {
            const text = exclude.value.trimEnd();
            exclude.value = (text === "" ? "" : text + "\n") + "calendar:" + name;
            changed();
          },
        },
        name,
      ),
    ),
    " · ",
    h("a", { href: "#/calendars" }, "manage"),
  );
}

/**
 * @param {number} ticket
 * @param {Task | null} task the task to edit; null for a new one
 */
export function renderForm(ticket, task) {
  const f = formFields(task);
  /** @type {Map<FieldName, HTMLElement>} */
  const labels = new Map();
  /**
   * @param {string} text
   * @param {FieldName} name
   */
  const field = (text, name) => {
    const label = h("label", {}, text, f[name]);
    labels.set(name, label);
    return label;
  };
  const preview = livePreview(f);
  // The days to skip, with the owner's calendars a click away (each adds its `calendar:` line).
  const calendars = h("div", { class: "small calendar-picks" });
  const excludeField = h(
    "div",
    {},
    h(
      "label",
      {},
      "Days to skip (one per line: a date, from..to, days:DOM MONTH DOW, calendar:NAME)",
      f.exclude,
    ),
    calendars,
  );
  labels.set("exclude", excludeField);
  void offerCalendars(calendars, f.exclude, preview.schedule);
  const submit = h("button", { type: "submit", class: "primary" }, task ? "Save" : "Create task");
  const form = h(
    "form",
    {
      class: "task-form",
      onsubmit: (e) => {
        e.preventDefault();
        void act(submit, () => save(f, task));
      },
    },
    h(
      "div",
      {},
      h(
        "fieldset",
        {},
        h("legend", {}, "Task"),
        field("Title", "title"),
        field("Description", "description"),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Schedule"),
        field("Type", "type"),
        field("Cron", "cron"),
        field("Time zone", "timezone"),
        field("Run at (local wall time, or an instant with offset)", "run_at"),
        field("Every (PT15M, P1D or seconds)", "every"),
        field("Recurrence (RFC 5545: DTSTART, RRULE, RDATE, EXDATE lines)", "rrule"),
        field("Start at", "start_at"),
        field("End at", "end_at"),
        field("Max runs", "max_runs"),
        field("Jitter", "jitter"),
        excludeField,
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Target"),
        field("Kind", "kind"),
        field("Handler name", "name"),
        field("Webhook URL", "url"),
        field("Agent server", "server"),
        field("Assistant id", "assistant_id"),
        field("Input (JSON, optional)", "input"),
      ),
      h(
        "div",
        { class: "actions" },
        submit,
        h("a", { href: task ? taskHash(task.id) : "#/" }, "Cancel"),
      ),
    ),
    preview.node,
    h(
      "datalist",
      { id: "zones" },
      Intl.supportedValuesOf("timeZone").map((z) => h("option", { value: z })),
    ),
  );
  for (const name of /** @type {const} */ (["type", "kind"])) {
    f[name].addEventListener("change", () => {
      showFieldsFor(f, labels);
    });
  }
  /** @type {readonly FieldName[]} */
  const scheduleFields = ["type"];
  for (const name of scheduleFields.concat(
    fieldsFor(FIELDS_BY_TYPE, "cron"),
    fieldsFor(FIELDS_BY_TYPE, "once"),
    fieldsFor(FIELDS_BY_TYPE, "interval"),
    fieldsFor(FIELDS_BY_TYPE, "rrule"),
  )) {
    f[name].addEventListener("input", preview.schedule);
  }
  showFieldsFor(f, labels);
  preview.schedule();
  mount(ticket, h("h2", {}, task ? "Edit “" + task.title + "”" : "New task"), form);
}

/**
 * @param {number} ticket
 * @param {string} id
 */
export async function renderEdit(ticket, id) {
  renderForm(ticket, await getTask(id));
}
