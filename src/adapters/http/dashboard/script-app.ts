/**
 * The dashboard's router: hash routes (`#/`, `#/new`, `#/tasks/<id>`, `#/tasks/<id>/edit`), the token
 * prompt, and notices carried across a navigation.
 */
export const SCRIPT_APP = String.raw`
let pendingNotice = null;

function go(hash, message) {
  pendingNotice = message;
  if (location.hash === hash) {
    clearNotice();
    say(pendingNotice);
    pendingNotice = null;
    route();
  } else {
    location.hash = hash;
  }
}

async function route() {
  if (!tokenOf()) {
    askToken("Paste an API token to use the dashboard.");
    return;
  }
  login.hidden = true;
  const ticket = startRender();
  const hash = location.hash || "#/";
  const edit = /^#\/tasks\/([^/]+)\/edit$/.exec(hash);
  const task = /^#\/tasks\/([^/]+)$/.exec(hash);
  try {
    if (edit) await renderEdit(ticket, decodeURIComponent(edit[1]));
    else if (task) await renderTask(ticket, decodeURIComponent(task[1]));
    else if (hash === "#/new") renderForm(ticket, null);
    else await renderList(ticket);
  } catch (error) {
    if (!current(ticket) || (error instanceof ApiError && error.status === 401)) return;
    mount(ticket, h("p", {}, h("a", { href: "#/" }, "Back to the tasks")));
    showProblem(error);
  }
}

window.addEventListener("hashchange", () => {
  clearNotice();
  if (pendingNotice !== null) say(pendingNotice);
  pendingNotice = null;
  route();
});

login.addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("token");
  const secret = input.value.trim();
  if (secret === "") return;
  sessionStorage.setItem(TOKEN_KEY, secret);
  input.value = "";
  clearNotice();
  route();
});

document.getElementById("forget").addEventListener("click", () => {
  askToken("Token forgotten. Paste a token to continue.");
});

route();
`;
