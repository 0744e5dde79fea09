/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- API answers are untyped JSON, checked by the assertions */
/**
 * `POST /v1/hooks/agent/{server}` against a real listening server and the fake agent server's JS flavor
 * (which posts its run webhooks as text/plain): the launch hands the server a per-run hook URL, the
 * finished run's webhook completes the punctual run long before the next poll would, and a wrong token,
 * another server's name or an unknown run all answer the same 404 without writing anything.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../e2e/process.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import { call, startTestServer } from "./http-harness.js";
import type { TestServer } from "./http-harness.js";

let fake: FakeAgentServer;
let t: TestServer;
let owner: string;

beforeAll(async () => {
  fake = await FakeAgentServer.start({ flavor: "js" });
  t = await startTestServer({
    runCoordinator: true,
    agentServers: [
      {
        name: "js",
        url: fake.url,
        headers: {},
        flavor: "langgraph",
        webhooks: true,
        requestTimeoutMs: 2000,
        // Polling would take a minute: a prompt completion can only come from the webhook.
        pollIntervalMs: 60_000,
        knobs: { config: {}, context: {} },
        assistantId: null,
      },
    ],
  });
  owner = await t.token("alice");
});
afterAll(async () => {
  await t.stop();
  await fake.close();
});

async function launched(): Promise<{ runId: string; hook: string; serverRunId: string }> {
  const created = await call(t.url, "POST", "/v1/tasks", {
    token: owner,
    body: {
      title: "agent digest",
      schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
      target: { kind: "agent", server: "js", assistant_id: "agent", input: { q: "hi" } },
    },
  });
  expect(created.status).toBe(201);
  const run = await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
    token: owner,
  });
  const runId: string = run.body.id;
  await fake.waitFor(() => fake.runsOf(runId).length === 1, 10_000);
  const serverRun = fake.runsOf(runId)[0]!;
  await waitFor(
    async () => {
      const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
      return current.body.target_run_id === serverRun.run_id ? true : undefined;
    },
    { timeoutMs: 10_000, what: "the launch to be recorded" },
  );
  return { runId, hook: serverRun.kwargs.webhook ?? "", serverRunId: serverRun.run_id };
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

describe("POST /v1/hooks/agent/{server}", () => {
  it("hands the server a per-run hook, and the run webhook completes the run at once", async () => {
    const { runId, hook, serverRunId } = await launched();
    expect(hook.startsWith(`${t.url}/v1/hooks/agent/js?run=${runId}&token=`)).toBe(true);

    fake.finish(serverRunId, "success");
    await waitFor(
      async () => {
        const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
        return current.body.status === "succeeded" ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the webhook to complete the run" },
    );
    const delivery = fake.webhooks.find((d) => d.url === hook);
    expect(delivery?.contentType).toContain("text/plain");
    expect(delivery?.outcome).toBe(200);
  });

  it("maps an interrupted run to cancelled", async () => {
    const { runId, serverRunId } = await launched();
    fake.finish(serverRunId, "interrupted");
    await waitFor(
      async () => {
        const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
        return current.body.status === "cancelled" ? current.body : undefined;
      },
      { timeoutMs: 10_000, what: "the webhook to cancel the run" },
    );
  });

  it("answers the same 404 to a wrong token, another server or run, and changes nothing", async () => {
    const { runId, hook, serverRunId } = await launched();
    const token = new URL(hook).searchParams.get("token") ?? "";
    const finished = { run_id: serverRunId, thread_id: runId, status: "success" };
    const wrong = [
      `/v1/hooks/agent/js?run=${runId}&token=${"A".repeat(token.length)}`,
      `/v1/hooks/agent/other?run=${runId}&token=${token}`,
      `/v1/hooks/agent/js?run=no-such-run&token=${token}`,
    ];
    for (const path of wrong) {
      const answer = await call(t.url, "POST", path, { body: finished });
      expect(answer.status, path).toBe(404);
    }
    // A verdict about some other server run does not end this one.
    const other = await call(t.url, "POST", pathOf(hook), {
      body: { ...finished, run_id: "someone-elses-run" },
    });
    expect(other.body.recorded).toBe(false);
    // Nor does a finished run the server says was launched for another punctual run.
    const foreign = await call(t.url, "POST", pathOf(hook), {
      body: { ...finished, metadata: { punctual_run_id: "another-run" } },
    });
    expect(foreign.body.recorded).toBe(false);
    // A run still active on the server changes nothing either.
    const active = await call(t.url, "POST", pathOf(hook), {
      body: { ...finished, status: "running" },
    });
    expect(active.body).toEqual({ id: runId, status: "running", recorded: false });
    const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
    expect(current.body.status).toBe("running");
    fake.finish(serverRunId, "success");
  });

  // Issue 17: an uncertain launch learns its server run only from proof, this attempt's marks. A
  // webhook of an earlier attempt's run (same punctual run id) used to complete it.
  it("completes an uncertain launch only from a webhook carrying this attempt's marks", async () => {
    fake.setMode({ kind: "drop" });
    let runId: string;
    try {
      const created = await call(t.url, "POST", "/v1/tasks", {
        token: owner,
        body: {
          title: "uncertain digest",
          schedule: { type: "cron", cron: "0 0 1 1 *", timezone: "UTC" },
          target: { kind: "agent", server: "js", assistant_id: "agent", input: { q: "hi" } },
        },
      });
      runId = (
        await call(t.url, "POST", `/v1/tasks/${created.body.task.id}/trigger`, {
          token: owner,
        })
      ).body.id;
      await waitFor(
        async () => {
          const current = await call(t.url, "GET", `/v1/runs/${runId}`, { token: owner });
          return current.body.status === "running" ? true : undefined;
        },
        { timeoutMs: 10_000, what: "the uncertain launch to be recorded" },
      );
    } finally {
      fake.setMode({ kind: "normal" });
    }
    const serverRun = fake.runsOf(runId)[0]!;
    const hook = pathOf(serverRun.kwargs.webhook ?? "");
    const body = { run_id: serverRun.run_id, thread_id: runId, status: "success" };
    const earlier = { ...serverRun.metadata, punctual_attempt: 0 };
    const stale = await call(t.url, "POST", hook, { body: { ...body, metadata: earlier } });
    expect(stale.body).toEqual({ id: runId, status: "running", recorded: false });
    const proven = await call(t.url, "POST", hook, {
      body: { ...body, metadata: serverRun.metadata },
    });
    expect(proven.body).toMatchObject({ id: runId, status: "succeeded", recorded: true });
    fake.finish(serverRun.run_id, "success");
  });
});
