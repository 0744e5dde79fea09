/**
 * The one table from an error to an RFC 9457 problem (CONVENTIONS "Errors"). It is typed
 * `Record<ErrorCode, ...>`, so a new error code does not compile until it is mapped here; the problems
 * only HTTP raises (malformed request, missing token, rate limit...) sit beside it.
 */
import type { ErrorCode } from "../../domain/errors.js";

/** Every problem `type` is this base plus the problem's code. */
export const PROBLEM_TYPE_BASE = "https://punctual.dev/problems/";

export interface ProblemKind {
  readonly status: number;
  readonly title: string;
  /** False for codes that never reach a client on purpose: they answer a generic 500. */
  readonly exposed: boolean;
}

export const ERROR_PROBLEMS: Readonly<Record<ErrorCode, ProblemKind>> = {
  validation_failed: { status: 422, title: "The request is invalid", exposed: true },
  /** 422; 413 when the limit is the request body's (`limit: "request_body"`). */
  limit_exceeded: { status: 422, title: "A limit is exceeded", exposed: true },
  not_found: { status: 404, title: "Not found", exposed: true },
  version_conflict: { status: 409, title: "The task has changed", exposed: true },
  run_active: { status: 409, title: "The task has an active run", exposed: true },
  task_not_mutable: { status: 409, title: "The task cannot be changed now", exposed: true },
  illegal_transition: { status: 409, title: "Not allowed in this status", exposed: true },
  lease_lost: { status: 500, title: "Internal error", exposed: false },
  thread_busy: { status: 500, title: "Internal error", exposed: false },
  launch_failed: { status: 500, title: "Internal error", exposed: false },
  launch_indeterminate: { status: 500, title: "Internal error", exposed: false },
  target_unavailable: { status: 503, title: "The target could not be asked", exposed: true },
  calendar_in_use: { status: 409, title: "A task uses this calendar", exposed: true },
  key_taken: { status: 409, title: "Another task has this key", exposed: true },
  task_defective: { status: 409, title: "The task's stored fields do not parse", exposed: true },
  /** With `Retry-After`: the owner's rate quota has room again then. */
  quota_exceeded: { status: 429, title: "A quota is exceeded", exposed: true },
};

/** Problems only the HTTP adapter raises. */
export const HTTP_PROBLEMS = {
  malformed_request: { status: 400, title: "Malformed request", exposed: true },
  unauthorized: { status: 401, title: "Missing or invalid bearer token", exposed: true },
  forbidden: { status: 403, title: "This route needs an admin token", exposed: true },
  route_not_found: { status: 404, title: "No such route", exposed: true },
  method_not_allowed: { status: 405, title: "Method not allowed", exposed: true },
  idempotency_in_progress: {
    status: 409,
    title: "A request with this Idempotency-Key is in progress",
    exposed: true,
  },
  idempotency_key_reused: {
    status: 422,
    title: "This Idempotency-Key was used for a different request",
    exposed: true,
  },
  unsupported_media_type: { status: 415, title: "The body must be JSON", exposed: true },
  precondition_required: { status: 428, title: "If-Match is required", exposed: true },
  rate_limited: { status: 429, title: "Too many requests", exposed: true },
  internal_error: { status: 500, title: "Internal error", exposed: true },
  not_ready: { status: 503, title: "Not ready", exposed: true },
  /** With `Retry-After`: the database timed out or could not be reached (store-outage.ts). */
  database_unavailable: { status: 503, title: "The database is unavailable", exposed: true },
} as const satisfies Record<string, ProblemKind>;

export type HttpProblemCode = keyof typeof HTTP_PROBLEMS;
export type ProblemCode = ErrorCode | HttpProblemCode;

/** The problem kind of any code, domain or HTTP. */
export function problemKind(code: ProblemCode): ProblemKind {
  return code in HTTP_PROBLEMS
    ? HTTP_PROBLEMS[code as HttpProblemCode]
    : ERROR_PROBLEMS[code as ErrorCode];
}

/** Every problem `type` a client may receive, with its status (for docs and tests). */
export function exposedProblems(): { code: ProblemCode; type: string; status: number }[] {
  const all: [ProblemCode, ProblemKind][] = [
    ...(Object.entries(ERROR_PROBLEMS) as [ErrorCode, ProblemKind][]),
    ...(Object.entries(HTTP_PROBLEMS) as [HttpProblemCode, ProblemKind][]),
  ];
  return all
    .filter(([, kind]) => kind.exposed)
    .map(([code, kind]) => ({ code, type: `${PROBLEM_TYPE_BASE}${code}`, status: kind.status }));
}
