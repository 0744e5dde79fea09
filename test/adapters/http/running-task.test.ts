/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * What needs a run actually running: deleting its task without `force` is refused (409
 * task_not_mutable), with `force` it is cancelled. Real time with the coordinator on; waits poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let token: string;
let release: () => void = () => undefined;
const blocked = new Promise<void>((resolve) => (release = resolve));
let releaseHeld: () => void = () => undefined;
const held = new Promise<void>((resolve) => (releaseHeld = resolve));

beforeAll(async () => {
  t = await startTestServer({
    runCoordinator: true,
    coordinator: { tickMs: 50 },
    handlers: {
      block: () => blocked.then(() => ({ done: true })),
      hold: () => held.then(() => ({ held: true })),
    },
  });
  token = await t.token("alice");
});
afterAll(async () => {
  release();
  releaseHeld();
  await t.stop();
});

async function waitUntil<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("a task with a running run", () => {
  it("refuses delete without force (409 task_not_mutable), then deletes with force", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", {
      token,
      body: {
        title: "blocks",
        schedule: { type: "cron", cron: "0 0 1 1 *" },
        target: { kind: "handler", name: "block" },
      },
    });
    const id = created.body.task.id as string;
    const run = (await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token })).body;
    await waitUntil(async () => {
      const current = await call(t.url, "GET", `/v1/runs/${run.id}`, { token });
      return current.body.status === "running" ? true : undefined;
    }, "the run to be running");
    const refused = await call(t.url, "DELETE", `/v1/tasks/${id}`, { token });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe("https://punctual.dev/problems/task_not_mutable");
    const forced = await call(t.url, "DELETE", `/v1/tasks/${id}?force=true`, { token });
    expect(forced.status).toBe(204);
    expect((await call(t.url, "GET", `/v1/tasks/${id}`, { token })).status).toBe(404);
  });

  it("deletes with after_run at once, lets the run finish, and records its verdict", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", {
      token,
      body: {
        title: "holds",
        schedule: { type: "cron", cron: "0 0 1 1 *" },
        target: { kind: "handler", name: "hold" },
      },
    });
    const id = created.body.task.id as string;
    const run = (await call(t.url, "POST", `/v1/tasks/${id}/trigger`, { token })).body;
    await waitUntil(async () => {
      const current = await call(t.url, "GET", `/v1/runs/${run.id}`, { token });
      return current.body.status === "running" ? true : undefined;
    }, "the run to be running");
    const deleted = await call(t.url, "DELETE", `/v1/tasks/${id}?after_run=true`, { token });
    expect(deleted.status).toBe(204);
    expect((await call(t.url, "GET", `/v1/tasks/${id}`, { token })).status).toBe(404);
    const during = await call(t.url, "GET", `/v1/runs/${run.id}`, { token });
    expect(during.body).toMatchObject({ status: "running", cancel_requested_at: null });
    releaseHeld();
    const ended = await waitUntil(async () => {
      const current = await call(t.url, "GET", `/v1/runs/${run.id}`, { token });
      const body = current.body as { status: string };
      return body.status === "running" ? undefined : body;
    }, "the run to end");
    expect(ended).toMatchObject({ status: "succeeded" });
  });
});
