/**
 * A real webhook receiver for tests: an HTTP server on 127.0.0.1, port 0, answering each path with a
 * scripted behaviour and recording every request it reads. Also verifies `Punctual-Signature` the way a
 * user's receiver would (docs/targets.md), independently of the launcher's code.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Answers one request; may leave `res` open (a hang) or destroy the socket (a dropped connection). */
export type Behaviour = (request: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  readonly port: number;
  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** Every request read, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Requests to one path. */
  requestsTo(path: string): ReceivedRequest[];
  /** Connections closed by the client while the receiver still held the request open. */
  readonly abandoned: string[];
  close(): Promise<void>;
}

export const json =
  (status: number, body?: unknown, headers: Record<string, string> = {}): Behaviour =>
  (_request, res) => {
    res.writeHead(status, {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };

/** Never answers (until the client gives up or the receiver closes). */
export const hang: Behaviour = () => undefined;

/** Reads the request, then drops the connection without answering. */
export const drop: Behaviour = (_request, res) => {
  res.socket?.destroy();
};

export async function startReceiver(
  routes: Readonly<Record<string, Behaviour>>,
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const abandoned: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(request);
      res.on("close", () => {
        if (!res.writableEnded) abandoned.push(path);
      });
      (routes[path] ?? json(404, { error: "no such path" }))(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    requestsTo: (path) => requests.filter((request) => request.path === path),
    abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** A port nothing listens on (a server opened and closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  return port;
}

/**
 * Verifies `Punctual-Signature: t=<unix s>,v1=<hex>` over `<t>.<body>` with `secret`, rejecting
 * timestamps further than `toleranceSeconds` from `nowMs`.
 */
export function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  nowMs = Date.now(),
  toleranceSeconds = 300,
): boolean {
  const parts = new Map(
    (header ?? "").split(",").map((part) => {
      const at = part.indexOf("=");
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get("t"));
  const v1 = parts.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
