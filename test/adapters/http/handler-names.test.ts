/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * An API-only process (docs/deploy.md#api-and-workers) accepts tasks naming the workers' handlers by
 * the names it is given or the names live workers registered in the database
 * (docs/deploy.md#handler-names), without their code, and still refuses a name nobody runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";
import type { Instant } from "../../../src/domain/time.js";

let server: TestServer;
let token = "";

beforeAll(async () => {
  server = await startTestServer({ runCoordinator: false, handlerNames: ["work"] });
  token = await server.token("ann");
});
afterAll(() => server.stop());

const task = (name: string) => ({
  title: `runs ${name}`,
  schedule: { type: "interval", every: "5m" },
  target: { kind: "handler", name },
});

describe("handler names given to an API-only process", () => {
  it("accepts a task naming a worker's handler it has no code for", async () => {
    const created = await call(server.url, "POST", "/v1/tasks", { token, body: task("work") });
    expect(created.status).toBe(201);
    expect(created.body.task.target).toMatchObject({ kind: "handler", name: "work" });
  });

  it("refuses a name no process runs, saying how to name the workers' handlers", async () => {
    const refused = await call(server.url, "POST", "/v1/tasks", { token, body: task("wrok") });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({
      field: "target.name",
      message: expect.stringMatching(/--handler-names or PUNCTUAL_HANDLER_NAMES/) as unknown,
    });
  });
});

describe("handler names the workers registered in the database", () => {
  /** An API-only server on a fresh store where worker `id` beat `agoMs` ago with `names`. */
  async function apiAfterBeat(agoMs: number, names: readonly string[]) {
    const api = await startTestServer({ runCoordinator: false });
    const beatAt = (Date.now() - agoMs) as Instant;
    await api.server.runtime.store.replicas.heartbeat("worker-1", beatAt, names);
    return { api, owner: await api.token("ann") };
  }

  it("accepts a handler a live worker registered, without being given its name", async () => {
    const { api, owner } = await apiAfterBeat(0, ["build", "send"]);
    try {
      const created = await call(api.url, "POST", "/v1/tasks", {
        token: owner,
        body: task("send"),
      });
      expect(created.status).toBe(201);
    } finally {
      await api.stop();
    }
  });

  it("refuses a handler only a silent worker registered", async () => {
    const { api, owner } = await apiAfterBeat(60_000, ["archive"]);
    try {
      const refused = await call(api.url, "POST", "/v1/tasks", {
        token: owner,
        body: task("archive"),
      });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0].message).toMatch(/no live\s+worker registered it/);
    } finally {
      await api.stop();
    }
  });
});
