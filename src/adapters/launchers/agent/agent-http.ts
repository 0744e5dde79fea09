/**
 * One request to an agent server: its configured headers, its request timeout, the caller's signal and a
 * capped reply, read as JSON when it is JSON (the JS server answers errors in plain text). A failure says
 * whether the request can have reached the server: that decides between "certainly failed" and
 * "uncertain" for a launch (docs/semantics.md#launch). Redirects are not followed.
 */
import type { AbortSignalLike } from "../../../domain/abort.js";
import type { AgentServerConfig } from "./agent-servers.js";
import { TransportError } from "../transport-error.js";
import { DEFAULT_LIMITS, jsonTextDepth } from "../../../application/policy/limits.js";

/** The subset of `fetch` the agent adapters use; injectable so tests can break the transport. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface AgentReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  readonly body: unknown;
}

export interface AgentExchange {
  readonly server: AgentServerConfig;
  readonly method: "GET" | "POST" | "DELETE";
  /** The path after the server's base URL, already encoded (see `agentPath`). */
  readonly path: string;
  /** A JSON body (POST). */
  readonly body?: unknown;
  readonly signal: AbortSignalLike;
  readonly fetch: FetchLike;
}

/**
 * A guard against a runaway reply, not a budget: a thread carries its whole state (`values`), and a page
 * of 100 runs carries each run's input (up to 256 KiB each).
 */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/**
 * Error codes of failures that happen before a request is written: name resolution, refused or
 * unreachable connections, TLS handshakes. Anything else may have reached the server.
 */
const NOTHING_SENT_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
]);

/** `segments` encoded and joined: `agentPath("threads", id, "runs")` is `/threads/<id>/runs`. */
export function agentPath(...segments: readonly string[]): string {
  return segments.map((segment) => `/${encodeURIComponent(segment)}`).join("");
}

/**
 * Sends one request and reads the whole reply.
 * @throws TransportError when no complete reply arrived (timeout, abort, transport failure)
 */
export async function agentExchange(exchange: AgentExchange): Promise<AgentReply> {
  const { server, signal } = exchange;
  if (signal.aborted) {
    throw new TransportError("the request was given up before it was sent", false, {
      cause: signal.reason,
    });
  }
  const controller = new AbortController();
  const onAbort = (): void => {
    controller.abort(signal.reason);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(
      new Error(
        `agent server "${server.name}" did not answer within ${server.requestTimeoutMs} ms`,
      ),
    );
  }, server.requestTimeoutMs);
  try {
    let response: Response;
    try {
      response = await exchange.fetch(`${server.url}${exchange.path}`, {
        method: exchange.method,
        headers: requestHeaders(exchange),
        redirect: "manual",
        signal: controller.signal,
        ...(exchange.body === undefined ? {} : { body: JSON.stringify(exchange.body) }),
      });
    } catch (error) {
      throw transportError(error, controller.signal, server);
    }
    const text = await readReply(response, controller.signal, server);
    return { status: response.status, headers: response.headers, text, body: parseJson(text) };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

function requestHeaders(exchange: AgentExchange): Record<string, string> {
  return {
    accept: "application/json",
    ...exchange.server.headers,
    ...(exchange.body === undefined ? {} : { "content-type": "application/json" }),
  };
}

async function readReply(
  response: Response,
  signal: AbortSignal,
  server: AgentServerConfig,
): Promise<string> {
  if (response.body === null) return "";
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_REPLY_BYTES) {
        await reader.cancel();
        throw new Error(`the reply exceeds ${MAX_REPLY_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    const reason: unknown = signal.aborted ? signal.reason : error;
    throw new TransportError(
      `the reply of agent server "${server.name}" broke off: ${messageOf(reason)}`,
      true,
      { cause: reason },
    );
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The reply as JSON; text that is not JSON, or nests deeper than the limit, is no body (unreadable). */
function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  // docs/security.md#bounded-input: a reply nested deeper than the limit is not parsed.
  if (jsonTextDepth(text) > DEFAULT_LIMITS.jsonDepth) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A failed `fetch` as a transport error that says whether the request may have been sent. */
function transportError(
  error: unknown,
  signal: AbortSignal,
  server: AgentServerConfig,
): TransportError {
  if (signal.aborted) {
    // Given up while waiting (timeout, caller's abort): the server may have the request by now.
    return new TransportError(messageOf(signal.reason), true, { cause: signal.reason });
  }
  const nothingSent = neverSent(error);
  const detail = messageOf(
    error instanceof Error && error.cause !== undefined ? error.cause : error,
  );
  return new TransportError(
    nothingSent
      ? `could not reach agent server "${server.name}" (${detail})`
      : `the exchange with agent server "${server.name}" broke (${detail})`,
    !nothingSent,
    { cause: error },
  );
}

/**
 * True when the failure happened before the request was written: a connection-stage error code, or a
 * TypeError without a cause (fetch refusing to build the request).
 */
function neverSent(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const cause = error.cause;
  if (cause === undefined) return error instanceof TypeError;
  if (cause instanceof AggregateError) {
    return (
      cause.errors.length > 0 &&
      cause.errors.every((inner) => NOTHING_SENT_CODES.has(codeOf(inner)))
    );
  }
  return NOTHING_SENT_CODES.has(codeOf(cause));
}

function codeOf(error: unknown): string {
  if (typeof error !== "object" || error === null) return "";
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : "";
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
