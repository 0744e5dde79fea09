/**
 * Reading an agent server's Run object, polled or posted by its run webhook (docs/semantics.md#completion): each status as
 * an observation, the server's error text kept, and the payloads real fake servers post to a receiver.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AgentLauncher } from "../../../src/adapters/launchers/agent/agent-launcher.js";
import {
  agentRunRefOf,
  observationFromAgentRun,
} from "../../../src/adapters/launchers/agent/agent-observation.js";
import { agentRun, agentTask, configFlavor, serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import type { FakeFlavor } from "../../helpers/fake-agent-server.js";
import { json, startReceiver } from "../../helpers/webhook-receiver.js";
import type { Receiver } from "../../helpers/webhook-receiver.js";

describe("observationFromAgentRun", () => {
  it.each([
    [{ status: "pending" }, { kind: "active" }],
    [{ status: "running" }, { kind: "active" }],
    [
      { status: "success", values: { messages: [] } },
      { kind: "finished", verdict: { status: "succeeded" } },
    ],
    [
      { status: "error", error: "ValueError: no model" },
      {
        kind: "finished",
        verdict: {
          status: "failed",
          error: "the agent run failed (status error): ValueError: no model",
        },
      },
    ],
    [
      { status: "timeout" },
      {
        kind: "finished",
        verdict: { status: "failed", error: "the agent server timed the run out (status timeout)" },
      },
    ],
    [
      { status: "interrupted", error: "User interrupted the run" },
      {
        kind: "finished",
        verdict: {
          status: "cancelled",
          error: "the agent run was interrupted (status interrupted): User interrupted the run",
        },
      },
    ],
    [
      { status: "rollback", error: "User requested rollback of the run" },
      {
        kind: "finished",
        verdict: {
          status: "cancelled",
          error:
            "the agent run was rolled back (status rollback): User requested rollback of the run",
        },
      },
    ],
  ])("reads %j", (body, observation) => {
    expect(observationFromAgentRun({ run_id: "r-1", ...body })).toEqual(observation);
  });

  it.each([null, "success", [], 42, {}, { status: "SUCCESS" }, { status: "paused" }])(
    "reads %j as unknown",
    (body) => {
      expect(observationFromAgentRun(body)).toEqual({ kind: "unknown" });
    },
  );

  it("shortens a long error text", () => {
    const seen = observationFromAgentRun({ status: "error", error: "x".repeat(5000) });
    expect(seen.kind === "finished" && seen.verdict.error?.length).toBeLessThan(1100);
  });
});

describe("agentRunRefOf", () => {
  it("names the server's run and thread and punctual's run id", () => {
    const body = { run_id: "r-1", thread_id: "t-1", metadata: { punctual_run_id: "p-1" } };
    expect(agentRunRefOf(body)).toEqual({
      targetRunId: "r-1",
      threadId: "t-1",
      punctualRunId: "p-1",
    });
    expect(agentRunRefOf({ run_id: "r-2" })).toEqual({
      targetRunId: "r-2",
      threadId: null,
      punctualRunId: null,
    });
    expect(agentRunRefOf({ thread_id: "t-1" })).toBeNull();
    expect(agentRunRefOf("r-1")).toBeNull();
  });
});

describe("the run webhook a server posts", () => {
  let receiver: Receiver | null = null;
  let server: FakeAgentServer | null = null;

  afterEach(async () => {
    await server?.close();
    await receiver?.close();
    server = receiver = null;
  });

  async function launchWithHook(flavor: FakeFlavor) {
    receiver = await startReceiver({ "/hook": json(200, { ok: true }) });
    server = await FakeAgentServer.start({ flavor });
    const hook = receiver.url("/hook");
    const launcher = new AgentLauncher({
      servers: [serverConfig("main", server.url, { flavor: configFlavor(flavor) })],
      hookUrl: () => hook,
    });
    const task = agentTask();
    const run = agentRun(task);
    const { targetRunId } = await launcher.launch({
      run,
      task,
      signal: new AbortController().signal,
    });
    return { fake: server, run, targetRunId: targetRunId!, receiver };
  }

  it.each(["python", "js"] as const)(
    "reads the %s server's payload as the run's verdict, whatever its content type",
    async (flavor) => {
      const { fake, run, targetRunId, receiver } = await launchWithHook(flavor);
      fake.finish(targetRunId, "error", "KeyError: 'messages'");
      await fake.waitFor(() => fake.webhooks.length === 1);
      const delivered = receiver.requestsTo("/hook")[0]!;
      expect(delivered.headers["content-type"]).toBe(
        flavor === "js" ? "text/plain;charset=UTF-8" : "application/json",
      );
      const payload: unknown = JSON.parse(delivered.body);
      expect(agentRunRefOf(payload)).toEqual({
        targetRunId,
        threadId: run.threadId,
        punctualRunId: run.id,
      });
      expect(observationFromAgentRun(payload)).toEqual({
        kind: "finished",
        verdict: {
          status: "failed",
          error: "the agent run failed (status error): KeyError: 'messages'",
        },
      });
    },
  );

  it("reads the webhook of a rolled-back run as cancelled", async () => {
    const { fake, run, targetRunId, receiver } = await launchWithHook("python");
    const cancel = `${fake.url}/threads/${run.threadId}/runs/${targetRunId}/cancel?action=rollback`;
    expect((await fetch(cancel, { method: "POST" })).status).toBe(202);
    await fake.waitFor(() => fake.webhooks.length === 1);
    const payload: unknown = JSON.parse(receiver.requestsTo("/hook")[0]!.body);
    expect(observationFromAgentRun(payload)).toMatchObject({
      kind: "finished",
      verdict: { status: "cancelled" },
    });
  });
});
