/**
 * The dashboard's create and edit form (`#/new`, `#/tasks/<id>/edit`), with a live preview of the next
 * fires from `POST /v1/schedules/preview` while the user types. An edit sends only the fields that
 * changed, with the task's version in `If-Match`, so an unchanged schedule is never re-anchored.
 */
export const SCRIPT_FORM = String.raw`
const PREVIEW_COUNT = 10;
const FIELDS_BY_TYPE = {
  cron: ["cron", "timezone", "start_at", "end_at", "max_runs", "jitter"],
  once: ["run_at", "timezone", "jitter"],
  interval: ["every", "start_at", "end_at", "max_runs", "jitter"],
};
const TARGET_FIELDS = { handler: ["name"], webhook: ["url"], agent: ["server", "assistant_id"] };

function textInput(name, value, attrs) {
  return h("input", Object.assign({ name: name, value: value === undefined || value === null ? "" : String(value) }, attrs));
}

function formFields(task) {
  const s = task ? task.schedule : { type: "cron", cron: "0 9 * * *", timezone: BROWSER_ZONE };
  const t = task ? task.target : { kind: "handler", name: "log" };
  const choice = (name, values, selected) =>
    h("select", { name: name }, values.map((v) => h("option", { value: v, selected: v === selected }, v)));
  return {
    title: textInput("title", task && task.title, { required: true, maxLength: 200 }),
    description: h("textarea", { name: "description", value: (task && task.description) || "" }),
    type: choice("type", ["cron", "once", "interval"], s.type),
    cron: textInput("cron", s.cron, { class: "mono", placeholder: "0 9 * * 1-5" }),
    timezone: textInput("timezone", s.timezone || "UTC", { list: "zones" }),
    run_at: textInput("run_at", s.run_at, { class: "mono", placeholder: "2026-12-01T09:00:00" }),
    every: textInput("every", s.every, { class: "mono", placeholder: "PT15M" }),
    start_at: textInput("start_at", s.start_at, { class: "mono", placeholder: "2026-12-01T00:00:00Z" }),
    end_at: textInput("end_at", s.end_at, { class: "mono" }),
    max_runs: textInput("max_runs", s.max_runs, { inputMode: "numeric" }),
    jitter: textInput("jitter", s.jitter, { class: "mono", placeholder: "PT30S" }),
    kind: choice("kind", ["handler", "webhook", "agent"], t.kind),
    name: textInput("name", t.name),
    url: textInput("url", t.url, { class: "mono" }),
    server: textInput("server", t.server),
    assistant_id: textInput("assistant_id", t.assistant_id),
    input: h("textarea", { name: "input", class: "mono",
      value: t.input === undefined || t.input === null ? "" : JSON.stringify(t.input, null, 2) }),
  };
}

function scheduleOf(f) {
  const type = f.type.value;
  const schedule = { type: type };
  for (const name of FIELDS_BY_TYPE[type]) {
    const value = f[name].value.trim();
    if (value === "") continue;
    const numeric = /^\d+$/.test(value) && ["max_runs", "every", "jitter"].includes(name);
    schedule[name] = numeric ? Number(value) : value;
  }
  return schedule;
}

function targetOf(f, task) {
  const kind = f.kind.value;
  const target = task && task.target.kind === kind ? Object.assign({}, task.target) : { kind: kind };
  for (const name of TARGET_FIELDS[kind]) target[name] = f[name].value.trim();
  const input = f.input.value.trim();
  delete target.input;
  if (input !== "") {
    try {
      target.input = JSON.parse(input);
    } catch (error) {
      throw new ApiError(0, { title: "The target input is not JSON", detail: error.message });
    }
  }
  return target;
}

function livePreview(f) {
  const box = h("div", { id: "live-preview", class: "preview", "aria-live": "polite" });
  const words = h("p", { id: "live-words", class: "schedule-words" });
  let sequence = 0;
  let timer = null;
  const update = async () => {
    const mine = ++sequence;
    const schedule = scheduleOf(f);
    words.textContent = scheduleInWords(schedule);
    try {
      const path = "/v1/schedules/preview?count=" + PREVIEW_COUNT;
      const answer = (await api("POST", path, { body: { schedule: schedule } })).body;
      if (mine === sequence) box.replaceChildren(firesTable(answer.occurrences, zoneOf(schedule)));
    } catch (error) {
      if (mine !== sequence) return;
      if (error instanceof ApiError && error.status === 422) box.replaceChildren(problemList(error.problem));
      else showProblem(error);
    }
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => update(), 250);
  };
  return { node: h("div", {}, h("h3", {}, "Next fires"), words, box), schedule: schedule };
}

function showFieldsFor(f, labels) {
  const shown = FIELDS_BY_TYPE[f.type.value].concat(TARGET_FIELDS[f.kind.value]);
  const optional = Object.values(FIELDS_BY_TYPE).concat(Object.values(TARGET_FIELDS)).flat();
  for (const [name, label] of Object.entries(labels)) {
    label.hidden = optional.includes(name) && !shown.includes(name);
  }
}

function changedFields(f, task) {
  const patch = {};
  if (f.title.value !== task.title) patch.title = f.title.value;
  if (f.description.value !== (task.description || "")) patch.description = f.description.value || null;
  const schedule = scheduleOf(f);
  if (JSON.stringify(schedule) !== JSON.stringify(scheduleOf(formFields(task)))) patch.schedule = schedule;
  const target = targetOf(f, task);
  if (JSON.stringify(target) !== JSON.stringify(targetOf(formFields(task), task))) patch.target = target;
  return patch;
}

function warned(message, warnings) {
  return warnings.length === 0 ? message
    : [message, h("ul", {}, warnings.map((w) => h("li", {}, w)))];
}

async function save(f, task) {
  if (!task) {
    const body = { title: f.title.value, schedule: scheduleOf(f), target: targetOf(f, null) };
    if (f.description.value.trim() !== "") body.description = f.description.value;
    const created = (await api("POST", "/v1/tasks", { body: body })).body;
    go("#/tasks/" + enc(created.task.id), warned("Created.", created.warnings));
    return;
  }
  const patch = changedFields(f, task);
  if (Object.keys(patch).length === 0) {
    go("#/tasks/" + enc(task.id), "Nothing changed.");
    return;
  }
  const headers = { "if-match": '"' + task.version + '"' };
  const updated = (await api("PATCH", "/v1/tasks/" + enc(task.id), { body: patch, headers: headers })).body;
  go("#/tasks/" + enc(task.id), warned("Saved.", updated.warnings));
}

function renderForm(ticket, task) {
  const f = formFields(task);
  const labels = {};
  const field = (text, name) => (labels[name] = h("label", {}, text, f[name]));
  const preview = livePreview(f);
  const submit = h("button", { type: "submit", class: "primary" }, task ? "Save" : "Create task");
  const form = h("form", { class: "task-form", onsubmit: (e) => {
    e.preventDefault();
    act(submit, () => save(f, task));
  } },
    h("div", {},
      h("fieldset", {}, h("legend", {}, "Task"), field("Title", "title"), field("Description", "description")),
      h("fieldset", {}, h("legend", {}, "Schedule"), field("Type", "type"), field("Cron", "cron"),
        field("Time zone", "timezone"), field("Run at (local wall time, or an instant with offset)", "run_at"),
        field("Every (PT15M, P1D or seconds)", "every"), field("Start at", "start_at"),
        field("End at", "end_at"), field("Max runs", "max_runs"), field("Jitter", "jitter")),
      h("fieldset", {}, h("legend", {}, "Target"), field("Kind", "kind"), field("Handler name", "name"),
        field("Webhook URL", "url"), field("Agent server", "server"), field("Assistant id", "assistant_id"),
        field("Input (JSON, optional)", "input")),
      h("div", { class: "actions" }, submit,
        h("a", { href: task ? "#/tasks/" + enc(task.id) : "#/" }, "Cancel"))),
    preview.node,
    h("datalist", { id: "zones" }, Intl.supportedValuesOf("timeZone").map((z) => h("option", { value: z }))));
  for (const name of ["type", "kind"]) f[name].addEventListener("change", () => showFieldsFor(f, labels));
  for (const name of ["type"].concat(FIELDS_BY_TYPE.cron, FIELDS_BY_TYPE.once, FIELDS_BY_TYPE.interval)) {
    f[name].addEventListener("input", preview.schedule);
  }
  showFieldsFor(f, labels);
  preview.schedule();
  mount(ticket, h("h2", {}, task ? "Edit “" + task.title + "”" : "New task"), form);
}

async function renderEdit(ticket, id) {
  const task = (await api("GET", "/v1/tasks/" + enc(id))).body;
  renderForm(ticket, task);
}
`;
