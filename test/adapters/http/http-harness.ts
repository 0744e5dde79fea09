/* eslint-disable @typescript-eslint/no-explicit-any -- API answers are untyped JSON, checked by the assertions */
/**
 * A real server on port 0, built by the same `buildHttpApp()` that `serve` uses (through
 * `createServer`), on a memory store with the coordinator off unless asked; plus a small fetch helper.
 */
import { createServer } from "../../../src/composition-server.js";
import { memoryStore } from "../../../src/adapters/storage/memory/memory-store.js";
import type { PunctualServer, ServerOptions } from "../../../src/composition-server.js";
import type { Instant } from "../../../src/domain/time.js";

export interface TestServer {
  readonly server: PunctualServer;
  readonly url: string;
  /** Makes a token for `owner` and returns its secret. */
  token(owner: string, admin?: boolean): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const server = await createServer({
    store: memoryStore(),
    runCoordinator: false,
    rateLimit: false,
    host: "127.0.0.1",
    port: 0,
    ...options,
  });
  const url = await server.start();
  return {
    server,
    url,
    token: async (owner, admin = false) =>
      (await server.tokens.create({ owner, admin }, Date.now() as Instant)).secret,
    stop: () => server.stop(),
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    redirect: "manual",
    ...(options.raw !== undefined
      ? { body: options.raw }
      : options.body !== undefined
        ? { body: JSON.stringify(options.body) }
        : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON (docs page, metrics)
  }
  return { status: response.status, headers: response.headers, body };
}

export const CRON_TASK = {
  title: "every minute",
  schedule: { type: "cron", cron: "* * * * *" },
  target: { kind: "handler", name: "log" },
};
