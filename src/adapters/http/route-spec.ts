/**
 * A route declared once: its method and path, its zod schemas (params, query, body, responses), whether
 * it needs a bearer token, and its handler. The app registers it with Fastify and the OpenAPI document is
 * generated from the same declarations, so the document covers exactly the routes that exist.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Actor } from "../../application/access/actor.js";
import { parseWith } from "../../application/shapes/task-input.js";
import { ValidationError } from "../../domain/errors.js";

export interface ResponseSpec {
  readonly description: string;
  /** The body's shape; none for 204 and redirects. */
  readonly schema?: z.ZodType;
  /** @default "application/json" */
  readonly contentType?: string;
}

export interface HeaderSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
}

/** What a handler answers: a status, a JSON body (or text) and headers. */
export interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteContext<P, Q, B> {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** The caller; `null` only on routes without auth. */
  readonly actor: Actor | null;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
}

export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Fastify syntax: `/v1/tasks/:id`. */
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** Needs `Authorization: Bearer` (docs/security.md). */
  readonly auth: boolean;
  readonly params?: z.ZodType<P>;
  readonly query?: z.ZodType<Q>;
  readonly body?: z.ZodType<B>;
  /** Headers the route reads, for the document. */
  readonly headers?: readonly HeaderSpec[];
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Documented but not listed in the OpenAPI document (the docs page itself). */
  readonly hidden?: boolean;
  /** A larger body limit than the app's 1 MiB (an agent server's run webhook carries thread state). */
  readonly bodyLimit?: number;
  /** Renames the body's field paths in a 422 (the batch route names items `tasks[17].title`). */
  readonly bodyField?: (field: string) => string;
  /** Also parses `text/plain` bodies as JSON (the JS agent server posts its webhooks so). */
  readonly acceptsTextJson?: boolean;
  /**
   * A callback route (docs/security.md#callback-routes): authenticated by a per-run secret in its URL,
   * rate limited per client address, and its failed attempts throttled per address.
   */
  readonly callback?: boolean;
  /**
   * Runs before any of the body is read (Fastify's `preParsing`): a route authenticated by its URL refuses
   * a stranger here, having read no more of the body than the connection had already delivered.
   */
  readonly beforeBody?: (request: FastifyRequest) => Promise<void>;
  handler(ctx: RouteContext<P, Q, B>): Promise<Answer>;
}

/** Declares a route; the type parameters are inferred from the schemas. */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec;
}

/** Parses the request's params, query and body with the route's schemas (422 naming each field). */
export function parseRequest(
  spec: RouteSpec,
  request: FastifyRequest,
): { params: unknown; query: unknown; body: unknown } {
  return {
    params: spec.params === undefined ? {} : parseWith(spec.params, request.params, "", "path"),
    query: spec.query === undefined ? {} : parseWith(spec.query, request.query, "", "query"),
    body:
      spec.body === undefined ? undefined : parseBody({ ...spec, body: spec.body }, request.body),
  };
}

function parseBody(spec: RouteSpec & { body: z.ZodType }, body: unknown): unknown {
  const rename = spec.bodyField;
  if (rename === undefined) return parseWith(spec.body, body);
  try {
    return parseWith(spec.body, body);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(
      error.errors.map((e) => ({ field: rename(e.field), message: e.message })),
      { cause: error },
    );
  }
}

/** `/v1/tasks/:id` as OpenAPI writes it: `/v1/tasks/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, "{$1}");
}
