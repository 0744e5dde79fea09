/**
 * The API token a request carries (docs/security.md#tokens-and-owners): `Authorization: Bearer`, or `x-api-key`
 * on the routes that take it.
 */
import type { FastifyRequest } from "fastify";
// The `apiKey` flag a route carries is declared with the registered routes.
import "./registered-routes.js";

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The token of a request: `Authorization: Bearer`, or `x-api-key` on the routes that take it. */
export function tokenOf(request: FastifyRequest): string | null {
  const bearer = bearerOf(request);
  if (bearer !== null || request.routeOptions.config.apiKey !== true) return bearer;
  const key = request.headers["x-api-key"];
  return typeof key === "string" && key.trim() !== "" ? key.trim() : null;
}
