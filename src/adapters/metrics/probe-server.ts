/**
 * `punctual worker --metrics-port` (docs/operations.md#metrics-and-probes): a small listener on node:http (the worker
 * loads no HTTP framework) that answers `/metrics` (Prometheus text), `/healthz` (the process answers) and
 * `/readyz` (started, not shutting down, database reachable, migrations current), as `punctual serve`
 * does on its own port. Every other path is a 404; every other method a 405.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { SchedulerMetrics } from "./scheduler-metrics.js";

export interface ProbeServerDeps {
  readonly metrics: SchedulerMetrics;
  /** Why the replica is not ready (null: ready): starting, shutting down, the database, migrations. */
  readonly notReady: () => Promise<string | null>;
}

export interface ProbeServer {
  /** Listens on `host:port` (port 0: any free port); resolves with the base URL. */
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

export function createProbeServer(deps: ProbeServerDeps): ProbeServer {
  const server: Server = createServer((request, response) => {
    answer(deps, request, response).catch((error: unknown) => {
      send(
        response,
        500,
        "application/json",
        problem("internal", `the probe failed: ${messageOf(error)}`),
      );
    });
  });
  // A probe that hangs must not keep the process alive at shutdown.
  server.keepAliveTimeout = 1000;
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          const address = server.address() as AddressInfo;
          const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
          resolve(`http://${shown}:${address.port}`);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

async function answer(
  deps: ProbeServerDeps,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? "/").split("?")[0];
  if (path !== "/metrics" && path !== "/healthz" && path !== "/readyz") {
    send(
      response,
      404,
      "application/json",
      problem("not_found", `no route ${path ?? ""}: try /metrics, /healthz or /readyz`),
    );
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("allow", "GET, HEAD");
    send(
      response,
      405,
      "application/json",
      problem("method_not_allowed", `${request.method ?? ""} is not allowed`),
    );
    return;
  }
  if (path === "/healthz") {
    send(response, 200, "application/json", JSON.stringify({ status: "ok" }));
    return;
  }
  if (path === "/readyz") {
    const reason = await deps.notReady();
    if (reason === null)
      send(response, 200, "application/json", JSON.stringify({ status: "ready" }));
    else send(response, 503, "application/json", problem("not_ready", reason));
    return;
  }
  const scraped = await deps.metrics.scrape();
  send(response, 200, scraped.contentType, scraped.body);
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  response.end(response.req.method === "HEAD" ? undefined : body);
}

/** A refusal's body: a code and a sentence. */
function problem(code: string, detail: string): string {
  return JSON.stringify({ status: code, detail });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
