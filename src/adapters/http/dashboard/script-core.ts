/**
 * The dashboard script's core: the token (kept in sessionStorage), the API client, notices and the one
 * DOM builder. Every server value reaches the page as a text node or a property, never as HTML.
 */
export const SCRIPT_CORE = String.raw`
const TOKEN_KEY = "punctual.token";
const view = document.getElementById("view");
const notice = document.getElementById("notice");
const login = document.getElementById("login");
const ACTIVE = ["queued", "launching", "running"];
let renders = 0;

class ApiError extends Error {
  constructor(status, problem) {
    super((problem && problem.detail) || "HTTP " + status);
    this.status = status;
    this.problem = problem || {};
  }
}

function tokenOf() {
  return sessionStorage.getItem(TOKEN_KEY);
}

function askToken(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  renders += 1;
  view.replaceChildren();
  clearNotice();
  login.hidden = false;
  document.getElementById("login-message").textContent = message;
  document.getElementById("token").focus();
}

async function api(method, path, options) {
  const opts = options || {};
  const headers = Object.assign({ authorization: "Bearer " + tokenOf() }, opts.headers);
  const init = { method: method, headers: headers };
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(opts.body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let body = null;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = { title: "Unexpected answer", detail: text.slice(0, 200) };
  }
  if (response.status === 401) {
    const why = (body && body.detail) || "unauthorized";
    askToken("The server refused the token (" + why + "). Paste a valid token.");
    throw new ApiError(401, body);
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return { body: body, headers: response.headers };
}

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key in node && key !== "list") node[key] = value;
    else node.setAttribute(key, String(value));
  }
  node.append(...nodesOf(children));
  return node;
}

/** Children as nodes: strings become text nodes; null, undefined and false are left out. */
function nodesOf(children) {
  return children.flat(Infinity)
    .filter((child) => child !== null && child !== undefined && child !== false)
    .map((child) => (child instanceof Node ? child : String(child)));
}

function enc(id) {
  return encodeURIComponent(id);
}

function clearNotice() {
  notice.hidden = true;
  notice.className = "";
  notice.replaceChildren();
}

function say(...content) {
  notice.className = "";
  notice.replaceChildren(h("span", {}, content));
  notice.hidden = false;
}

function problemList(problem) {
  const errors = Array.isArray(problem.errors) ? problem.errors : [];
  return h("div", { class: "problem-list" },
    h("strong", {}, problem.title || "Request failed"), " ", problem.detail || "",
    errors.length === 0 ? null
      : h("ul", {}, errors.map((e) => h("li", {}, h("code", {}, e.field), ": ", e.message))));
}

function showProblem(error) {
  if (error instanceof ApiError && error.status === 401) return;
  const problem = error instanceof ApiError ? error.problem
    : { title: "Error", detail: String((error && error.message) || error) };
  notice.className = "problem";
  notice.replaceChildren(problemList(problem));
  notice.hidden = false;
}

async function act(button, work) {
  button.disabled = true;
  clearNotice();
  try {
    await work();
  } catch (error) {
    showProblem(error);
  } finally {
    button.disabled = false;
  }
}

function startRender() {
  renders += 1;
  view.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  return renders;
}

function current(ticket) {
  return ticket === renders;
}

function mount(ticket, ...nodes) {
  if (current(ticket)) view.replaceChildren(...nodesOf(nodes));
}
`;
