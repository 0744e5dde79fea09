/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- API answers are untyped JSON, checked by the assertions */
/**
 * `serve`'s shutdown order (docs/operations.md#what-happens-on-shutdown): once `stop()` begins,
 * `/readyz` answers 503 at once while every other route keeps answering, including the completion
 * callback of a run that answered 202, until the coordinator has drained (a handler still running here
 * holds it); only then does the listener close. A handler that outlasts the grace is handed back and
 * the listener closes at the grace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { Receiver } from "../../helpers/webhook-receiver.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver({ "/job": json(202, { accepted: true }) });
});
afterAll(async () => {
  await receiver.close();
});

const YEARLY = { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" };

/** Triggers `target` on a new task and waits until its run is `running`; resolves with the run id. */
async function runningRun(t: TestServer, token: string, target: unknown): Promise<string> {
  const created = await call(t.url, "POST", "/v1/tasks", {
    token,
    body: { title: "held", schedule: YEARLY, target },
  });
  expect(created.status).toBe(201);
  const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, { token });
  const runId: string = run.body.id;
  await waitFor(
    async () =>
      (await call(t.url, "GET", `/v1/runs/${runId}`, { token })).body.status === "running"
        ? true
        : undefined,
    { timeoutMs: 10_000, what: `run ${runId} to be running` },
  );
  return runId;
}

function completionPath(runId: string): string {
  const request = receiver
    .requestsTo("/job")
    .map((r) => JSON.parse(r.body) as { run: { id: string }; completion_url: string })
    .find((body) => body.run.id === runId);
  if (request === undefined) throw new Error(`no webhook request for ${runId}`);
  const url = new URL(request.completion_url);
  return `${url.pathname}${url.search}`;
}

describe("punctual serve's shutdown", () => {
  it("answers 503 on /readyz at once, and every other route until the coordinator has drained", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = await startTestServer({
      runCoordinator: true,
      webhookAllow: ["127.0.0.1"],
      handlers: { hold: () => held.then(() => ({ held: true })) },
    });
    const owner = await t.token("alice");
    const webhookRun = await runningRun(t, owner, {
      kind: "webhook",
      url: receiver.url("/job"),
    });
    const handlerRun = await runningRun(t, owner, { kind: "handler", name: "hold" });

    let stopped = false;
    const stopping = t.stop().then(() => (stopped = true));
    expect((await call(t.url, "GET", "/readyz")).status).toBe(503);
    expect((await call(t.url, "GET", "/healthz")).status).toBe(200);
    expect((await call(t.url, "GET", "/v1/tasks", { token: owner })).status).toBe(200);
    // A completion arriving during the drain is recorded.
    const done = await call(t.url, "POST", completionPath(webhookRun), {
      body: { status: "succeeded", result: { late: true } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "succeeded", recorded: true });
    const recorded = await call(t.url, "GET", `/v1/runs/${webhookRun}`, { token: owner });
    expect(recorded.body).toMatchObject({ status: "succeeded", result: { late: true } });
    // The handler still holds the drain, and the API still shows it.
    const holding = await call(t.url, "GET", `/v1/runs/${handlerRun}`, { token: owner });
    expect(holding.body.status).toBe("running");
    expect(stopped).toBe(false);

    release();
    await stopping;
    await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  });

  it("closes the listener at the grace when a handler outlasts it", async () => {
    // The order of what happens, not its timing (the bench keeps figures): the handler never ends, so
    // stop() can only resolve by giving it up at the grace, which aborts its signal first.
    const events: string[] = [];
    const t = await startTestServer({
      runCoordinator: true,
      coordinator: { shutdownTimeoutMs: 500 },
      handlers: {
        forever: ({ signal }) => {
          signal.addEventListener("abort", () => events.push("handler given up"));
          return new Promise(() => undefined);
        },
      },
    });
    const owner = await t.token("alice");
    await runningRun(t, owner, { kind: "handler", name: "forever" });
    const stopping = t.stop().then(() => events.push("stopped"));
    expect((await call(t.url, "GET", "/readyz")).status).toBe(503);
    expect((await call(t.url, "GET", "/healthz")).status).toBe(200);
    await stopping;
    expect(events).toEqual(["handler given up", "stopped"]);
    await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  });
});
