/**
 * Requests Node's HTTP parser refuses before Fastify sees them (an unknown method, a bad header or
 * Content-Length): answered as problems like every other error (SPEC 7.2), then the connection closes.
 */
import type { Socket } from "node:net";
import { problemOf, PROBLEM_CONTENT_TYPE } from "./problem.js";
import type { Problem } from "./problem.js";

function problemFor(code: unknown): Problem {
  if (code === "HPE_HEADER_OVERFLOW") {
    return problemOf("malformed_request", "the request headers exceed the server's limit", {
      status: 431,
    });
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return problemOf("malformed_request", "the request was not received in time", { status: 408 });
  }
  return problemOf("malformed_request", "the request is not valid HTTP/1.1");
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

/** Fastify's `clientErrorHandler`: Node's behaviour (write if possible, then destroy), in our shape. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) {
    const problem = problemFor(error.code);
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${String(problem.status)} ${REASONS[problem.status] ?? "Bad Request"}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `Content-Length: ${String(Buffer.byteLength(body))}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  }
  socket.destroy(error);
}
