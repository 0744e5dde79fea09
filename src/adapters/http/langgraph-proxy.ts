/**
 * `serve --langgraph-api SERVER --langgraph-proxy` (docs/targets.md#one-client-for-everything,
 * docs/security.md#langgraph-proxy): every other path under `/langgraph/SERVER` passes through to the
 * agent server with the server's configured credentials, streams included (`@fastify/reply-from`), so one
 * SDK client serves threads, runs, streams and crons. The caller is authenticated like every route, and
 * an owner reaches only what `proxyDecision` allows: the server's health and assistants (read), its own
 * threads (tagged `metadata.punctual_owner` when created through the proxy, as punctual tags its runs) and
 * what runs on them, and stateless runs. An admin token reaches everything.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Actor } from "../../application/access/actor.js";
import { agentExchange, agentPath } from "../launchers/agent/agent-http.js";
import { PUNCTUAL_METADATA } from "../launchers/agent/agent-run-request.js";
import type { AgentServerConfig } from "../launchers/agent/agent-servers.js";
import { langGraphPrefix } from "./langgraph-crons-routes.js";
import { problemFromError } from "./problem.js";

export interface LangGraphProxyDeps {
  readonly server: AgentServerConfig;
  readonly actorOf: (request: FastifyRequest) => Actor | null;
}

/** The metadata key naming a thread's punctual owner (as on the runs punctual launches). */
const OWNER_KEY = PUNCTUAL_METADATA.owner;
const NEVER_ABORTED = new AbortController().signal;
/** Request headers that carry the caller's own credentials: never passed on to the agent server. */
const CALLER_CREDENTIALS = ["authorization", "x-api-key", "cookie", "host"];

/** What the proxy does with a request: pass it (maybe with a new body), or answer it itself. */
export type ProxyDecision =
  | { readonly kind: "pass"; readonly body?: unknown }
  | { readonly kind: "refuse"; readonly status: number; readonly detail: string }
  | { readonly kind: "thread"; readonly threadId: string };

type JsonObject = Record<string, unknown>;

function objectOf(value: unknown): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : {};
}

/** `body` with `metadata.punctual_owner` set to the owner (whatever the caller put there). */
function tagged(body: unknown, owner: string): JsonObject {
  const object = objectOf(body);
  return { ...object, metadata: { ...objectOf(object["metadata"]), [OWNER_KEY]: owner } };
}

/**
 * Who may reach what through the proxy (docs/security.md#langgraph-proxy): the decision for one request
 * of a non-admin owner. A path on one thread is decided once the thread's owner is known (`thread`).
 */
export function proxyDecision(
  method: string,
  path: string,
  owner: string,
  body: unknown,
): ProxyDecision {
  const segments = path.split("/").filter((s) => s !== "");
  const [first, second] = segments;
  const read = method === "GET" || method === "HEAD";
  if (segments.length === 1 && (first === "ok" || first === "info") && read) {
    return { kind: "pass" };
  }
  if (first === "assistants") {
    const search = method === "POST" && (second === "search" || second === "count");
    if (read || (segments.length === 2 && search)) return { kind: "pass" };
    return refuse(
      403,
      "assistants are read-only through punctual's proxy (an admin token may change them)",
    );
  }
  if (first === "threads") {
    if (segments.length === 1 && method === "POST") {
      const threadId = objectOf(body)["thread_id"];
      // Naming an existing thread (if_exists) must not hand another owner's thread over.
      if (typeof threadId === "string") return { kind: "thread", threadId };
      return { kind: "pass", body: tagged(body, owner) };
    }
    if (segments.length === 2 && method === "POST" && (second === "search" || second === "count")) {
      return { kind: "pass", body: tagged(body, owner) };
    }
    if (second !== undefined && second !== "search" && second !== "count") {
      return { kind: "thread", threadId: decodeURIComponent(second) };
    }
  }
  if (first === "runs" && method === "POST") {
    const stateless =
      segments.length === 1 || (segments.length === 2 && ["stream", "wait"].includes(second ?? ""));
    if (stateless) return { kind: "pass", body: tagged(body, owner) };
  }
  return refuse(403, `${method} /${segments.join("/")} is not reachable through punctual's proxy`);
}

/** The decision on a thread once its owner is known (`null`: no such thread). */
export function onThread(
  own: string | null,
  threadId: string,
  request: { readonly owner: string; readonly creating: boolean; readonly body: unknown },
): Exclude<ProxyDecision, { kind: "thread" }> {
  const { owner, creating, body } = request;
  if (own === owner)
    return creating ? { kind: "pass", body: tagged(body, owner) } : { kind: "pass" };
  if (creating && own === null) return { kind: "pass", body: tagged(body, owner) };
  return creating
    ? { kind: "refuse", status: 409, detail: `Thread ${threadId} already exists` }
    : { kind: "refuse", status: 404, detail: `Thread ${threadId} not found` };
}

function refuse(status: number, detail: string): ProxyDecision {
  return { kind: "refuse", status, detail };
}

/** Mounts the pass-through under the server's prefix (beside the crons routes, which it never shadows). */
export async function registerLangGraphProxy(
  app: FastifyInstance,
  deps: LangGraphProxyDeps,
): Promise<void> {
  const { server } = deps;
  const upstream = new URL(server.url);
  const basePath = upstream.pathname.replace(/\/$/, "");
  const prefix = langGraphPrefix(server.name);
  // Loaded only with --langgraph-proxy: the proxy's HTTP client (undici) is the largest module a
  // server would otherwise parse at its start (docs/benchmarks.md#start-cost).
  const { default: replyFrom } = await import("@fastify/reply-from");
  await app.register(
    async (api) => {
      await api.register(replyFrom, {
        base: upstream.origin,
        retryMethods: [],
        maxRetriesOn503: 0,
        disableRequestLogging: true,
      });
      api.setErrorHandler((error: unknown, request, reply) => {
        // The token check (401, 429) answers as the crons routes do; anything else is the upstream's.
        const problem = problemFromError(error);
        if (problem !== null) {
          const detail = problem.status === 401 ? "Authentication required" : problem.detail;
          return reply.code(problem.status).send({ detail });
        }
        request.log.error({ err: error }, "the LangGraph proxy failed");
        return reply.code(502).send({ detail: "the agent server could not be reached" });
      });
      api.route({
        method: ["GET", "POST", "PUT", "PATCH", "DELETE"],
        url: "/*",
        config: { auth: true, apiKey: true },
        handler: async (request, reply) => {
          const actor = deps.actorOf(request);
          if (actor === null) return reply.code(401).send({ detail: "Authentication required" });
          const rest = request.url.slice(prefix.length);
          const path = rest.split("?")[0] ?? "";
          const first: ProxyDecision = actor.admin
            ? { kind: "pass" }
            : proxyDecision(request.method, path, actor.owner, request.body);
          const decision =
            first.kind === "thread"
              ? onThread(await threadOwner(server, first.threadId), first.threadId, {
                  owner: actor.owner,
                  creating: path.replace(/\/$/, "") === "/threads",
                  body: request.body,
                })
              : first;
          if (decision.kind === "refuse") {
            return reply.code(decision.status).send({ detail: decision.detail });
          }
          return pass(reply, `${basePath}${rest}`, server, decision.body);
        },
      });
    },
    { prefix },
  );
}

function pass(reply: FastifyReply, source: string, server: AgentServerConfig, body: unknown) {
  return reply.from(source, {
    ...(body === undefined ? {} : { body }),
    rewriteRequestHeaders: (_request, headers) => {
      const forwarded = Object.fromEntries(
        Object.entries(headers).filter(
          ([name]) =>
            !CALLER_CREDENTIALS.includes(name) &&
            !name.startsWith("x-forwarded-") &&
            !name.startsWith("x-punctual-") &&
            (body === undefined || name !== "content-length"),
        ),
      );
      return { ...forwarded, ...lowerCased(server.headers) };
    },
  });
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The owner a thread is tagged with on the server: its `metadata.punctual_owner`, `""` for a thread
 * with none (made outside punctual: reachable by admins only), null when there is no such thread.
 */
async function threadOwner(server: AgentServerConfig, threadId: string): Promise<string | null> {
  const reply = await agentExchange({
    server,
    method: "GET",
    path: agentPath("threads", threadId),
    signal: NEVER_ABORTED,
    fetch: (url, init) => globalThis.fetch(url, init),
  });
  if ([400, 404, 422].includes(reply.status)) return null;
  if (reply.status < 200 || reply.status >= 300) {
    throw new Error(`the agent server answered ${reply.status} for a thread`);
  }
  const owner = objectOf(objectOf(reply.body)["metadata"])[OWNER_KEY];
  return typeof owner === "string" ? owner : "";
}
