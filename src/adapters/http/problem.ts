/**
 * RFC 9457 problem documents: the one shape of every error the API answers, built from the error map.
 */
import { isPunctualError, NotFoundError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import { HTTP_PROBLEMS, PROBLEM_TYPE_BASE, problemKind } from "./error-map.js";
import type { HttpProblemCode, ProblemCode } from "./error-map.js";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly instance?: string;
  /** Validation problems: one entry per bad field. */
  readonly errors?: readonly FieldError[];
  /** Limit problems: the limit's name and value. */
  readonly limit?: string;
  readonly max?: number;
  /** `calendar_in_use`: a task whose schedule names the calendar. */
  readonly task_id?: string;
}

/** An HTTP-only problem, thrown inside the adapter and answered by the error handler. */
export class HttpProblem extends Error {
  override readonly name = "HttpProblem";

  constructor(
    readonly code: HttpProblemCode,
    message: string,
    readonly extra: { readonly headers?: Readonly<Record<string, string>> } & Partial<
      Pick<Problem, "limit" | "max" | "errors">
    > = {},
  ) {
    super(message);
  }
}

export function problemOf(
  code: ProblemCode,
  detail: string,
  extra: Partial<Problem> = {},
): Problem {
  const kind = problemKind(code);
  return {
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title: kind.title,
    status: kind.status,
    detail,
    ...extra,
  };
}

/** The problem for any thrown value; `null` means an unexpected error (answer a generic 500, log it). */
export function problemFromError(error: unknown): Problem | null {
  if (error instanceof HttpProblem) {
    const extra: Partial<Problem> = {
      ...(error.extra.errors === undefined ? {} : { errors: error.extra.errors }),
      ...(error.extra.limit === undefined ? {} : { limit: error.extra.limit }),
      ...(error.extra.max === undefined ? {} : { max: error.extra.max }),
    };
    return problemOf(error.code, error.message, extra);
  }
  if (isPunctualError(error)) {
    const kind = problemKind(error.code);
    if (!kind.exposed) return null;
    switch (error.code) {
      case "validation_failed":
        return problemOf(error.code, error.message, {
          errors: "errors" in error ? (error.errors as FieldError[]) : [],
        });
      case "limit_exceeded": {
        const limit = "limit" in error ? String(error.limit) : "unknown";
        const max = "max" in error ? Number(error.max) : 0;
        return problemOf(error.code, error.message, {
          limit,
          max,
          ...(limit === "request_body" ? { status: 413 } : {}),
        });
      }
      case "quota_exceeded": {
        const limit = "limit" in error ? String(error.limit) : "unknown";
        const max = "max" in error ? Number(error.max) : 0;
        return problemOf(error.code, error.message, { limit, max });
      }
      case "not_found":
        return problemOf(error.code, notFoundDetail(error));
      case "calendar_in_use":
        return problemOf(error.code, error.message, {
          ...("taskId" in error ? { task_id: String(error.taskId) } : {}),
        });
      default:
        return problemOf(error.code, error.message);
    }
  }
  return fastifyProblem(error);
}

/** The longest id a not-found detail repeats: a path may carry 16 KiB, the answer need not. */
const DETAIL_ID_MAX = 200;

function notFoundDetail(error: Error): string {
  if (!(error instanceof NotFoundError) || error.id.length <= DETAIL_ID_MAX) return error.message;
  return `${error.resource} ${error.id.slice(0, DETAIL_ID_MAX)}... not found`;
}

/** Fastify's own client errors (bad JSON, media type, body size...) are the caller's fault: 4xx. */
function fastifyProblem(error: unknown): Problem | null {
  if (typeof error !== "object" || error === null) return null;
  const { code, statusCode, message } = error as {
    code?: unknown;
    statusCode?: unknown;
    message?: unknown;
  };
  const text = typeof message === "string" ? message : "malformed request";
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return bodyTooLarge();
  }
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    if (statusCode === 413) return bodyTooLarge();
    return problemOf("malformed_request", text);
  }
  return null;
}

/** docs/security.md: request bodies are at most 1 MiB. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

function bodyTooLarge(): Problem {
  return problemOf("limit_exceeded", "the request body exceeds the limit of 1 MiB", {
    status: 413,
    limit: "request_body",
    max: BODY_LIMIT_BYTES,
  });
}

export function isHttpProblemCode(code: string): code is HttpProblemCode {
  return code in HTTP_PROBLEMS;
}
