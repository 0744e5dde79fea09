/**
 * What the agent launcher does after a launch, against fake agent servers (docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation): reconcile finds
 * an uncertain launch by punctual's metadata and never launches; observe reads the run's status (a run
 * that disappeared is cancelled) and never throws; cancel interrupts, finding the run first if needed.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { AgentLauncher } from "../../../src/adapters/launchers/agent/agent-launcher.js";
import type { AgentServerConfig } from "../../../src/adapters/launchers/agent/agent-servers.js";
import type { Run } from "../../../src/domain/run.js";
import type { Task } from "../../../src/domain/task.js";
import { agentRun, agentTask, configFlavor, serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import type { FakeAgentServerOptions, FakeListing } from "../../helpers/fake-agent-server.js";
import { closedPort } from "../../helpers/webhook-receiver.js";

const fakes: FakeAgentServer[] = [];
const NO_SIGNAL = new AbortController().signal;

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(options: FakeAgentServerOptions = {}): Promise<FakeAgentServer> {
  const server = await FakeAgentServer.start(options);
  fakes.push(server);
  return server;
}

function launcherFor(server: FakeAgentServer, config: Partial<AgentServerConfig> = {}) {
  const flavor = configFlavor(server.flavor);
  return new AgentLauncher({ servers: [serverConfig("main", server.url, { flavor, ...config })] });
}

/** A run launched through the launcher, as punctual records it (with the server's run id). */
async function launched(launcher: AgentLauncher, task: Task = agentTask()): Promise<Run> {
  const run = agentRun(task);
  const answer = await launcher.launch({ run, task, signal: NO_SIGNAL });
  return { ...run, status: "running", targetRunId: answer.targetRunId };
}

/** Posts a run straight to the fake (as another client would), with the given strategy. */
async function postRun(server: FakeAgentServer, threadId: string, strategy: string) {
  const response = await fetch(`${server.url}/threads/${threadId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", input: null, multitask_strategy: strategy }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { run_id: string }).run_id;
}

describe("AgentLauncher.reconcile", () => {
  it("finds a launch whose connection dropped, and no second run is created", async () => {
    const server = await fake({ mode: { kind: "drop" } });
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = agentRun(task);
    await expect(launcher.launch({ run, task, signal: NO_SIGNAL })).rejects.toThrow();
    server.setMode({ kind: "normal" });

    const finding = await launcher.reconcile(run, task, NO_SIGNAL);
    const runs = server.runsOf(run.threadId);
    expect(runs).toHaveLength(1);
    expect(finding).toEqual({
      kind: "found",
      targetRunId: runs[0]!.run_id,
      createdAt: Date.parse(runs[0]!.created_at),
    });
    expect(server.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  // Issue 17: the search paged `limit=100&offset=...` assuming newest first and read a page that came
  // back short or empty as "absent". On a server that lists oldest first and answers [] past the first
  // page (the JS server), a launch on a thread with 100 earlier runs was declared absent and relaunched.
  const quirks: [string, Partial<FakeListing>][] = [
    ["lists oldest first and answers [] past one page", { order: "oldest", offset: "slice" }],
    ["lists oldest first and ignores offset", { order: "oldest", offset: "ignored" }],
    ["lists oldest first and caps its pages at 20", { order: "oldest", maxPage: 20 }],
    ["does not filter by status", { order: "oldest", offset: "slice", statusFilter: false }],
  ];

  describe.each(quirks)("on a thread of 150 runs, on a server that %s", (_name, listing) => {
    it("finds the launch while it runs, and after it ended by the thread's checkpoints", async () => {
      const server = await fake({ flavor: "js", listing });
      const launcher = launcherFor(server);
      const threadId = randomUUID();
      server.seedRuns(threadId, 150);
      const task = agentTask({ threadId });
      const run = await launched(launcher, task);
      await server.waitFor(() => server.run(run.targetRunId!)?.status === "running");
      const uncertain = { ...run, targetRunId: null };

      expect(await launcher.reconcile(uncertain, task, NO_SIGNAL)).toMatchObject({
        kind: "found",
        targetRunId: run.targetRunId,
      });
      server.finish(run.targetRunId!, "success");
      expect(await launcher.reconcile(uncertain, task, NO_SIGNAL)).toMatchObject({
        kind: "found",
        targetRunId: run.targetRunId,
      });
    });

    it("answers unknown, never absent, when an ended launch cannot be reached", async () => {
      const server = await fake({ flavor: "js", listing: { ...listing, history: false } });
      const launcher = launcherFor(server);
      const threadId = randomUUID();
      server.seedRuns(threadId, 150);
      const task = agentTask({ threadId });
      const run = await launched(launcher, task);
      await server.waitFor(() => server.run(run.targetRunId!)?.status === "running");
      server.finish(run.targetRunId!, "success");

      const uncertain = { ...run, targetRunId: null };
      expect(await launcher.reconcile(uncertain, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
      const creates = server.requests.filter(
        (r) => r.method === "POST" && r.path.endsWith("/runs"),
      );
      expect(creates).toHaveLength(1);
    });
  });

  it("finds an older launch on a server that pages newest first", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const run = await launched(launcher);
    server.finish(run.targetRunId!, "success");
    server.seedRuns(run.threadId, 120);

    const uncertain = { ...run, targetRunId: null };
    expect(await launcher.reconcile(uncertain, agentTask(), NO_SIGNAL)).toMatchObject({
      kind: "found",
      targetRunId: run.targetRunId,
    });
  });

  it("finds the launch on DeerFlow among its newest runs, asking its listing only", async () => {
    const server = await fake({ flavor: "deerflow" });
    const launcher = launcherFor(server);
    const threadId = randomUUID();
    server.seedRuns(threadId, 150);
    const task = agentTask({ threadId });
    const run = await launched(launcher, task);
    server.finish(run.targetRunId!, "success");

    const before = server.requests.length;
    const uncertain = { ...run, targetRunId: null };
    expect(await launcher.reconcile(uncertain, task, NO_SIGNAL)).toMatchObject({
      kind: "found",
      targetRunId: run.targetRunId,
    });
    expect(server.requests.slice(before).map((r) => [r.method, r.path])).toEqual([
      ["GET", `/threads/${threadId}/runs`],
    ]);
  });

  it("follows a launch the server carries out after the request gave up", async () => {
    const server = await fake({ mode: { kind: "slow_create", ms: 400 } });
    const launcher = launcherFor(server, { requestTimeoutMs: 150 });
    const task = agentTask();
    const run = agentRun(task);
    await expect(launcher.launch({ run, task, signal: NO_SIGNAL })).rejects.toMatchObject({
      code: "launch_indeterminate",
    });
    // Not created yet: no proof either way.
    expect(await launcher.reconcile(run, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
    await server.waitFor(() => server.runsOf(run.threadId).length === 1);
    const [created] = server.runsOf(run.threadId);
    expect(await launcher.reconcile(run, task, NO_SIGNAL)).toEqual({
      kind: "found",
      targetRunId: created!.run_id,
      createdAt: Date.parse(created!.created_at),
    });
  });

  it("never answers absent: no thread, another client's runs, another attempt or occurrence", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = agentRun(task);
    expect(await launcher.reconcile(run, task, NO_SIGNAL)).toEqual({ kind: "unknown" });

    server.keepBusy(run.threadId);
    expect(await launcher.reconcile(run, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
    server.release(run.threadId);
    const earlier = await launched(launcher, task);
    const nextAttempt = { ...earlier, targetRunId: null, attempt: earlier.attempt + 1 };
    expect(await launcher.reconcile(nextAttempt, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
    const sameIdOtherKey = { ...earlier, targetRunId: null, idempotencyKey: "another-occurrence" };
    expect(await launcher.reconcile(sameIdOtherKey, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
  });

  it("answers unknown when the server cannot be asked", async () => {
    const broken = await fake({
      mode: { kind: "reply", status: 500, body: { detail: "db down" } },
    });
    const task = agentTask();
    const run = agentRun(task);
    expect(await launcherFor(broken).reconcile(run, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
    const dead = new AgentLauncher({
      servers: [serverConfig("main", `http://127.0.0.1:${await closedPort()}`)],
    });
    expect(await dead.reconcile(run, task, NO_SIGNAL)).toEqual({ kind: "unknown" });
    const elsewhere = agentTask({ server: "gone" });
    expect(await dead.reconcile(run, elsewhere, NO_SIGNAL)).toEqual({ kind: "unknown" });
  });
});

describe("AgentLauncher.observe", () => {
  it("reads pending and running runs as active", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    await server.waitFor(() => server.run(run.targetRunId!)?.status === "running");
    expect(await launcher.observe(run, task, NO_SIGNAL)).toEqual({ kind: "active" });

    const queued = await postRun(server, run.threadId, "enqueue");
    expect(server.run(queued)?.status).toBe("pending");
    const pending = { ...run, targetRunId: queued };
    expect(await launcher.observe(pending, task, NO_SIGNAL)).toEqual({ kind: "active" });
  });

  it.each([
    ["success", { status: "succeeded" }],
    ["error", { status: "failed", error: "the agent run failed (status error)" }],
    ["timeout", { status: "failed", error: "the agent server timed the run out (status timeout)" }],
    [
      "interrupted",
      { status: "cancelled", error: "the agent run was interrupted (status interrupted)" },
    ],
  ] as const)("reads a run ended with %s as its verdict", async (status, verdict) => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    server.finish(run.targetRunId!, status);
    expect(await launcher.observe(run, task, NO_SIGNAL)).toEqual({ kind: "finished", verdict });
  });

  it("reads a rolled-back run, gone from the server, as cancelled", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    const url = `${server.url}/threads/${run.threadId}/runs/${run.targetRunId!}/cancel?action=rollback`;
    expect((await fetch(url, { method: "POST" })).status).toBe(202);
    expect(await launcher.observe(run, task, NO_SIGNAL)).toEqual({
      kind: "finished",
      verdict: {
        status: "cancelled",
        error: "the run disappeared from the agent server (rolled back or deleted)",
      },
    });
  });

  it("answers unknown without a target run id, on a 5xx, a strange status or no connection", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    const unknown = { kind: "unknown" };
    expect(await launcher.observe({ ...run, targetRunId: null }, task, NO_SIGNAL)).toEqual(unknown);
    server.setMode({ kind: "reply", status: 503, body: "unavailable" });
    expect(await launcher.observe(run, task, NO_SIGNAL)).toEqual(unknown);
    server.setMode({ kind: "reply", status: 200, body: { run_id: "r", status: "sleeping" } });
    expect(await launcher.observe(run, task, NO_SIGNAL)).toEqual(unknown);
    const dead = new AgentLauncher({
      servers: [serverConfig("main", `http://127.0.0.1:${await closedPort()}`)],
    });
    expect(await dead.observe(run, task, NO_SIGNAL)).toEqual(unknown);
  });
});

describe("AgentLauncher.cancel", () => {
  it("interrupts the run without asking to wait", async () => {
    const server = await fake({ flavor: "js" });
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    await launcher.cancel(run, task);
    expect(server.run(run.targetRunId!)?.status).toBe("interrupted");
    const cancel = server.requests.find((r) => r.path.endsWith("/cancel"));
    expect(cancel?.path).toBe(`/threads/${run.threadId}/runs/${run.targetRunId!}/cancel`);
    expect(cancel?.query).toEqual({ action: "interrupt" });
  });

  it("finds an uncertainly launched run first, then interrupts it", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    await launcher.cancel({ ...run, targetRunId: null }, task);
    expect(server.run(run.targetRunId!)?.status).toBe("interrupted");
  });

  it("swallows every failure: a finished run, a missing run, a dead server", async () => {
    const server = await fake({ flavor: "deerflow" });
    const launcher = launcherFor(server);
    const task = agentTask();
    const run = await launched(launcher, task);
    server.finish(run.targetRunId!, "success");
    await expect(launcher.cancel(run, task)).resolves.toBeUndefined();
    await expect(launcher.cancel({ ...run, targetRunId: "gone" }, task)).resolves.toBeUndefined();
    const fresh = agentRun(task);
    await expect(launcher.cancel(fresh, task)).resolves.toBeUndefined();
    expect(server.requests.filter((r) => r.path.endsWith("/cancel"))).toHaveLength(2);
    const dead = new AgentLauncher({
      servers: [serverConfig("main", `http://127.0.0.1:${await closedPort()}`)],
    });
    await expect(dead.cancel(run, task)).resolves.toBeUndefined();
  });
});
