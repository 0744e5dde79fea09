/**
 * The client's two errors: the API answered with an error (a problem document, RFC 9457), or it could
 * not be reached at all. An aborted call rejects with the signal's reason instead, untouched.
 */
import type { FieldError } from "../domain/errors.js";

/** Every problem `type` is this base plus the problem's code (docs/errors.md). */
const PROBLEM_TYPE_BASE = "https://punctual.dev/problems/";

/**
 * The API answered 4xx or 5xx. Branch on `code` (`version_conflict`, `validation_failed`, ...: the
 * list is docs/errors.md), not on the message.
 *
 * @example
 * ```ts
 * try {
 *   await client.tasks.update(id, { title: "renamed" }, { version: 3 });
 * } catch (error) {
 *   if (error instanceof PunctualApiError && error.code === "version_conflict") reload();
 *   else throw error;
 * }
 * ```
 */
export class PunctualApiError extends Error {
  override readonly name = "PunctualApiError";
  /** The HTTP status. */
  readonly status: number;
  /** The problem's code, the last segment of `type`; `http_<status>` for an answer that is no problem. */
  readonly code: string;
  /** The problem's `type` URI; `about:blank` for an answer that is no problem document. */
  readonly type: string;
  readonly title: string;
  /** The sentence for a person; empty when the answer said nothing. */
  readonly detail: string;
  /** `validation_failed`: one entry per bad field (`schedule.cron`, `query.limit`, ...). */
  readonly errors: readonly FieldError[];
  /** `limit_exceeded`: the limit's name and its maximum. */
  readonly limit: string | null;
  readonly max: number | null;
  /** `calendar_in_use`: a task whose schedule names the calendar. */
  readonly task_id: string | null;
  /** The answer's headers (`Retry-After` on 429 and 503). */
  readonly headers: Headers;
  /** The answer's body as received: the problem document, or the text of a proxy's error page. */
  readonly body: unknown;

  constructor(status: number, body: unknown, headers: Headers) {
    const problem = fieldsOf(body);
    const type = text(problem["type"]) ?? "about:blank";
    const title = text(problem["title"]) ?? `HTTP ${status}`;
    const detail = text(problem["detail"]) ?? "";
    super(detail === "" ? `${title} (${status})` : `${title} (${status}): ${detail}`);
    this.status = status;
    this.type = type;
    this.code = type.startsWith(PROBLEM_TYPE_BASE)
      ? type.slice(PROBLEM_TYPE_BASE.length)
      : `http_${status}`;
    this.title = title;
    this.detail = detail;
    this.errors = fieldErrorsOf(problem["errors"]);
    this.limit = text(problem["limit"]) ?? null;
    this.max = typeof problem["max"] === "number" ? problem["max"] : null;
    this.task_id = text(problem["task_id"]) ?? null;
    this.headers = headers;
    this.body = body;
  }
}

/** The API could not be reached (DNS, refused connection, TLS, a reset): nothing was answered. */
export class PunctualConnectionError extends Error {
  override readonly name = "PunctualConnectionError";

  constructor(
    /** The URL the call was for. */
    readonly url: string,
    message: string,
    options: { readonly cause: unknown },
  ) {
    super(message, options);
  }
}

function fieldsOf(body: unknown): Readonly<Record<string, unknown>> {
  return typeof body === "object" && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function fieldErrorsOf(value: unknown): FieldError[] {
  if (!Array.isArray(value)) return [];
  return value.map((entry: unknown) => {
    const fields = fieldsOf(entry);
    return { field: String(fields["field"]), message: String(fields["message"]) };
  });
}
