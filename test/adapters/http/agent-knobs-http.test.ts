/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API answers are untyped JSON, checked by the assertions */
/**
 * An agent target's `config` and `context` through the HTTP API (issue 17, item 3): accepted and shown
 * back as written, refused with 422 naming the field when the server's flavor would refuse or drop
 * them, before anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverConfig } from "../../helpers/agent-fixtures.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let owner: string;

beforeAll(async () => {
  t = await startTestServer({
    agentServers: [
      serverConfig("lab", "http://127.0.0.1:9", { webhooks: false }),
      serverConfig("deer", "http://127.0.0.1:9", { flavor: "deerflow" }),
    ],
  });
  owner = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

function create(target: Record<string, unknown>) {
  return call(t.url, "POST", "/v1/tasks", {
    token: owner,
    body: {
      title: "knobs",
      schedule: { type: "cron", cron: "0 9 * * *", timezone: "UTC" },
      target: { kind: "agent", assistant_id: "lead_agent", input: null, ...target },
    },
  });
}

describe("agent target config and context", () => {
  it("keeps a task's config and context as written", async () => {
    const config = { configurable: { model: "large" }, recursion_limit: 50, tags: ["daily"] };
    const created = await create({ server: "lab", config });
    expect(created.status).toBe(201);
    expect(created.body.task.target).toMatchObject({ config });
    const deer = await create({
      server: "deer",
      context: { model_name: "qwen", thinking_enabled: true },
    });
    expect(deer.status).toBe(201);
    expect(deer.body.task.target.context).toEqual({ model_name: "qwen", thinking_enabled: true });
  });

  it("refuses what the server's flavor would refuse or drop, naming the field", async () => {
    const deer = await create({ server: "deer", context: { colour: "red" } });
    expect(deer.status).toBe(422);
    expect(deer.body.errors).toEqual([expect.objectContaining({ field: "target.context.colour" })]);
    const lab = await create({
      server: "lab",
      config: { configurable: { a: 1 } },
      context: { b: 2 },
    });
    expect(lab.status).toBe(422);
    expect(lab.body.errors).toEqual([expect.objectContaining({ field: "target.context" })]);
    const unknown = await create({ server: "lab", config: { stream_mode: "values" } });
    expect(unknown.status).toBe(422);
    const listed = await call(t.url, "GET", "/v1/tasks", { token: owner });
    expect(listed.body.items).toHaveLength(1 + 1);
  });
});
