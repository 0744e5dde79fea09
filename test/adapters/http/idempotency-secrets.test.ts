/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * A stored `Idempotency-Key` answer holds no signing secret (docs/security.md#secrets-at-rest): the record
 * keeps `webhook_secret: null`, and a replay reads the task's current secret instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OwnerId } from "../../../src/domain/ids.js";
import type { Instant } from "../../../src/domain/time.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let owner: string;

beforeAll(async () => {
  t = await startTestServer();
  owner = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
});

const webhookTask = (title: string) => ({
  title,
  schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
  target: { kind: "webhook", url: "https://hooks.example.com/run" },
});

async function storedAnswer(route: string, key: string): Promise<string> {
  const records = t.server.runtime.store.idempotency;
  const scope = { owner: "alice" as OwnerId, route, key };
  const record = await records?.reserve(scope, "probe", Date.now() as Instant);
  return JSON.stringify(record?.response);
}

describe("Idempotency-Key answers", () => {
  it("store a create without its secret and replay it with the task's secret", async () => {
    const headers = { "idempotency-key": "create-1" };
    const first = await call(t.url, "POST", "/v1/tasks", {
      token: owner,
      headers,
      body: webhookTask("signed"),
    });
    expect(first.status).toBe(201);
    const secret: string = first.body.task.webhook_secret;
    expect(secret.length).toBeGreaterThan(10);

    const stored = await storedAnswer("POST /v1/tasks", "create-1");
    expect(stored).toContain(first.body.task.id);
    expect(stored).not.toContain(secret);
    expect(stored).toContain('"webhook_secret":null');

    const again = await call(t.url, "POST", "/v1/tasks", {
      token: owner,
      headers,
      body: webhookTask("signed"),
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.task).toEqual(first.body.task);
  });

  it("store a batch without its secrets", async () => {
    const headers = { "idempotency-key": "batch-1" };
    const body = { tasks: [webhookTask("one"), webhookTask("two")] };
    const first = await call(t.url, "POST", "/v1/tasks/batch", { token: owner, headers, body });
    expect(first.status).toBe(201);
    const secrets = (first.body.tasks as { task: { webhook_secret: string } }[]).map(
      (item) => item.task.webhook_secret,
    );
    const stored = await storedAnswer("POST /v1/tasks/batch", "batch-1");
    for (const secret of secrets) expect(stored).not.toContain(secret);
    const again = await call(t.url, "POST", "/v1/tasks/batch", { token: owner, headers, body });
    expect(again.body).toEqual(first.body);
  });
});
