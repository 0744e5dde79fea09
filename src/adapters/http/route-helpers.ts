/**
 * Small pieces the route plugins share: the caller, ids, ETags and `If-Match`, page sizes. The limits
 * are the application's (application/policy/limits.ts), the same for the library.
 */
import type { Actor } from "../../application/access/actor.js";
import { NotFoundError } from "../../domain/errors.js";
import { HttpProblem } from "./problem.js";
import type { RouteContext } from "./route-spec.js";

/** The authenticated caller (routes with `auth: true` always have one). */
export function actorOf(ctx: RouteContext<unknown, unknown, unknown>): Actor {
  if (ctx.actor === null) throw new HttpProblem("unauthorized", "a bearer token is required");
  return ctx.actor;
}

const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** A path id: anything that cannot be an id cannot be found (404, never 500). */
export function checkId(resource: "task" | "run" | "thread", id: string): string {
  if (!ID_PATTERN.test(id)) throw new NotFoundError(resource, id.slice(0, 128));
  return id;
}

export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * An entity tag (RFC 9110 section 8.8.3): a quoted string of visible characters other than `"`, weak
 * (`W/`) or strong. Ours are the task's version in decimal.
 */
const ENTITY_TAG = /^(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** What `If-Match` names when its tag is well formed but not one this server issues: matches nothing. */
const NO_VERSION = 0;

/**
 * The version an `If-Match` names: a number, `null` for `*` (any version), `undefined` when absent.
 * A well-formed entity tag this server never issued (`"abc"`, a number past any version) names no
 * version at all, so the write is refused as stale (409), as RFC 9110 has it for a tag that does not
 * match; a bare number (`3`) is accepted as the tag `"3"`.
 * @throws malformed_request when it is not an entity tag
 */
export function ifMatchVersion(header: unknown): number | null | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string") throw new HttpProblem("malformed_request", "bad If-Match");
  const value = header.trim();
  if (value === "*") return null;
  const opaque = /^\d+$/.test(value) ? value : ENTITY_TAG.exec(value)?.[1];
  if (opaque === undefined) {
    throw new HttpProblem("malformed_request", 'If-Match must be an ETag such as "3", or *');
  }
  // Versions start at 1: "0" is NO_VERSION itself; past 15 digits no version can reach.
  return /^\d{1,15}$/.test(opaque) ? Number(opaque) : NO_VERSION;
}

/** How many fires a preview lists when `?count=` is absent. */
const PREVIEW_COUNT_DEFAULT = 10;

/** `?count=` of a preview (checked as digits by `previewQuery`; its range by the service). */
export function previewCountOf(count: string | undefined): number {
  return count === undefined ? PREVIEW_COUNT_DEFAULT : Number(count);
}

/** `?limit=` as a number (checked as digits by the query schema; its range by application/policy/limits.ts). */
export function pageSizeOf(limit: string | undefined): number | undefined {
  return limit === undefined ? undefined : Number(limit);
}
