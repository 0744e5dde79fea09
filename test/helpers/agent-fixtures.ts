/**
 * Tasks, runs and server configurations for the `agent` target's tests: claimed runs on UUID threads
 * (the LangGraph servers refuse other thread ids), built with the domain builders.
 */
import { randomUUID } from "node:crypto";
import { FLAVOR_KNOBS } from "../../src/adapters/launchers/agent/agent-knobs.js";
import type { AgentServerConfig } from "../../src/adapters/launchers/agent/agent-servers.js";
import type { RunId, ThreadId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import type { AgentTarget, ExecutionContext, JsonValue } from "../../src/domain/target.js";
import { threadScopeOf } from "../../src/domain/target.js";
import type { Task } from "../../src/domain/task.js";
import { buildRun, buildTask, claimed } from "../domain/builders.js";
import type { FakeFlavor } from "./fake-agent-server.js";

export interface AgentTaskOptions {
  readonly server?: string;
  readonly assistantId?: string;
  readonly input?: JsonValue;
  /** Reuse this thread; absent: a fresh thread per run. */
  readonly threadId?: string;
  readonly config?: AgentTarget["config"];
  readonly context?: AgentTarget["context"];
}

/** An agent task on server `main` (assistant `agent`) with a fresh thread per run unless told. */
export function agentTask(options: AgentTaskOptions = {}): Task {
  const target: AgentTarget = {
    kind: "agent",
    server: options.server ?? "main",
    assistantId: options.assistantId ?? "agent",
    input: options.input ?? { messages: [{ role: "user", content: "morning report" }] },
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.context === undefined ? {} : { context: options.context }),
  };
  const context: ExecutionContext =
    options.threadId === undefined
      ? { mode: "fresh_thread_per_run" }
      : { mode: "reuse_thread", threadId: options.threadId as ThreadId };
  return buildTask({ target, context });
}

/** A claimed run of `task`: a fresh UUID thread, or the task's bound thread. */
export function agentRun(task: Task, overrides: Partial<Run> = {}): Run {
  const id = randomUUID() as RunId;
  const threadId =
    task.context.mode === "reuse_thread" ? task.context.threadId : (randomUUID() as ThreadId);
  return claimed(buildRun({ id, threadId, threadScope: threadScopeOf(task.target, task.owner), ...overrides }));
}

/** A server configuration as `parseAgentServers` would produce it. */
export function serverConfig(
  name: string,
  url: string,
  overrides: Partial<AgentServerConfig> = {},
): AgentServerConfig {
  const flavor = overrides.flavor ?? "langgraph";
  return {
    name,
    url,
    headers: {},
    flavor,
    webhooks: flavor === "langgraph",
    requestTimeoutMs: 5000,
    pollIntervalMs: 5000,
    knobs: FLAVOR_KNOBS[flavor],
    assistantId: flavor === "deerflow" ? "lead_agent" : null,
    ...overrides,
  };
}

/** The configured flavor a fake server stands for. */
export function configFlavor(flavor: FakeFlavor): AgentServerConfig["flavor"] {
  return flavor === "deerflow" ? "deerflow" : "langgraph";
}
