/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * Requests wrong at the HTTP level answer problems like every other error (SPEC 7.2, docs/errors.md):
 * the documented type and status, and an `Allow` that never lists the method just refused.
 */
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
