/**
 * The agent launcher's launch against fake agent servers (docs/semantics.md#launch, reference 1): the request it sends
 * to each flavor, and how every kind of answer (or silence) becomes exactly one launch outcome.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TransportError } from "../../../src/adapters/launchers/transport-error.js";
import { AgentLauncher } from "../../../src/adapters/launchers/agent/agent-launcher.js";
import type { AgentLauncherOptions } from "../../../src/adapters/launchers/agent/agent-launcher.js";
import type { AgentServerConfig } from "../../../src/adapters/launchers/agent/agent-servers.js";
import {
  LaunchFailedError,
  LaunchIndeterminateError,
  ThreadBusyError,
} from "../../../src/domain/errors.js";
import type { LaunchedRun } from "../../../src/domain/ports/run-launcher.js";
import type { Run } from "../../../src/domain/run.js";
import type { Task } from "../../../src/domain/task.js";
import { agentRun, agentTask, configFlavor, serverConfig } from "../../helpers/agent-fixtures.js";
import { FakeAgentServer } from "../../helpers/fake-agent-server.js";
import type { FakeAgentServerOptions, FakeRequest } from "../../helpers/fake-agent-server.js";
import { closedPort } from "../../helpers/webhook-receiver.js";

const fakes: FakeAgentServer[] = [];

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(options: FakeAgentServerOptions = {}): Promise<FakeAgentServer> {
  const server = await FakeAgentServer.start(options);
  fakes.push(server);
  return server;
}

function launcherFor(
  server: FakeAgentServer,
  config: Partial<AgentServerConfig> = {},
  options: Omit<AgentLauncherOptions, "servers"> = {},
): AgentLauncher {
  const flavor = configFlavor(server.flavor);
  return new AgentLauncher({
    servers: [serverConfig("main", server.url, { flavor, ...config })],
    ...options,
  });
}

async function launch(
  launcher: AgentLauncher,
  task: Task,
  run: Run = agentRun(task),
  signal: AbortSignal = new AbortController().signal,
): Promise<LaunchedRun> {
  return launcher.launch({ run, task, signal });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error;
}

function createRunRequests(server: FakeAgentServer): FakeRequest[] {
  return server.requests.filter((r) => r.method === "POST" && r.path.endsWith("/runs"));
}

function onlyCreateBody(server: FakeAgentServer): Record<string, unknown> {
  const requests = createRunRequests(server);
  expect(requests).toHaveLength(1);
  return requests[0]!.body as Record<string, unknown>;
}

describe("AgentLauncher.launch: the request", () => {
  it("creates a background run on the run's thread with an explicit reject strategy and punctual's metadata", async () => {
    const server = await fake({ apiKey: "k-123" });
    const launcher = launcherFor(server, { headers: { "X-Api-Key": "k-123" } });
    const task = agentTask({ input: { messages: [{ role: "user", content: "hi" }] } });
    const run = agentRun(task);
    const launched = await launch(launcher, task, run);

    const created = server.runsOf(run.threadId);
    expect(created).toHaveLength(1);
    expect(launched).toEqual({ targetRunId: created[0]!.run_id, threadId: run.threadId });
    const request = createRunRequests(server)[0]!;
    expect(request.path).toBe(`/threads/${run.threadId}/runs`);
    expect(request.headers["x-api-key"]).toBe("k-123");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body).toEqual({
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "hi" }] },
      multitask_strategy: "reject",
      if_not_exists: "create",
      metadata: {
        punctual_task_id: run.taskId,
        punctual_run_id: run.id,
        punctual_owner: run.owner,
        punctual_trigger: "scheduled",
        punctual_occurrence: new Date(run.scheduledFor).toISOString(),
        punctual_fire_at: new Date(run.fireAt).toISOString(),
        punctual_late: run.late,
        punctual_idempotency_key: run.idempotencyKey,
        punctual_attempt: 1,
      },
    });
  });

  it("puts the launch span's trace context in the run's metadata (docs/operations.md#tracing)", async () => {
    const server = await fake();
    const launcher = launcherFor(server);
    const task = agentTask();
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await launcher.launch({
      run: agentRun(task),
      task,
      signal: new AbortController().signal,
      traceHeaders: { traceparent, tracestate: "vendor=1" },
    });
    const metadata = onlyCreateBody(server)["metadata"] as Record<string, unknown>;
    expect(metadata["traceparent"]).toBe(traceparent);
    expect(metadata["tracestate"]).toBe("vendor=1");
    expect(typeof metadata["punctual_run_id"]).toBe("string");
  });

  it("leaves if_not_exists out for a reused thread, which must already exist", async () => {
    const server = await fake();
    const threadId = crypto.randomUUID();
    server.createThread(threadId);
    const task = agentTask({ threadId });
    const launched = await launch(launcherFor(server), task);
    expect(launched.threadId).toBe(threadId);
    expect(onlyCreateBody(server)).not.toHaveProperty("if_not_exists");
  });

  it("asks for the run webhook only from servers that call it", async () => {
    const server = await fake();
    const hookUrl = (run: Run): string => `http://punctual.test/v1/hooks/agent/main?run=${run.id}`;
    const task = agentTask();
    const run = agentRun(task);
    await launch(launcherFor(server, {}, { hookUrl }), task, run);
    expect(onlyCreateBody(server)["webhook"]).toBe(hookUrl(run));

    const silent = await fake();
    let asked = 0;
    const counting = (r: Run): string => {
      asked++;
      return hookUrl(r);
    };
    await launch(launcherFor(silent, { webhooks: false }, { hookUrl: counting }), task);
    expect(onlyCreateBody(silent)).not.toHaveProperty("webhook");
    expect(asked).toBe(0);

    const none = await fake();
    await launch(launcherFor(none, {}, { hookUrl: () => null }), task);
    expect(onlyCreateBody(none)).not.toHaveProperty("webhook");
  });

  it("sends DeerFlow only fields it accepts: no webhook, and if_not_exists create even for a reused thread", async () => {
    const server = await fake({ flavor: "deerflow" });
    const launcher = launcherFor(server, {}, { hookUrl: () => "http://punctual.test/hook" });
    const threadId = crypto.randomUUID();
    server.createThread(threadId);
    const launched = await launch(launcher, agentTask({ threadId }));
    expect(launched.targetRunId).toBe(server.runsOf(threadId)[0]!.run_id);
    const body = onlyCreateBody(server);
    expect(Object.keys(body).sort()).toEqual(
      [
        "assistant_id",
        "config",
        "context",
        "if_not_exists",
        "input",
        "metadata",
        "multitask_strategy",
      ].sort(),
    );
    expect(body["if_not_exists"]).toBe("create");
    expect(body["config"]).toEqual({ recursion_limit: 1000 });
    expect(body["context"]).toEqual({ non_interactive: true });
  });

  // Issue 17, item 3: the knobs each flavor's request body carries.
  it("sends a LangGraph server its default config under the task's, key by key", async () => {
    const server = await fake({ flavor: "python" });
    const knobs = {
      config: { configurable: { team: "data", model: "small" }, tags: ["punctual"] },
      context: {},
    };
    const launcher = launcherFor(server, { knobs });
    const task = agentTask({
      config: { configurable: { model: "large" }, recursionLimit: 50, tags: ["daily"] },
    });
    await launch(launcher, task);
    const body = onlyCreateBody(server);
    expect(body["config"]).toEqual({
      configurable: { team: "data", model: "large" },
      recursion_limit: 50,
      tags: ["daily"],
    });
    expect(body).not.toHaveProperty("context");
  });

  it("sends a LangGraph server a task's context, and neither knob when none is set", async () => {
    const server = await fake({ flavor: "js" });
    const launcher = launcherFor(server);
    await launch(launcher, agentTask({ context: { user_tier: "pro", locale: "de" } }));
    await launch(launcher, agentTask());
    const [withContext, plain] = createRunRequests(server).map(
      (r) => r.body as Record<string, unknown>,
    );
    expect(withContext!["context"]).toEqual({ user_tier: "pro", locale: "de" });
    expect(withContext).not.toHaveProperty("config");
    expect(plain).not.toHaveProperty("config");
    expect(plain).not.toHaveProperty("context");
  });

  it("sends DeerFlow its knobs in the context it forwards, over its scheduler's defaults", async () => {
    const server = await fake({ flavor: "deerflow" });
    const launcher = launcherFor(server, {
      knobs: { config: { recursionLimit: 1000 }, context: { non_interactive: true, mode: "pro" } },
    });
    const task = agentTask({
      input: { messages: [{ role: "user", content: "Summarise the trending repos" }] },
      config: { recursionLimit: 300 },
      context: { agent_name: "researcher", model_name: "deepseek-v3", thinking_enabled: true },
    });
    const launched = await launch(launcher, task);
    expect(launched.targetRunId).not.toBeNull();
    const body = onlyCreateBody(server);
    expect(body["config"]).toEqual({ recursion_limit: 300 });
    expect(body["context"]).toEqual({
      non_interactive: true,
      mode: "pro",
      agent_name: "researcher",
      model_name: "deepseek-v3",
      thinking_enabled: true,
    });
    expect(body["input"]).toEqual({
      messages: [{ role: "user", content: "Summarise the trending repos" }],
    });
  });

  it("reads the run id from Content-Location when the body does not carry it", async () => {
    const launcher = new AgentLauncher({
      servers: [serverConfig("main", "http://agent.test")],
      fetch: () =>
        Promise.resolve(
          new Response("", {
            status: 200,
            headers: { "content-location": "/threads/t-1/runs/r-9" },
          }),
        ),
    });
    expect(await launch(launcher, agentTask())).toEqual({ targetRunId: "r-9", threadId: "t-1" });
  });

  it("reports the thread the server answered for", async () => {
    const other = crypto.randomUUID();
    const body = { run_id: "r-1", thread_id: other, status: "pending" };
    const server = await fake({ mode: { kind: "reply", status: 200, body } });
    expect((await launch(launcherFor(server), agentTask())).threadId).toBe(other);
  });
});

describe("AgentLauncher.launch: outcomes", () => {
  it.each(["python", "js", "deerflow"] as const)(
    "reports a thread busy on a %s server as ThreadBusyError",
    async (flavor) => {
      const server = await fake({ flavor });
      const threadId = crypto.randomUUID();
      server.keepBusy(threadId);
      const error = await failure(launch(launcherFor(server), agentTask({ threadId })));
      expect(error).toBeInstanceOf(ThreadBusyError);
      expect(error.message).toMatch(/already (running a task|has an active run)/);
      expect(server.runsOf(threadId)).toHaveLength(1);
    },
  );

  it("reports a missing reused thread as a certain failure, even where the JS server says busy", async () => {
    for (const flavor of ["python", "js"] as const) {
      const server = await fake({ flavor });
      const threadId = crypto.randomUUID();
      const error = await failure(launch(launcherFor(server), agentTask({ threadId })));
      expect(error, flavor).toBeInstanceOf(LaunchFailedError);
      expect(server.runsOf(threadId), flavor).toHaveLength(0);
    }
  });

  it("reports a refusal as LaunchFailedError with the status and the server's detail", async () => {
    const server = await fake();
    const error = await failure(launch(launcherFor(server), agentTask({ assistantId: "nobody" })));
    expect(error).toBeInstanceOf(LaunchFailedError);
    expect(error.message).toContain("404");
    expect(error.message).toContain("Thread or assistant not found.");
  });

  it("reports a wrong API key and a redirect as certain failures", async () => {
    const guarded = await fake({ apiKey: "right" });
    const wrongKey = launcherFor(guarded, { headers: { "X-Api-Key": "wrong" } });
    expect(await failure(launch(wrongKey, agentTask()))).toBeInstanceOf(LaunchFailedError);
    const moved = await fake({ mode: { kind: "reply", status: 307 } });
    const error = await failure(launch(launcherFor(moved), agentTask()));
    expect(error).toBeInstanceOf(LaunchFailedError);
    expect(error.message).toContain("redirect");
  });

  it("reports a 5xx and an unreadable 2xx as indeterminate", async () => {
    const broken = await fake({ mode: { kind: "reply", status: 502, body: "Bad Gateway" } });
    const error = await failure(launch(launcherFor(broken), agentTask()));
    expect(error).toBeInstanceOf(LaunchIndeterminateError);
    expect(error.message).toContain("502");
    const garbled = await fake({ mode: { kind: "reply", status: 200, body: "<html>ok</html>" } });
    expect(await failure(launch(launcherFor(garbled), agentTask()))).toBeInstanceOf(
      LaunchIndeterminateError,
    );
  });

  it("reports a dropped connection as indeterminate although the run was created", async () => {
    const server = await fake({ mode: { kind: "drop" } });
    const task = agentTask();
    const run = agentRun(task);
    const error = await failure(launch(launcherFor(server), task, run));
    expect(error).toBeInstanceOf(LaunchIndeterminateError);
    expect(error.cause).toBeInstanceOf(TransportError);
    expect(server.runsOf(run.threadId)).toHaveLength(1);
  });

  it("gives up after the request timeout as indeterminate", async () => {
    const server = await fake({ mode: { kind: "slow", ms: 10_000 } });
    const launcher = launcherFor(server, { requestTimeoutMs: 200 });
    const error = await failure(launch(launcher, agentTask()));
    expect(error).toBeInstanceOf(LaunchIndeterminateError);
    expect(error.message).toContain("did not answer within 200 ms");
  });

  it("reports a refused connection or an unknown host as a certain failure: nothing was sent", async () => {
    const dead = new AgentLauncher({
      servers: [serverConfig("main", `http://127.0.0.1:${await closedPort()}`)],
    });
    const refused = await failure(launch(dead, agentTask()));
    expect(refused).toBeInstanceOf(LaunchFailedError);
    expect((refused.cause as TransportError).mayHaveArrived).toBe(false);

    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND agent.test"), { code: "ENOTFOUND" });
    const unresolved = new AgentLauncher({
      servers: [serverConfig("main", "http://agent.test")],
      fetch: () => Promise.reject(new TypeError("fetch failed", { cause: dns })),
    });
    expect(await failure(launch(unresolved, agentTask()))).toBeInstanceOf(LaunchFailedError);
  });

  it("refuses a task naming an unknown server without calling anything", async () => {
    const server = await fake();
    const error = await failure(launch(launcherFor(server), agentTask({ server: "elsewhere" })));
    expect(error).toBeInstanceOf(LaunchFailedError);
    expect(error.message).toContain('no agent server named "elsewhere"');
    expect(server.requests).toHaveLength(0);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const server = await fake();
    const controller = new AbortController();
    controller.abort(new Error("shutting down"));
    const task = agentTask();
    const error = await failure(
      launch(launcherFor(server), task, agentRun(task), controller.signal),
    );
    expect(error).toBeInstanceOf(LaunchFailedError);
    expect(server.requests).toHaveLength(0);
  });

  it("turns an unexpected error into an indeterminate launch, keeping it as the cause", async () => {
    const server = await fake();
    const bug = new RangeError("a bug in the hook URL");
    const hookUrl = (): string => {
      throw bug;
    };
    const error = await failure(launch(launcherFor(server, {}, { hookUrl }), agentTask()));
    expect(error).toBeInstanceOf(LaunchIndeterminateError);
    expect(error.cause).toBe(bug);
  });
});

describe("AgentLauncher: what the coordinator asks", () => {
  it("watches agent tasks and tells their poll interval and reconcile delay", () => {
    const launcher = new AgentLauncher({
      servers: [
        serverConfig("main", "http://a.test", { pollIntervalMs: 750, requestTimeoutMs: 1200 }),
      ],
    });
    const task = agentTask();
    const other = agentTask({ server: "gone" });
    expect(launcher.serverNames).toEqual(new Set(["main"]));
    expect(launcher.watches(task)).toBe(true);
    expect(launcher.pollIntervalMs(task)).toBe(750);
    expect(launcher.reconcileDelayMs(task)).toBe(1200);
    expect(launcher.pollIntervalMs(other)).toBeNull();
    expect(launcher.reconcileDelayMs(other)).toBeUndefined();
    const handler = { ...task, target: { kind: "handler" as const, name: "log", input: null } };
    expect(launcher.watches(handler)).toBe(false);
  });
});
