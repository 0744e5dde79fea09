// @ts-check
/**
 * The page's shared state: the view a page renders into (each render takes a ticket, so an answer
 * arriving after the user moved on is dropped), the notice area with problems shown as the API states
 * them, buttons that act, and the token prompt.
 */
import { ApiError, forgetToken } from "./api.js";
import { element, h, nodesOf } from "./dom.js";

/**
 * @import { Child } from "./dom-types.js"
 * @import { FieldError, Problem } from "./api-types.js"
 */

const view = element("view", HTMLElement);
const notice = element("notice", HTMLElement);
export const login = element("login", HTMLFormElement);
let renders = 0;

/**
 * Starts a render: the view says it is loading, and earlier renders' tickets expire.
 * @returns {number} the ticket
 */
export function startRender() {
  renders += 1;
  view.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  return renders;
}

/** @param {number} ticket */
export function current(ticket) {
  return ticket === renders;
}

/**
 * Shows `nodes` in the view, if the ticket is still current.
 * @param {number} ticket
 * @param {...Child} nodes
 */
export function mount(ticket, ...nodes) {
  if (current(ticket)) view.replaceChildren(...nodesOf(nodes));
}

/**
 * Drops the token and asks for one, saying why.
 * @param {string} message
 */
export function askToken(message) {
  forgetToken();
  renders += 1;
  view.replaceChildren();
  clearNotice();
  login.hidden = false;
  element("login-message", HTMLElement).textContent = message;
  element("token", HTMLInputElement).focus();
}

export function clearNotice() {
  notice.hidden = true;
  notice.className = "";
  notice.replaceChildren();
}

/** @param {...Child} content */
export function say(...content) {
  notice.className = "";
  notice.replaceChildren(h("span", {}, content));
  notice.hidden = false;
}

/**
 * A problem's title and detail, and each field error.
 * @param {Problem} problem
 */
export function problemList(problem) {
  const errors = Array.isArray(problem.errors)
    ? /** @type {readonly FieldError[]} */ (problem.errors)
    : [];
  return h(
    "div",
    { class: "problem-list" },
    h("strong", {}, problem.title || "Request failed"),
    " ",
    problem.detail || "",
    errors.length === 0
      ? null
      : h(
          "ul",
          {},
          errors.map((e) => h("li", {}, h("code", {}, e.field), ": ", e.message)),
        ),
  );
}

/**
 * Shows a failure in the notice area, with `more` after it (a link to act on it); a refused token is
 * already handled by the prompt.
 * @param {unknown} error
 * @param {...Child} more
 */
export function showProblem(error, ...more) {
  if (error instanceof ApiError && error.status === 401) return;
  const problem =
    error instanceof ApiError
      ? error.problem
      : { title: "Error", detail: String((error instanceof Error && error.message) || error) };
  notice.className = "problem";
  notice.replaceChildren(problemList(problem), ...nodesOf(more));
  notice.hidden = false;
}

/**
 * Runs `work` with the button disabled meanwhile; a failure shows as a problem.
 * @param {HTMLButtonElement} button
 * @param {() => Promise<void>} work
 */
export async function act(button, work) {
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

/**
 * A button that runs `work` when clicked (see `act`).
 * @param {string} label
 * @param {() => Promise<void>} work
 * @param {string} [cls]
 */
export function actionButton(label, work, cls) {
  const button = h("button", { type: "button", class: cls ?? "" }, label);
  button.addEventListener("click", () => {
    void act(button, work);
  });
  return button;
}
