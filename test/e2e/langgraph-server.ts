/**
 * The open-source LangGraph JS server for end-to-end tests: started from the dev dependency
 * (`@langchain/langgraph-api`) as a child process on a free loopback port, with the deterministic graph
 * of test/e2e/langgraph/, tracing and analytics off; killed and started again on demand. A proxy in
 * front of it (`LangGraphProxy`) keeps one address across restarts and can hold create-run answers
 * back, so that a launch outlives its request timeout while the server creates the run.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createServer, request as httpRequest } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { waitFor } from "./process.js";

const SERVE = join(import.meta.dirname, "langgraph", "serve.mjs");
/** Nothing leaves the machine: no LangSmith tracing, no CLI analytics, no browser. */
const OFFLINE = {
  LANGSMITH_TRACING: "false",
  LANGSMITH_TRACING_V2: "false",
  LANGCHAIN_TRACING: "false",
  LANGCHAIN_TRACING_V2: "false",
  LANGGRAPH_CLI_NO_ANALYTICS: "1",
  BROWSER: "none",
};

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  return port;
}

export class LangGraphJsServer {
  #child: ChildProcess | null = null;
  #output = "";
  #port = 0;

  /** @param stateDir where the server keeps its threads and runs (its working directory) */
  constructor(readonly stateDir: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  output(): string {
    return this.#output;
  }

  /** Starts the server on a new free port and waits until it answers. */
  async start(): Promise<void> {
    this.#port = await freePort();
    const child = spawn(process.execPath, [SERVE, String(this.#port)], {
      cwd: this.stateDir,
      env: { ...process.env, ...OFFLINE },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => (this.#output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (this.#output += chunk.toString()));
    this.#child = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the server exited:\n${this.#output}`);
        const ok = await fetch(`${this.url}/ok`).then(
          (response) => response.ok,
          () => false,
        );
        return ok ? true : undefined;
      },
      {
        timeoutMs: 60_000,
        what: "the LangGraph JS server to answer",
        describe: () => this.#output,
      },
    );
  }

  /** Kills the server at once (SIGKILL: nothing is flushed) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) =>
      child.once("exit", () => {
        resolve();
      }),
    );
    child.kill("SIGKILL");
    await exited;
  }

  /** A JSON request straight to the server (not through the proxy). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the server's JSON, checked by the tests
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // plain-text errors stay text
    }
    return { status: response.status, body: parsed };
  }
}

/**
 * A forwarding proxy: every request goes to `target()`. While `holdCreatesMs` is set, the answer to a
 * create-run request (`POST /threads/{id}/runs`) is held back that long after the server gave it, so
 * the client gives up first although the run exists. A server that is down drops the connection.
 */
export class LangGraphProxy {
  holdCreatesMs = 0;
  readonly #server: Server;
  #port = 0;

  constructor(target: () => string) {
    this.#server = createServer((req, res) => {
      const upstream = new URL(req.url ?? "/", target());
      const forward = httpRequest(
        upstream,
        { method: req.method, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          const hold = isCreateRun(req.method, upstream.pathname) ? this.holdCreatesMs : 0;
          const chunks: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => chunks.push(chunk));
          answer.on("end", () => {
            const reply = (): void => {
              if (res.destroyed) return;
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(Buffer.concat(chunks));
            };
            if (hold > 0) setTimeout(reply, hold);
            else reply();
          });
        },
      );
      forward.on("error", () => res.socket?.destroy());
      req.pipe(forward);
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.#server.close(() => {
        resolve();
      }),
    );
  }
}

function isCreateRun(method: string | undefined, path: string): boolean {
  return method === "POST" && /^\/threads\/[^/]+\/runs$/.test(path);
}
