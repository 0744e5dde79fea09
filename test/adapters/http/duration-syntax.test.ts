/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * One duration syntax everywhere (docs/semantics.md#durations): the API takes the short form (`5m`,
 * `1h30m`) beside ISO-8601 and answers in ISO-8601 only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let server: TestServer;
let token = "";

beforeAll(async () => {
  server = await startTestServer();
  token = await server.token("ann");
});
afterAll(() => server.stop());

describe("durations over HTTP", () => {
  it("takes 1h30m and 90s and answers PT1H30M and PT1M30S", async () => {
    const created = await call(server.url, "POST", "/v1/tasks", {
      token,
      body: {
        title: "short durations",
        schedule: { type: "interval", every: "1h30m", jitter: "90s" },
        target: { kind: "handler", name: "log" },
        options: { run_timeout: "5m" },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.task.schedule).toMatchObject({ every: "PT1H30M", jitter: "PT1M30S" });
    expect(created.body.task.options.run_timeout).toBe("PT5M");
  });

  it("refuses a short form that is not whole seconds, naming the field", async () => {
    const refused = await call(server.url, "POST", "/v1/tasks", {
      token,
      body: {
        title: "sub-second",
        schedule: { type: "interval", every: "1500ms" },
        target: { kind: "handler", name: "log" },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      { field: "schedule.every", message: '"1500ms" is not a whole number of seconds' },
    ]);
  });
});
