/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * `POST /v1/tasks/{id}/rotate-secret` (docs/security.md#rotating-a-tasks-signing-secret): the new secret
 * is answered once; during the grace both secrets sign every request (each verifies it on its own), and
 * a callback token made under the old secret still opens its run; with no grace only the new one signs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../../src/adapters/launchers/webhook/verify-webhook.js";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { ReceivedRequest, Receiver } from "../../helpers/webhook-receiver.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let t: TestServer;
let receiver: Receiver;
let owner: string;

beforeAll(async () => {
  receiver = await startReceiver({ "/job": json(202, { accepted: true }) });
  t = await startTestServer({ runCoordinator: true, webhookAllow: ["127.0.0.1"] });
  owner = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
  await receiver.close();
});

async function webhookTask(signature: "punctual" | "standard_webhooks") {
  const created = await call(t.url, "POST", "/v1/tasks", {
    token: owner,
    body: {
      title: `rotating ${signature}`,
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "webhook", url: receiver.url("/job"), signature },
    },
  });
  expect(created.status).toBe(201);
  return { id: created.body.task.id as string, secret: created.body.task.webhook_secret as string };
}

async function fire(taskId: string): Promise<{ request: ReceivedRequest; completionUrl: string }> {
  const run = await call(t.url, "POST", `/v1/tasks/${taskId}/trigger`, { token: owner });
  expect(run.status).toBe(202);
  const runId: string = run.body.id;
  const request = await waitFor(
    () =>
      receiver
        .requestsTo("/job")
        .find((r) => (JSON.parse(r.body) as { run: { id: string } }).run.id === runId),
    { timeoutMs: 10_000, what: "the webhook request" },
  );
  return {
    request,
    completionUrl: (JSON.parse(request.body) as { completion_url: string }).completion_url,
  };
}

function verifiesWith(request: ReceivedRequest, secret: string): boolean {
  try {
    verifyWebhook({ headers: request.headers, body: request.body }, secret);
    return true;
  } catch {
    return false;
  }
}

describe("POST /v1/tasks/{id}/rotate-secret", () => {
  for (const format of ["punctual", "standard_webhooks"] as const) {
    it(`signs with both secrets during the grace (${format})`, async () => {
      const { id, secret: before } = await webhookTask(format);
      const rotated = await call(t.url, "POST", `/v1/tasks/${id}/rotate-secret`, {
        token: owner,
        body: { grace: "PT1H" },
      });
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get("cache-control")).toBe("no-store");
      const after: string = rotated.body.webhook_secret;
      expect(after).not.toBe(before);
      expect(rotated.body.task.webhook_secret).toBe(after);
      const until = Date.parse(rotated.body.previous_valid_until as string);
      expect(until - Date.now()).toBeGreaterThan(59 * 60_000);

      const { request } = await fire(id);
      expect(verifiesWith(request, after)).toBe(true);
      expect(verifiesWith(request, before)).toBe(true);
      const header =
        format === "punctual"
          ? (request.headers["punctual-signature"] as string)
          : (request.headers["webhook-signature"] as string);
      expect(header.match(/v1[=,]/g)).toHaveLength(2);
    });
  }

  it("keeps a run launched before the rotation completable with its token", async () => {
    const { id } = await webhookTask("punctual");
    const { completionUrl, request } = await fire(id);
    const runId = (JSON.parse(request.body) as { run: { id: string } }).run.id;
    await waitFor(
      async () =>
        (await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner })).body.status === "running"
          ? true
          : undefined,
      { timeoutMs: 10_000, what: "the run to be running" },
    );
    const rotated = await call(t.url, "POST", `/v1/tasks/${id}/rotate-secret`, { token: owner });
    expect(rotated.status).toBe(200);
    const url = new URL(completionUrl);
    const done = await call(t.url, "POST", `${url.pathname}${url.search}`, {
      body: { status: "succeeded" },
    });
    expect(done.status).toBe(200);
    expect(done.body.recorded).toBe(true);
  });

  it("signs with the new secret only when the grace is zero, and refuses a grace past 7 days", async () => {
    const { id, secret: before } = await webhookTask("punctual");
    const rotated = await call(t.url, "POST", `/v1/tasks/${id}/rotate-secret`, {
      token: owner,
      body: { grace: "PT0S" },
    });
    expect(rotated.body.previous_valid_until).toBeNull();
    const { request } = await fire(id);
    expect(verifiesWith(request, rotated.body.webhook_secret as string)).toBe(true);
    expect(verifiesWith(request, before)).toBe(false);

    const tooLong = await call(t.url, "POST", `/v1/tasks/${id}/rotate-secret`, {
      token: owner,
      body: { grace: "P8D" },
    });
    expect(tooLong.status).toBe(422);
    expect(JSON.stringify(tooLong.body)).toContain("grace");
    const other = await t.token("bob");
    const hidden = await call(t.url, "POST", `/v1/tasks/${id}/rotate-secret`, { token: other });
    expect(hidden.status).toBe(404);
  });
});
