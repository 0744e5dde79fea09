/**
 * What a webhook's answer means (docs/semantics.md#launch, docs/semantics.md#completion): 2xx launched and completed (the body may carry `status`,
 * `result`, `error`), 202 launched and still running, 3xx refused (redirects are not followed), 409 busy,
 * other 4xx certainly not started, anything else uncertain.
 */
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../../domain/errors.js";
import type { LaunchedRun } from "../../../domain/ports/run-launcher.js";
import type { Run } from "../../../domain/run.js";
import type { JsonValue } from "../../../domain/target.js";
import {
  DEFAULT_LIMITS,
  jsonTextDepth,
  resultProblem,
} from "../../../application/policy/limits.js";
import type { HttpReply } from "./pinned-request.js";

/** The receiver's answer, kept as the `cause` of the launch error it led to. */
export class WebhookReplyError extends Error {
  override readonly name = "WebhookReplyError";

  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the webhook answered ${status}${body === "" ? "" : `: ${body}`}`);
  }
}

type Completion = NonNullable<LaunchedRun["completion"]>;

const SNIPPET_CHARS = 300;

/**
 * The launch a reply stands for.
 * @throws ThreadBusyError, LaunchFailedError or LaunchIndeterminateError, each with the reply as `cause`
 */
export function interpretReply(reply: HttpReply, run: Run): LaunchedRun {
  const { status } = reply;
  const launched = { targetRunId: run.id, threadId: run.threadId };
  if (status === 202) return launched;
  if (status >= 200 && status < 300) return { ...launched, completion: completionOf(reply) };
  const cause = new WebhookReplyError(status, snippet(reply.body));
  if (status >= 300 && status < 400) {
    const location = reply.headers.location ?? "elsewhere";
    throw new LaunchFailedError(
      `the webhook answered ${status}, a redirect to ${location}; redirects are not followed`,
      { cause },
    );
  }
  if (status === 409) throw new ThreadBusyError(cause.message, { cause });
  if (status >= 400 && status < 500) throw new LaunchFailedError(cause.message, { cause });
  throw new LaunchIndeterminateError(cause.message, { cause });
}

/**
 * A 2xx body: empty or not JSON -> succeeded; a JSON object -> its `status` (default succeeded), `result`
 * and `error`. A JSON body that cannot be read, or names another status, is an unreadable reply.
 */
function completionOf(reply: HttpReply): Completion {
  const text = reply.body.trim();
  const contentType = reply.headers["content-type"] ?? "";
  if (text === "" || (!contentType.includes("json") && !text.startsWith("{"))) {
    return { status: "succeeded" };
  }
  if (jsonTextDepth(text) > DEFAULT_LIMITS.jsonDepth) {
    // docs/security.md#bounded-input: the answer is not parsed; the run fails saying why.
    return {
      status: "failed",
      error: `the webhook's answer nests deeper than ${DEFAULT_LIMITS.jsonDepth} levels`,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw unreadable(reply, "it is not valid JSON", error);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw unreadable(reply, "it is not a JSON object");
  }
  const body = parsed as { status?: unknown; result?: unknown; error?: unknown };
  const status = body.status ?? "succeeded";
  if (status !== "succeeded" && status !== "failed") {
    throw unreadable(reply, `"status" must be "succeeded" or "failed"`);
  }
  const result = body.result === undefined ? undefined : (body.result as JsonValue);
  const error =
    body.error === undefined || body.error === null
      ? undefined
      : typeof body.error === "string"
        ? body.error
        : JSON.stringify(body.error);
  const refused = result === undefined ? null : resultProblem(result, "the webhook's");
  if (refused !== null) {
    // docs/security.md: a result is at most 64 KiB and 64 deep; as for handlers, a larger one fails the run.
    return { status: "failed", error: refused };
  }
  return {
    status,
    ...(result === undefined ? {} : { result }),
    ...(error === undefined ? {} : { error }),
  };
}

function unreadable(reply: HttpReply, why: string, cause?: unknown): LaunchIndeterminateError {
  return new LaunchIndeterminateError(
    `the webhook answered ${reply.status} with an unreadable body (${why})`,
    { cause: cause ?? new WebhookReplyError(reply.status, snippet(reply.body)) },
  );
}

function snippet(body: string): string {
  const text = body.trim();
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}...` : text;
}
