/**
 * What an agent server's answer to a create-run request means (docs/semantics.md#launch, docs/targets.md#launch-busy-threads-and-uncertain-launches): 2xx started
 * (the run id from the body, else from `Content-Location`); 409, or 422 saying the thread is already
 * running (the JS server), busy; other 3xx and 4xx certainly not started; anything else uncertain.
 */
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../../domain/errors.js";
import type { LaunchedRun } from "../../../domain/ports/run-launcher.js";
import type { AgentReply } from "./agent-http.js";

/** The server's answer, kept as the `cause` of the launch error it led to. */
export class AgentReplyError extends Error {
  override readonly name = "AgentReplyError";

  constructor(
    readonly server: string,
    readonly status: number,
    readonly detail: string,
  ) {
    super(`agent server "${server}" answered ${status}${detail === "" ? "" : `: ${detail}`}`);
  }
}

const DETAIL_CHARS = 500;
/** The busy messages: langgraph-api and the JS server ("already running a task"), DeerFlow. */
const BUSY_DETAIL = /already running a task|already has an active run/i;
const CONTENT_LOCATION = /\/threads\/([^/]+)\/runs\/([^/?#]+)\/?$/;

/**
 * The server's explanation: `detail` of a JSON error (a string, or FastAPI's list of `{msg, loc}`), else
 * the text of the body (the JS server answers in plain text), shortened.
 */
export function detailOf(reply: AgentReply): string {
  const body = reply.body;
  let text = reply.text.trim();
  if (typeof body === "object" && body !== null && "detail" in body) {
    const detail = body.detail;
    if (typeof detail === "string") text = detail;
    else if (Array.isArray(detail)) text = detail.map(fastApiMessage).join("; ");
  }
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}...` : text;
}

function fastApiMessage(item: unknown): string {
  if (typeof item !== "object" || item === null) return String(item);
  const { msg, loc } = item as { msg?: unknown; loc?: unknown };
  const where = Array.isArray(loc) ? loc.map(String).join(".") : "";
  const message = typeof msg === "string" ? msg : JSON.stringify(item);
  return where === "" ? message : `${where}: ${message}`;
}

/** 409, or a 422 whose detail says the thread is running a task (the JS server's busy answer). */
export function isBusyReply(reply: AgentReply): boolean {
  return reply.status === 409 || (reply.status === 422 && BUSY_DETAIL.test(detailOf(reply)));
}

/**
 * The launched run a 2xx reply describes.
 * @throws LaunchIndeterminateError when the reply names no run: it may have started all the same
 */
export function launchedFrom(reply: AgentReply, server: string, requested: string): LaunchedRun {
  const body: Record<string, unknown> =
    typeof reply.body === "object" && reply.body !== null && !Array.isArray(reply.body)
      ? (reply.body as Record<string, unknown>)
      : {};
  const location = CONTENT_LOCATION.exec(reply.headers.get("content-location") ?? "");
  const runId = nonEmpty(body["run_id"]) ?? decoded(location?.[2]);
  if (runId === null) {
    throw new LaunchIndeterminateError(
      `agent server "${server}" answered ${reply.status} without naming the run it started`,
      { cause: new AgentReplyError(server, reply.status, detailOf(reply)) },
    );
  }
  const threadId = nonEmpty(body["thread_id"]) ?? decoded(location?.[1]) ?? requested;
  return { targetRunId: runId, threadId };
}

/** The launch error a non-2xx reply stands for, with the reply as its cause. */
export function launchError(reply: AgentReply, server: string): Error {
  const cause = new AgentReplyError(server, reply.status, detailOf(reply));
  if (isBusyReply(reply)) return new ThreadBusyError(cause.message, { cause });
  if (reply.status >= 300 && reply.status < 400) {
    const location = reply.headers.get("location") ?? "elsewhere";
    return new LaunchFailedError(
      `${cause.message} (a redirect to ${location}; redirects are not followed: check the server's url)`,
      { cause },
    );
  }
  if (reply.status >= 400 && reply.status < 500)
    return new LaunchFailedError(cause.message, { cause });
  return new LaunchIndeterminateError(`${cause.message} (the run may have started)`, { cause });
}

function nonEmpty(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function decoded(segment: string | undefined): string | null {
  if (segment === undefined) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
