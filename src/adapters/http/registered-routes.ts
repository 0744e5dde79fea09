/**
 * The routes the app registers (docs/api.md): the config flags a route carries for the request hooks,
 * the list of routes as Fastify registered them, and which methods they serve at a path, for a 405's
 * `Allow` header (RFC 9110 15.5.6).
 */

/** A route as Fastify registered it. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Every route registered (HEAD routes aside), as Fastify saw them. */
    readonly punctualRoutes: RegisteredRoute[];
  }
  interface FastifyContextConfig {
    auth?: boolean;
    callback?: boolean;
    /** The token may also come in `x-api-key` (what LangGraph's SDK sends). */
    apiKey?: boolean;
  }
}

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** Each route's path as a pattern, made once (a stream of wrong requests must not recompile them). */
const routePatterns = new WeakMap<RegisteredRoute, RegExp>();

function patternOf(route: RegisteredRoute): RegExp {
  let pattern = routePatterns.get(route);
  if (pattern === undefined) {
    const source = route.url
      .split("/")
      .map((segment) =>
        segment.startsWith(":")
          ? "[^/]+"
          : segment === "*"
            ? ".*"
            : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/");
    // No optional trailing slash: the router does not serve one, so it must not be offered in Allow.
    pattern = new RegExp(`^${source}$`);
    routePatterns.set(route, pattern);
  }
  return pattern;
}

/** The methods some registered route takes at `path` (HEAD with GET, as Fastify serves it). */
export function methodsServing(routes: readonly RegisteredRoute[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    if (patternOf(route).test(path)) {
      methods.add(route.method);
      if (route.method === "GET") methods.add("HEAD");
    }
  }
  return METHOD_ORDER.filter((method) => methods.has(method));
}
