// @ts-check
/**
 * The dashboard's API access: the token (kept in this tab's sessionStorage), one function per call the
 * pages make, and `ApiError` for a refused one. No DOM here; a refused token is reported to the handler
 * the app shell registers.
 */

/**
 * @import { Calendar, Explanation, Page, Preview, Problem, PutCalendar, ReplicaList, Run, SavedTask,
 *   Schedule, Task } from "./api-types.js"
 */

const TOKEN_KEY = "punctual.token";

/** An API call the server refused, with its RFC 9457 problem (empty when the answer had none). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Problem | null} problem
   */
  constructor(status, problem) {
    super(problem?.detail || "HTTP " + String(status));
    /** @readonly */
    this.status = status;
    /** @readonly @type {Problem} */
    this.problem = problem || {};
  }
}

/** @returns {string | null} */
export function tokenOf() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string} secret */
export function keepToken(secret) {
  sessionStorage.setItem(TOKEN_KEY, secret);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** @type {(why: string) => void} */
let onRefusedToken = () => undefined;

/**
 * Who hears of a 401: called with the server's reason before the call throws.
 * @param {(why: string) => void} handler
 */
export function whenTokenRefused(handler) {
  onRefusedToken = handler;
}

/**
 * @typedef {object} RequestOptions
 * @property {unknown} [body] sent as JSON
 * @property {Readonly<Record<string, string>>} [headers]
 */

/**
 * One call with the bearer token; the answer's JSON body, or an `ApiError`.
 * @param {string} method
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<unknown>}
 */
async function request(method, path, options) {
  const opts = options ?? {};
  /** @type {Record<string, string>} */
  const headers = Object.assign({ authorization: "Bearer " + String(tokenOf()) }, opts.headers);
  /** @type {RequestInit} */
  const init = { method: method, headers: headers };
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(opts.body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  /** @type {unknown} */
  let body;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = { title: "Unexpected answer", detail: text.slice(0, 200) };
  }
  // A failed call answers a problem (or the stand-in above); the API's schemas say what a success holds.
  const problem = /** @type {Problem | null} */ (body);
  if (response.status === 401) {
    onRefusedToken(problem?.detail || "unauthorized");
    throw new ApiError(401, problem);
  }
  if (!response.ok) throw new ApiError(response.status, problem);
  return body;
}

/** @param {string} id */
const taskPath = (id) => "/v1/tasks/" + encodeURIComponent(id);

/**
 * One page of tasks, searched by title or key when `query.search` is given.
 * @param {number} limit
 * @param {{ search?: string, cursor?: string }} [query]
 * @returns {Promise<Page<Task>>}
 */
export async function listTasks(limit, query) {
  const params = new URLSearchParams({ limit: String(limit) });
  if (query?.search) params.set("search", query.search);
  if (query?.cursor) params.set("cursor", query.cursor);
  return /** @type {Page<Task>} */ (await request("GET", "/v1/tasks?" + params.toString()));
}

/**
 * @typedef {object} RunFilter
 * @property {readonly string[]} [status]
 * @property {string} [target_kind]
 * @property {string} [trigger]
 * @property {string} [late] "true" or "false"
 * @property {string} [finished_after] an RFC 3339 instant
 * @property {string} [cursor]
 */

/**
 * Runs across the token's tasks, newest first (`GET /v1/runs`).
 * @param {number} limit
 * @param {RunFilter} filter
 * @returns {Promise<Page<Run>>}
 */
export async function listAllRuns(limit, filter) {
  const params = new URLSearchParams({ limit: String(limit) });
  for (const status of filter.status ?? []) params.append("status", status);
  for (const name of /** @type {const} */ ([
    "target_kind",
    "trigger",
    "late",
    "finished_after",
    "cursor",
  ])) {
    const value = filter[name];
    if (value) params.set(name, value);
  }
  return /** @type {Page<Run>} */ (await request("GET", "/v1/runs?" + params.toString()));
}

/**
 * The fleet's replicas and their last heartbeat (`GET /v1/replicas`); null for a token that is not an
 * admin's (the route answers 403).
 * @returns {Promise<ReplicaList | null>}
 */
export async function listReplicas() {
  try {
    return /** @type {ReplicaList} */ (await request("GET", "/v1/replicas"));
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return null;
    throw error;
  }
}

/**
 * Puts a failed, timed-out or cancelled run back in the queue as its next attempt.
 * @param {string} runId
 * @returns {Promise<Run>}
 */
export async function retryRun(runId) {
  return /** @type {Run} */ (
    await request("POST", "/v1/runs/" + encodeURIComponent(runId) + "/retry")
  );
}

/**
 * @param {string} id
 * @returns {Promise<Task>}
 */
export async function getTask(id) {
  return /** @type {Task} */ (await request("GET", taskPath(id)));
}

/**
 * The task's latest runs, newest first.
 * @param {string} taskId
 * @param {number} limit
 * @returns {Promise<Page<Run>>}
 */
export async function listRuns(taskId, limit) {
  const path = taskPath(taskId) + "/runs?limit=" + String(limit);
  return /** @type {Page<Run>} */ (await request("GET", path));
}

/**
 * The task's next `count` fires.
 * @param {string} id
 * @param {number} count
 * @returns {Promise<Preview>}
 */
export async function previewTask(id, count) {
  return /** @type {Preview} */ (
    await request("GET", taskPath(id) + "/preview?count=" + String(count))
  );
}

/**
 * The next `count` fires of a schedule no task has yet.
 * @param {Schedule} schedule
 * @param {number} count
 * @returns {Promise<Preview>}
 */
export async function previewSchedule(schedule, count) {
  const path = "/v1/schedules/preview?count=" + String(count);
  return /** @type {Preview} */ (await request("POST", path, { body: { schedule: schedule } }));
}

/**
 * Why the task fired, or not, at the instant `at` (sent as typed).
 * @param {string} id
 * @param {string} at
 * @returns {Promise<Explanation>}
 */
export async function explainTask(id, at) {
  const path = taskPath(id) + "/explain?at=" + encodeURIComponent(at);
  return /** @type {Explanation} */ (await request("GET", path));
}

/** @param {string} id */
export async function pauseTask(id) {
  await request("POST", taskPath(id) + "/pause");
}

/**
 * @param {string} id
 * @param {string} catchUp `none`, `latest` or `all`
 */
export async function resumeTask(id, catchUp) {
  await request("POST", taskPath(id) + "/resume", { body: { catch_up: catchUp } });
}

/**
 * @param {string} id
 * @returns {Promise<Run>}
 */
export async function triggerTask(id) {
  return /** @type {Run} */ (await request("POST", taskPath(id) + "/trigger"));
}

/**
 * Deletes the task; `force` also cancels a run in flight (otherwise that answers 409).
 * @param {string} id
 * @param {boolean} force
 */
export async function deleteTask(id, force) {
  await request("DELETE", taskPath(id) + (force ? "?force=true" : ""));
}

/**
 * @param {Readonly<Record<string, unknown>>} body the task, as `POST /v1/tasks` takes it
 * @returns {Promise<SavedTask>}
 */
export async function createTask(body) {
  return /** @type {SavedTask} */ (await request("POST", "/v1/tasks", { body: body }));
}

/**
 * Changes the fields in `patch`, refused (409) if the task is no longer at `version`.
 * @param {string} id
 * @param {number} version
 * @param {Readonly<Record<string, unknown>>} patch
 * @returns {Promise<SavedTask>}
 */
export async function updateTask(id, version, patch) {
  const headers = { "if-match": '"' + String(version) + '"' };
  return /** @type {SavedTask} */ (
    await request("PATCH", taskPath(id), { body: patch, headers: headers })
  );
}

/** @param {string} runId */
export async function cancelRun(runId) {
  await request("POST", "/v1/runs/" + encodeURIComponent(runId) + "/cancel");
}

/** @param {string} name */
const calendarPath = (name) => "/v1/calendars/" + encodeURIComponent(name);

/** @returns {Promise<{ items: readonly Calendar[] }>} */
export async function listCalendars() {
  return /** @type {{ items: readonly Calendar[] }} */ (await request("GET", "/v1/calendars"));
}

/**
 * @param {string} name
 * @returns {Promise<Calendar>}
 */
export async function getCalendar(name) {
  return /** @type {Calendar} */ (await request("GET", calendarPath(name)));
}

/**
 * Creates the calendar or replaces its items.
 * @param {string} name
 * @param {readonly unknown[]} items
 * @returns {Promise<PutCalendar>}
 */
export async function putCalendar(name, items) {
  return /** @type {PutCalendar} */ (
    await request("PUT", calendarPath(name), { body: { items: items } })
  );
}

/**
 * Deletes the calendar; refused (409 `calendar_in_use`, naming a task) while a task names it.
 * @param {string} name
 */
export async function deleteCalendar(name) {
  await request("DELETE", calendarPath(name));
}
