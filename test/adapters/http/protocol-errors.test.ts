/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * Requests wrong at the HTTP level (a path the router does not serve, a request Node's parser refuses)
 * answer problems like every other error (SPEC 7.2, docs/errors.md): the documented type and status,
 * `application/problem+json`, and an `Allow` that never lists the method just refused.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRON_TASK, call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let alice: string;

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

/** Sends `request` as written on a fresh connection and reads the answer until the server closes. */
async function rawRequest(
  request: string,
): Promise<{ status: number; head: string; body: string }> {
  const { port } = new URL(t.url);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      resolve(received);
    });
    socket.end(request);
  });
  const [head = "", ...rest] = text.split("\r\n\r\n");
  return {
    status: Number(head.split(" ")[1]),
    head: head.toLowerCase(),
    body: rest.join("\r\n\r\n"),
  };
}

describe("a path with a trailing slash", () => {
  it("is no route (404), never a 405 whose Allow names the method sent", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", { token: alice, body: CRON_TASK });
    const id = String(created.body.task.id);
    for (const [method, path] of [
      ["GET", `/v1/tasks/${id}/`],
      ["POST", "/v1/tasks/"],
      ["POST", `/v1/tasks/${id}/pause/`],
      ["GET", `/v1/tasks/${id}/runs/`],
      ["GET", "/healthz/"],
    ] as const) {
      const body = method === "POST" ? { body: {} } : {};
      const answer = await call(t.url, method, path, { token: alice, ...body });
      const allow = answer.headers.get("allow") ?? "";
      expect(allow.split(", "), `${method} ${path}`).not.toContain(method);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.type).toBe("https://punctual.dev/problems/route_not_found");
    }
  });
});

describe("a path parameter longer than any id", () => {
  const long = "a".repeat(1000);

  it("still needs a token (401), like every other path of the API", async () => {
    for (const path of [`/v1/tasks/${long}`, `/v1/runs/${long}`, `/v1/threads/${long}/tasks`]) {
      const answer = await call(t.url, "GET", path);
      expect(answer.status, path).toBe(401);
    }
  });

  it("reads as the route says: no such task or run, and a thread with no tasks", async () => {
    const task = await call(t.url, "GET", `/v1/tasks/${long}`, { token: alice });
    expect(task.status).toBe(404);
    expect(task.body.type).toBe("https://punctual.dev/problems/not_found");
    const run = await call(t.url, "GET", `/v1/runs/${long}`, { token: alice });
    expect(run.status).toBe(404);
    for (const path of [
      `/v1/tasks/by-key/${long}`,
      `/v1/calendars/${long}`,
      `/dashboard/${long}`,
    ]) {
      const answer = await call(t.url, "GET", path, { token: alice });
      expect(answer.status, path).toBe(404);
      expect(answer.body.detail.length, path).toBeLessThan(300);
    }
    const thread = await call(t.url, "GET", `/v1/threads/${long}/tasks`, { token: alice });
    expect(thread.status).toBe(200);
    expect(thread.body).toEqual({ items: [], next_cursor: null });
  });
});

describe("a request Node's HTTP parser refuses", () => {
  it("answers a problem document, not Fastify's own JSON", async () => {
    const auth = `Authorization: Bearer ${alice}\r\n`;
    for (const request of [
      `FOO /v1/tasks HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      `POST /v1/tasks HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`,
      `GET /v1/tasks HTTP/1.1\r\nHost: x\r\n${auth}X-Bad: a\u0001b\r\n\r\n`,
      "NOT HTTP AT ALL\r\n\r\n",
    ]) {
      const answer = await rawRequest(request);
      expect(answer.status, request).toBe(400);
      expect(answer.head).toContain("content-type: application/problem+json");
      expect(JSON.parse(answer.body)).toEqual({
        type: "https://punctual.dev/problems/malformed_request",
        title: "Malformed request",
        status: 400,
        detail: expect.any(String) as string,
      });
    }
  });

  it("keeps 431 for headers over Node's limit, in a problem document", async () => {
    const answer = await rawRequest(
      `GET /v1/tasks HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.head).toContain("content-type: application/problem+json");
    expect(JSON.parse(answer.body)).toMatchObject({
      type: "https://punctual.dev/problems/malformed_request",
      status: 431,
    });
  });
});
