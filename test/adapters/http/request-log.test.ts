/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * The request log (docs/security.md#log-readers): one line per request with its route and path, never
 * the query string (a callback's `?token=` opens a run) and never a header value (the bearer token).
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { Receiver } from "../../helpers/webhook-receiver.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  },
});

let t: TestServer;
let receiver: Receiver;
let owner: string;

beforeAll(async () => {
  receiver = await startReceiver({ "/job": json(202, { accepted: true }) });
  t = await startTestServer({
    runCoordinator: true,
    webhookAllow: ["127.0.0.1"],
    httpLogger: pino({ level: "debug" }, sink),
  });
  owner = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
  await receiver.close();
});

describe("the request log", () => {
  it("names the route and path of a callback, without its token or any header", async () => {
    const created = await call(t.url, "POST", "/v1/tasks", {
      token: owner,
      body: {
        title: "async export",
        schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
        target: { kind: "webhook", url: receiver.url("/job") },
      },
    });
    expect(created.status).toBe(201);
    const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
      token: owner,
    });
    const runId: string = run.body.id;
    const completionUrl = await waitFor(
      () =>
        receiver
          .requestsTo("/job")
          .map((r) => JSON.parse(r.body) as { run: { id: string }; completion_url: string })
          .find((body) => body.run.id === runId)?.completion_url,
      { timeoutMs: 10_000, what: "the webhook request" },
    );
    const token = new URL(completionUrl).searchParams.get("token") ?? "";
    expect(token.length).toBeGreaterThan(10);
    const url = new URL(completionUrl);
    await waitFor(
      async () =>
        (await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner })).body.status === "running"
          ? true
          : undefined,
      { timeoutMs: 10_000, what: "the run to be running" },
    );
    const done = await call(t.url, "POST", `${url.pathname}${url.search}`, {
      body: { status: "succeeded" },
    });
    expect(done.status).toBe(200);

    const entry = await waitFor(
      () =>
        lines
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((fields) => fields["route"] === "/v1/runs/:id/complete"),
      { timeoutMs: 5_000, what: "the completion's log line" },
    );
    expect(entry).toMatchObject({
      method: "POST",
      path: `/v1/runs/${runId}/complete`,
      status: 200,
    });
    const all = lines.join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain("token=");
    expect(all).not.toContain(owner);
    expect(all).not.toContain(created.body.task.webhook_secret as string);
  });
});
