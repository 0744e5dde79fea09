/**
 * The `agent` target (docs/semantics.md#tasks, docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation): background runs on threads of LangGraph-compatible agent
 * servers (Python langgraph-api, the JS server, DeerFlow's gateway). `launch` creates one run and lets
 * only the three launch errors escape; the protocol has no idempotency key, so `reconcile` finds an
 * uncertain launch by the metadata punctual tagged it with and never launches; `observe` polls the
 * server, the source of truth for completion; `cancel` interrupts. `observe` and `cancel` never throw.
 */
import type { Logger } from "../../../application/events/logger.js";
import { silentLogger } from "../../../application/events/logger.js";
import type { AbortSignalLike } from "../../../domain/abort.js";
import type { FieldError } from "../../../domain/errors.js";
import { LaunchFailedError, ThreadBusyError } from "../../../domain/errors.js";
import type {
  LaunchedRun,
  LaunchRequest,
  RunLauncher,
  RunObservation,
} from "../../../domain/ports/run-launcher.js";
import type { Run } from "../../../domain/run.js";
import type { ReconcileFinding } from "../../../domain/run-change.js";
import type { AgentTarget } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import type { AgentReply, FetchLike } from "./agent-http.js";
import { agentExchange, agentPath } from "./agent-http.js";
import { detailOf, launchedFrom, launchError } from "./agent-launch-reply.js";
import { DISAPPEARED_RUN, observationFromAgentRun } from "./agent-observation.js";
import { createRunBody, createsThread } from "./agent-run-request.js";
import { findLaunch } from "./agent-run-search.js";
import type { AgentServerConfig } from "./agent-servers.js";
import { targetProblems } from "./agent-knobs.js";
import { launchContractError } from "../launch-contract.js";
import { launchErrorOfTransport } from "../transport-error.js";

export interface AgentLauncherOptions {
  /** The configured agent servers (see `parseAgentServers`); a target naming another fails to launch. */
  readonly servers: readonly AgentServerConfig[];
  /**
   * The URL a server should call when a run ends (punctual's hook route, with the run's secret), or null
   * for none. Asked only for servers that call webhooks. @default no webhook: completion is polled
   */
  readonly hookUrl?: (run: Run, task: Task) => string | null;
  readonly logger?: Logger;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
}

const NEVER_ABORTED: AbortSignalLike = new AbortController().signal;
const UNKNOWN: { readonly kind: "unknown" } = { kind: "unknown" };

export class AgentLauncher implements RunLauncher {
  readonly #servers: ReadonlyMap<string, AgentServerConfig>;
  readonly #hookUrl: (run: Run, task: Task) => string | null;
  readonly #fetch: FetchLike;
  readonly #log: Logger;

  constructor(options: AgentLauncherOptions) {
    this.#servers = new Map(options.servers.map((server) => [server.name, server]));
    this.#hookUrl = options.hookUrl ?? (() => null);
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#log = options.logger ?? silentLogger;
  }

  /** The names `agent` targets may use (the service refuses others at create). */
  get serverNames(): ReadonlySet<string> {
    return new Set(this.#servers.keys());
  }

  /**
   * What a task's agent target would send that its server's flavor refuses or drops (the service refuses
   * the task at create and edit). An unknown server is the service's own check.
   */
  targetProblems(target: AgentTarget): FieldError[] {
    const server = this.#servers.get(target.server);
    return server === undefined ? [] : targetProblems(server.flavor, server.knobs, target);
  }

  /** How often a run of `task` should be polled (its server's `poll_interval_ms`); null if not agent. */
  pollIntervalMs(task: Task): number | null {
    if (task.target.kind !== "agent") return null;
    return this.#servers.get(task.target.server)?.pollIntervalMs ?? null;
  }

  /**
   * docs/semantics.md#launch: an uncertain launch is searched for once its request can no longer be in flight, that is
   * after its server's request timeout. Undefined when the task names no configured agent server.
   */
  reconcileDelayMs(task: Task): number | undefined {
    if (task.target.kind !== "agent") return undefined;
    return this.#servers.get(task.target.server)?.requestTimeoutMs;
  }

  /** Agent runs are watched: the server is the source of truth for completion (docs/semantics.md#completion). */
  watches(task: Task): boolean {
    return task.target.kind === "agent";
  }

  async launch({ run, task, signal, traceHeaders }: LaunchRequest): Promise<LaunchedRun> {
    try {
      const { server, target } = this.#resolve(task);
      if (signal.aborted) {
        throw new LaunchFailedError("the launch was aborted before the agent server was called", {
          cause: signal.reason,
        });
      }
      const webhook = server.webhooks ? this.#hookUrl(run, task) : null;
      const body = createRunBody({ server, target, run, task, webhook, traceHeaders });
      const path = agentPath("threads", run.threadId, "runs");
      let reply: AgentReply;
      try {
        reply = await this.#request(server, "POST", path, signal, body);
      } catch (error) {
        throw launchErrorOfTransport(error, `agent server "${server.name}"`);
      }
      if (isSuccess(reply)) return launchedFrom(reply, server.name, run.threadId);
      const error = launchError(reply, server.name);
      if (
        error instanceof ThreadBusyError &&
        reply.status === 422 &&
        !createsThread(server, task)
      ) {
        throw await this.#busyOrMissing(server, run, error, signal);
      }
      throw error;
    } catch (error) {
      throw launchContractError(error, "agent");
    }
  }

  /**
   * docs/semantics.md#launch: the servers have no idempotency key, so an uncertain launch is looked for by the metadata
   * punctual tagged it with (agent-run-search.ts). Found, or unknown (never absent: no server can prove
   * that a request it may still be carrying out will not create the run). Never launches.
   */
  async reconcile(run: Run, task: Task, signal: AbortSignalLike): Promise<ReconcileFinding> {
    try {
      return await this.#search(this.#resolve(task).server, run, signal);
    } catch (error) {
      this.#log.warn({ err: error, runId: run.id }, "could not search the agent server for a run");
      return UNKNOWN;
    }
  }

  /** How the run is doing on its server; a run the server no longer knows was rolled back or deleted. */
  async observe(run: Run, task: Task, signal: AbortSignalLike): Promise<RunObservation> {
    if (run.targetRunId === null) return UNKNOWN;
    try {
      const { server } = this.#resolve(task);
      const path = agentPath("threads", run.threadId, "runs", run.targetRunId);
      const reply = await this.#request(server, "GET", path, signal);
      if (reply.status === 404) return DISAPPEARED_RUN;
      if (isSuccess(reply)) return observationFromAgentRun(reply.body);
      this.#log.warn(
        { runId: run.id, status: reply.status, detail: detailOf(reply) },
        "the agent server did not say how a run is doing",
      );
    } catch (error) {
      this.#log.warn({ err: error, runId: run.id }, "could not ask the agent server about a run");
    }
    return UNKNOWN;
  }

  /**
   * Interrupts the run (`action=interrupt`, which keeps the thread's progress; `wait` is left out because
   * the JS server reads any value as true). A run launched uncertainly is found first. Never throws.
   */
  async cancel(run: Run, task: Task): Promise<void> {
    try {
      const { server } = this.#resolve(task);
      let targetRunId = run.targetRunId;
      if (targetRunId === null) {
        const finding = await this.#search(server, run, NEVER_ABORTED);
        targetRunId = finding.kind === "found" ? finding.targetRunId : null;
      }
      if (targetRunId === null) {
        this.#log.info({ runId: run.id }, "no run to cancel on the agent server");
        return;
      }
      const path = `${agentPath("threads", run.threadId, "runs", targetRunId, "cancel")}?action=interrupt`;
      const reply = await this.#request(server, "POST", path, NEVER_ABORTED);
      if (isSuccess(reply)) return;
      this.#log[reply.status === 404 ? "info" : "warn"](
        { runId: run.id, targetRunId, status: reply.status, detail: detailOf(reply) },
        reply.status === 404
          ? "the run to cancel is already gone from the agent server"
          : "the agent server refused to cancel a run",
      );
    } catch (error) {
      this.#log.warn(
        { err: error, runId: run.id },
        "could not ask the agent server to cancel a run",
      );
    }
  }

  /**
   * docs/targets.md#langgraph-crons: a fresh thread whose target says `on_run_completed: "delete"` is
   * deleted once its run has ended (a reused thread never is). Never throws.
   */
  async ended(run: Run, task: Task): Promise<void> {
    const target = task.target;
    if (target.kind !== "agent" || target.onRunCompleted !== "delete") return;
    if (task.context.mode !== "fresh_thread_per_run") return;
    try {
      const { server } = this.#resolve(task);
      const path = agentPath("threads", run.threadId);
      const reply = await this.#request(server, "DELETE", path, NEVER_ABORTED);
      if (isSuccess(reply) || reply.status === 404) return;
      this.#log.warn(
        { runId: run.id, threadId: run.threadId, status: reply.status, detail: detailOf(reply) },
        "the agent server refused to delete a run's thread",
      );
    } catch (error) {
      this.#log.warn(
        { err: error, runId: run.id, threadId: run.threadId },
        "could not ask the agent server to delete a run's thread",
      );
    }
  }

  /** @throws LaunchFailedError when the task is not an agent task or names an unknown server */
  #resolve(task: Task): { server: AgentServerConfig; target: AgentTarget } {
    const target = task.target;
    if (target.kind !== "agent") {
      throw new LaunchFailedError(`a ${target.kind} task is not an agent task`);
    }
    const server = this.#servers.get(target.server);
    if (server === undefined) {
      throw new LaunchFailedError(`no agent server named "${target.server}" is configured`);
    }
    return { server, target };
  }

  #request(
    server: AgentServerConfig,
    method: "GET" | "POST" | "DELETE",
    path: string,
    signal: AbortSignalLike,
    body?: unknown,
  ): Promise<AgentReply> {
    return agentExchange({
      server,
      method,
      path,
      signal,
      fetch: this.#fetch,
      ...(body === undefined ? {} : { body }),
    });
  }

  /**
   * The JS server also answers "already running" when the thread does not exist (docs/targets.md#launch-busy-threads-and-uncertain-launches), which
   * would leave the run waiting for a thread that will never free: a missing thread is a certain failure.
   */
  async #busyOrMissing(
    server: AgentServerConfig,
    run: Run,
    busy: ThreadBusyError,
    signal: AbortSignalLike,
  ): Promise<Error> {
    try {
      const reply = await this.#request(server, "GET", agentPath("threads", run.threadId), signal);
      if (reply.status !== 404) return busy;
    } catch {
      return busy;
    }
    return new LaunchFailedError(
      `thread ${run.threadId} does not exist on agent server "${server.name}"`,
      { cause: busy.cause },
    );
  }

  /** The launch of this attempt of `run`, found by punctual's metadata: found or unknown, never absent. */
  #search(server: AgentServerConfig, run: Run, signal: AbortSignalLike): Promise<ReconcileFinding> {
    return findLaunch({
      server,
      run,
      signal,
      request: (method, path, requestSignal, body) =>
        this.#request(server, method, path, requestSignal, body),
    });
  }
}

function isSuccess(reply: AgentReply): boolean {
  return reply.status >= 200 && reply.status < 300;
}
