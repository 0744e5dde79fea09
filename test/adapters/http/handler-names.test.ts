/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * An API-only process (docs/deploy.md#api-and-workers) accepts tasks naming the workers' handlers by
 * the names it is given, without their code, and still refuses a name nobody runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

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
