/**
 * One HTTP(S) exchange connected to an address already checked by the guard: the host name stays in the
 * URL (Host header, TLS server name) but the socket goes to `address`, never to a second resolution.
 * No agent (no pooled sockets), no redirects followed, a capped reply; aborted through `signal`.
 */
import type { IncomingHttpHeaders } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { ResolvedAddress } from "./address-guard.js";
import { TransportError } from "../transport-error.js";

export interface PinnedRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly address: ResolvedAddress;
  readonly signal: AbortSignal;
  /** Replies longer than this are cut off and reported as unreadable. */
  readonly maxReplyBytes: number;
}

export interface HttpReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Sends the request to the pinned address and reads the reply.
 * @throws TransportError that may have arrived once the socket had connected
 */
export function sendPinned(request: PinnedRequest): Promise<HttpReply> {
  const { url, address, signal } = request;
  const tls = url.protocol === "https:";
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ ...address }]);
    else callback(null, address.address, address.family);
  };
  return new Promise<HttpReply>((resolve, reject) => {
    let connected = false;
    const fail = (error: unknown, what: string): void => {
      const reason: unknown = signal.aborted ? signal.reason : error;
      const message = reason instanceof Error ? reason.message : String(reason);
      reject(new TransportError(`${what}: ${message}`, connected, { cause: reason }));
    };
    const client = (tls ? httpsRequest : httpRequest)(url, {
      method: request.method,
      headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
      lookup: pinned,
      agent: false,
      signal,
    });
    client.once("socket", (socket) => {
      socket.once(tls ? "secureConnect" : "connect", () => {
        connected = true;
      });
    });
    client.once("error", (error) => {
      fail(error, connected ? "the exchange broke" : "could not connect");
    });
    client.once("response", (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > request.maxReplyBytes) {
          response.destroy();
          fail(new Error(`the reply exceeds ${request.maxReplyBytes} bytes`), "unreadable reply");
          return;
        }
        chunks.push(chunk);
      });
      response.once("error", (error) => {
        fail(error, "the reply broke off");
      });
      response.once("end", () => {
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    client.end(request.body);
  });
}
