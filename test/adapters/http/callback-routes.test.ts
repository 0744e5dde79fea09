/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- API answers are untyped JSON, checked by the assertions */
/**
 * `POST /v1/runs/{id}/complete` against a real listening server with its coordinator: a webhook receiver
 * answers 202, then reports the verdict at the `completion_url` punctual put in the envelope (docs/semantics.md#completion).
 * The route takes no bearer token; the per-run token in the URL opens that run only, and every wrong
 * token answers the same 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { Receiver } from "../../helpers/webhook-receiver.js";
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

/** Creates a webhook task, runs it now, and returns the run id and the envelope's completion_url. */
async function launchedRun(): Promise<{ runId: string; completionUrl: string; taskId: string }> {
  const created = await call(t.url, "POST", "/v1/tasks", {
    token: owner,
    body: {
      title: "async export",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "webhook", url: receiver.url("/job") },
    },
  });
  expect(created.status).toBe(201);
  const taskId: string = created.body.task.id;
  const run = await call(t.url, "POST", `/v1/tasks/${taskId}/trigger`, { token: owner });
  const runId: string = run.body.id;
  const envelope = await waitFor(
    () => {
      const request = receiver
        .requestsTo("/job")
        .map((r) => JSON.parse(r.body))
        .find((body) => body.run.id === runId);
      return request ?? undefined;
    },
    { timeoutMs: 10_000, what: "the webhook request" },
  );
  await waitFor(
    async () => {
      const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
      return current.body.status === "running" ? true : undefined;
    },
    { timeoutMs: 10_000, what: "the run to be running after the 202" },
  );
  return { runId, completionUrl: envelope.completion_url, taskId };
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

describe("POST /v1/runs/{id}/complete", () => {
  it("completes a run that answered 202, with its result, once", async () => {
    const { runId, completionUrl } = await launchedRun();
    expect(completionUrl.startsWith(`${t.url}/v1/runs/${runId}/complete?token=`)).toBe(true);

    const done = await call(t.url, "POST", pathOf(completionUrl), {
      body: { status: "succeeded", result: { rows: 12 } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ id: runId, status: "succeeded", recorded: true });
    const run = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
    expect(run.body).toMatchObject({ status: "succeeded", result: { rows: 12 } });

    // The first verdict wins: a second report changes nothing.
    const again = await call(t.url, "POST", pathOf(completionUrl), {
      body: { status: "failed", error: "late" },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: runId, status: "succeeded", recorded: false });
  });

  it("records a reported failure", async () => {
    const { runId, completionUrl } = await launchedRun();
    const done = await call(t.url, "POST", pathOf(completionUrl), {
      body: { status: "failed", error: "the export broke" },
    });
    expect(done.body.status).toBe("failed");
    const run = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
    expect(run.body).toMatchObject({ status: "failed", error: "the export broke" });
  });

  it("answers the same 404 to a wrong token, another run's token and an unknown run", async () => {
    const first = await launchedRun();
    const second = await launchedRun();
    const token = new URL(first.completionUrl).searchParams.get("token") ?? "";
    const wrong = [
      `/v1/runs/${first.runId}/complete?token=${"x".repeat(token.length)}`,
      `/v1/runs/${second.runId}/complete?token=${token}`,
      `/v1/runs/no-such-run/complete?token=${token}`,
      `/v1/runs/${first.runId}/complete?token=${token}x`,
    ];
    for (const path of wrong) {
      const answer = await call(t.url, "POST", path, { body: { status: "succeeded" } });
      expect(answer.status, path).toBe(404);
      expect(answer.body.type, path).toBe("https://punctual.dev/problems/not_found");
    }
    // A bearer token is no substitute for the run's token.
    const bearer = await call(t.url, "POST", `/v1/runs/${first.runId}/complete?token=nope`, {
      token: owner,
      body: { status: "succeeded" },
    });
    expect(bearer.status).toBe(404);
    const still = await call(t.url, "GET", `/v1/runs/${first.runId}`, { token: owner });
    expect(still.body.status).toBe("running");
  });

  it("refuses a malformed verdict or an oversized result without writing", async () => {
    const { runId, completionUrl } = await launchedRun();
    const path = pathOf(completionUrl);
    const missingToken = await call(t.url, "POST", `/v1/runs/${runId}/complete`, {
      body: { status: "succeeded" },
    });
    expect(missingToken.status).toBe(422);
    for (const body of [{}, { status: "done" }, { status: "succeeded", extra: 1 }]) {
      const answer = await call(t.url, "POST", path, { body });
      expect(answer.status, JSON.stringify(body)).toBe(422);
    }
    const big = await call(t.url, "POST", path, {
      body: { status: "succeeded", result: { blob: "x".repeat(70 * 1024) } },
    });
    expect([413, 422]).toContain(big.status);
    expect(JSON.stringify(big.body)).toContain("64 KiB");
    const run = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
    expect(run.body.status).toBe("running");
  });
});

describe("the task's webhook secret", () => {
  it("is shown to the owner of a webhook task, and to nobody else", async () => {
    const { taskId } = await launchedRun();
    const mine = await call(t.url, "GET", `/v1/tasks/${taskId}`, { token: owner });
    expect(typeof mine.body.webhook_secret).toBe("string");
    expect(mine.body.webhook_secret.length).toBeGreaterThanOrEqual(32);
    const bob = await t.token("bob");
    const theirs = await call(t.url, "GET", `/v1/tasks/${taskId}`, { token: bob });
    expect(theirs.status).toBe(404);
  });
});
