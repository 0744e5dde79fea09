/**
 * How the HTTP app answers (http-app.ts): a route's answer, and every error as an
 * `application/problem+json` problem from the one error map (docs/errors.md), a database that does not
 * answer as a 503 `database_unavailable`, anything unexpected as a generic 500 with the error logged.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { QuotaExceededError } from "../../domain/errors.js";
import { storeOutage } from "../storage/shared/store-outage.js";
import type { StoreOutage } from "../storage/shared/store-outage.js";
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemFromError, problemOf } from "./problem.js";
import type { Problem } from "./problem.js";
import type { Answer } from "./route-spec.js";

/** What a `database_unavailable` problem says, by the outage seen. */
const OUTAGE_DETAIL: Readonly<Record<StoreOutage, string>> = {
  timeout: "the database did not answer in time (statement or connection timeout); try again later",
  unavailable: "the database could not be reached or cannot serve now; try again later",
};
/** The `Retry-After` of a `database_unavailable` answer, in seconds. */
const OUTAGE_RETRY_AFTER_S = 5;

export function sendProblem(
  reply: FastifyReply,
  problem: Problem,
  headers: Record<string, string> = {},
) {
  return reply
    .code(problem.status)
    .headers(headers)
    .header("content-type", PROBLEM_CONTENT_TYPE)
    .send(problem);
}

export function sendAnswer(reply: FastifyReply, answer: Answer) {
  reply.code(answer.status);
  if (answer.headers !== undefined) reply.headers(answer.headers);
  return answer.body === undefined ? reply.send() : reply.send(answer.body);
}

/** A database outage as any of the app's APIs answers it: 503, what it says, `Retry-After`. */
export interface OutageAnswer {
  readonly detail: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The 503 an error answers when it is a database outage (a timeout, a connection refused or dropped,
 * a full disk), logged at warn; null for any other error. `/v1` answers it as a `database_unavailable`
 * problem, the DeerFlow and LangGraph-compatible routes as their platforms' `{detail}`
 * (docs/errors.md#http-only-problems).
 */
export function outageAnswer(error: unknown, request: FastifyRequest): OutageAnswer | null {
  if (problemFromError(error) !== null) return null;
  const outage = storeOutage(error);
  if (outage === null) return null;
  // Not a bug: the database was too slow or out of reach.
  request.log.warn({ err: error, outage }, "the database did not answer a request");
  return {
    detail: OUTAGE_DETAIL[outage],
    headers: { "retry-after": String(OUTAGE_RETRY_AFTER_S) },
  };
}

/** The app's error handler: the problem an error answers, with its headers. */
export function replyWithProblem(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const outage = outageAnswer(error, request);
  if (outage !== null) {
    return sendProblem(reply, problemOf("database_unavailable", outage.detail), outage.headers);
  }
  const problem = problemFromError(error);
  if (problem === null) {
    request.log.error({ err: error }, "unexpected error answering a request");
    return sendProblem(
      reply,
      problemOf("internal_error", "an unexpected error; see the server log"),
    );
  }
  let headers = error instanceof HttpProblem ? { ...error.extra.headers } : {};
  if (problem.status === 401) headers = { ...headers, "www-authenticate": "Bearer" };
  if (error instanceof QuotaExceededError) {
    headers = { ...headers, "retry-after": String(error.retryAfterSeconds) };
  }
  if (isMediaTypeError(error)) {
    return sendProblem(
      reply,
      problemOf("unsupported_media_type", "send JSON bodies with Content-Type: application/json"),
    );
  }
  return sendProblem(reply, problem, headers);
}

function isMediaTypeError(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { code?: unknown }).code === "FST_ERR_CTP_INVALID_MEDIA_TYPE"
  );
}
