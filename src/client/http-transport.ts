/**
 * One HTTP call to the API: the URL under the base (its path kept, so a server behind a prefix works),
 * the bearer token, JSON in and out, `If-Match` and `Idempotency-Key`, and answers of 4xx/5xx turned
 * into `PunctualApiError`. Runs wherever `fetch` does: no Node built-ins.
 */
import { PunctualApiError, PunctualConnectionError } from "./client-errors.js";

/** How the client reaches the API. */
export interface ClientOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  readonly baseUrl: string | URL;
  /** The bearer token (`punctual token create`). Without one, only health and readiness answer. */
  readonly token?: string | undefined;
  /** The `fetch` to call, e.g. one with a proxy agent or test doubles. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Headers sent with every call (a tracing header, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts every call of this client, e.g. at shutdown. */
  readonly signal?: AbortSignal;
}

/** Per call. */
export interface CallOptions {
  /** Aborts this call; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
}

/** One query parameter; a list repeats it (`status=failed&status=timed_out`). */
export type QueryValue = string | number | boolean | readonly string[] | undefined;

export interface Call {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path segments under the base; each is URL-encoded. */
  readonly path: readonly string[];
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal | undefined;
}

export class HttpTransport {
  readonly #base: URL;
  readonly #label: string;
  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    const base = new URL(options.baseUrl);
    if (!base.pathname.endsWith("/")) base.pathname = `${base.pathname}/`;
    this.#base = base;
    this.#label = String(options.baseUrl);
    this.#options = options;
  }

  /**
   * Sends `call` and resolves with the parsed answer (`null` for an empty one).
   * @throws PunctualApiError for a 4xx or 5xx answer
   * @throws PunctualConnectionError when nothing answered
   */
  async send(call: Call): Promise<unknown> {
    const url = this.#url(call);
    const signal = combined(this.#options.signal, call.signal);
    let response: Response;
    try {
      response = await (this.#options.fetch ?? fetch)(url, {
        method: call.method,
        headers: this.#headers(call),
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new PunctualConnectionError(url.href, `cannot reach ${this.#label}: ${reason}`, {
        cause: error,
      });
    }
    const body = parsed(await response.text());
    if (response.status >= 400) throw new PunctualApiError(response.status, body, response.headers);
    return body;
  }

  /**
   * `send`, typed: the server answers with the shapes of `src/application/shapes/view-schemas.ts` (its tests
   * parse every answer with them), so the client trusts its server and does not check them again.
   */
  async json<T>(call: Call): Promise<T> {
    return (await this.send(call)) as T;
  }

  #url(call: Call): URL {
    const url = new URL(call.path.map(encodeURIComponent).join("/"), this.#base);
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (Array.isArray(value)) {
        for (const entry of value as readonly string[]) url.searchParams.append(key, entry);
      } else if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  #headers(call: Call): Record<string, string> {
    const headers: Record<string, string> = {
      accept: "application/json",
      ...this.#options.headers,
    };
    if (this.#options.token !== undefined)
      headers["authorization"] = `Bearer ${this.#options.token}`;
    if (call.body !== undefined) headers["content-type"] = "application/json";
    for (const [name, value] of Object.entries(call.headers ?? {})) {
      if (value !== undefined) headers[name] = value;
    }
    return headers;
  }
}

function combined(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return AbortSignal.any([a, b]);
}

/** JSON when it parses; otherwise the text itself (a proxy's error page). */
function parsed(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `"3"`: the ETag of a task's version, as `If-Match` names it; `*` for any version. */
export function ifMatch(version: number | undefined): string {
  return version === undefined ? "*" : `"${version}"`;
}
