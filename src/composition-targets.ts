/**
 * The composition root's target wiring: one launcher per target kind behind a router, the thread lookup,
 * and the callback URLs targets are handed (docs/semantics.md#launch, docs/semantics.md#completion, docs/semantics.md#cancellation). Configuration comes from the options, else
 * the environment: `PUNCTUAL_AGENT_SERVERS`, `PUNCTUAL_WEBHOOK_ALLOW`, `PUNCTUAL_WEBHOOK_SECRET`,
 * `PUNCTUAL_PUBLIC_URL`.
 */
import {
  agentHookUrl,
  completionUrl,
  publicBaseUrl,
} from "./adapters/callbacks/callback-tokens.js";
import { AgentLauncher } from "./adapters/launchers/agent/agent-launcher.js";
import { parseAgentServers } from "./adapters/launchers/agent/agent-servers.js";
import type { AgentServerConfig } from "./adapters/launchers/agent/agent-servers.js";
import { AgentThreadLookup } from "./adapters/launchers/agent/agent-threads.js";
import { parseAllowList } from "./adapters/launchers/webhook/address-guard.js";
import { WebhookLauncher } from "./adapters/launchers/webhook/webhook-launcher.js";
import type { Logger } from "./application/events/logger.js";
import type { RunLauncher } from "./domain/ports/run-launcher.js";
import type { ThreadLookup } from "./domain/ports/thread-lookup.js";
import type { FieldError } from "./domain/errors.js";
import type { AgentTarget, TargetKind, WebhookTarget } from "./domain/target.js";
import type { Task } from "./domain/task.js";

export interface TargetOptions {
  /** Launchers for `agent` and `webhook` targets, replacing the built-in ones. */
  readonly launchers?: { readonly agent?: RunLauncher; readonly webhook?: RunLauncher };
  /** The agent servers `agent` targets may name. @default parsed from $PUNCTUAL_AGENT_SERVERS */
  readonly agentServers?: readonly AgentServerConfig[];
  /**
   * Hosts or IP addresses webhooks may call over plain http and at loopback, private or link-local
   * addresses (docs/security.md); replaced by `launchers.webhook`. @default $PUNCTUAL_WEBHOOK_ALLOW (comma-separated)
   */
  readonly webhookAllow?: readonly string[];
  /** Signs every webhook with this secret instead of each task's own. @default $PUNCTUAL_WEBHOOK_SECRET */
  readonly webhookSecret?: string;
  /**
   * Where targets reach this punctual's callback routes (`completion_url`, agent run webhooks), e.g.
   * `https://punctual.example.com`. @default $PUNCTUAL_PUBLIC_URL; `serve` falls back to its own address
   */
  readonly publicUrl?: string;
  readonly threads?: ThreadLookup;
}

/** The base URL of the callback routes; `serve` sets it once listening when nothing was configured. */
export class CallbackBase {
  #url: string | null;

  constructor(url: string | null) {
    this.#url = url === null ? null : publicBaseUrl(url);
  }

  get url(): string | null {
    return this.#url;
  }

  /** Sets the URL unless one was configured. */
  fallBackTo(url: string): void {
    this.#url ??= publicBaseUrl(url);
  }
}

export interface Targets {
  readonly launcher: RunLauncher;
  readonly threads: ThreadLookup;
  /** Agent server names a task may name; null when a custom agent launcher decides. */
  readonly agentServers: ReadonlySet<string> | null;
  /** What an agent target would send that its server refuses; null when a custom launcher decides. */
  readonly agentTargetProblems: ((target: AgentTarget) => readonly FieldError[]) | null;
  /** What the SSRF guard refuses in a webhook target before any lookup; null with a custom launcher. */
  readonly webhookTargetProblems: ((target: WebhookTarget) => readonly FieldError[]) | null;
  /** The configured agent servers. */
  readonly agentServerConfigs: readonly AgentServerConfig[];
  /** Target kinds whose running runs are polled, and how often. */
  readonly watched: readonly TargetKind[];
  readonly pollIntervalMs: number | null;
  /** Whether webhooks are signed with each task's own secret (no server-wide one). */
  readonly signsWithTaskSecret: boolean;
  readonly callbackBase: CallbackBase;
}

/** Builds the launchers other than the handler one and routes runs to them by target kind. */
export function buildTargets(
  options: TargetOptions,
  handler: RunLauncher,
  logger: Logger,
): Targets {
  const env = process.env;
  const callbackBase = new CallbackBase(options.publicUrl ?? nonEmpty(env["PUNCTUAL_PUBLIC_URL"]));
  const servers =
    options.agentServers ??
    (nonEmpty(env["PUNCTUAL_AGENT_SERVERS"]) === null
      ? []
      : parseAgentServers(env["PUNCTUAL_AGENT_SERVERS"] ?? "", env));
  const secret = options.webhookSecret ?? nonEmpty(env["PUNCTUAL_WEBHOOK_SECRET"]) ?? undefined;
  const webhook =
    options.launchers?.webhook ??
    new WebhookLauncher({
      allow: options.webhookAllow ?? parseAllowList(env["PUNCTUAL_WEBHOOK_ALLOW"]),
      ...(secret === undefined ? {} : { secret }),
      completionUrl: (run, task) =>
        callbackBase.url === null
          ? null
          : completionUrl(callbackBase.url, run.id, task.webhookSecret),
      logger,
    });
  const agent =
    options.launchers?.agent ??
    (servers.length === 0
      ? undefined
      : new AgentLauncher({
          servers,
          hookUrl: (run, task) =>
            callbackBase.url === null || task.target.kind !== "agent"
              ? null
              : agentHookUrl(callbackBase.url, task.target.server, run.id, task.webhookSecret),
          logger,
        }));
  const threads =
    options.threads ??
    (servers.length === 0 ? localThreads : new AgentThreadLookup({ servers, logger }));
  const polls = servers.map((server) => server.pollIntervalMs);
  return {
    launcher: new RoutingLauncher(handler, { webhook, ...(agent === undefined ? {} : { agent }) }),
    threads,
    agentServers:
      options.launchers?.agent === undefined ? new Set(servers.map((s) => s.name)) : null,
    agentTargetProblems:
      agent instanceof AgentLauncher ? (target) => agent.targetProblems(target) : null,
    webhookTargetProblems:
      webhook instanceof WebhookLauncher ? (target) => webhook.targetProblems(target) : null,
    agentServerConfigs: servers,
    watched: agent === undefined ? [] : ["agent"],
    pollIntervalMs: polls.length === 0 ? null : Math.min(...polls),
    signsWithTaskSecret: secret === undefined,
    callbackBase,
  };
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === "" ? null : value;
}

/** Routes each run to the launcher of its target kind. */
class RoutingLauncher implements RunLauncher {
  constructor(
    readonly handler: RunLauncher,
    readonly others: { readonly agent?: RunLauncher; readonly webhook?: RunLauncher },
  ) {}

  #for(task: Task): RunLauncher | undefined {
    const kind = task.target.kind;
    return kind === "handler" ? this.handler : this.others[kind];
  }

  launch: RunLauncher["launch"] = (request) => {
    const launcher = this.#for(request.task);
    if (launcher === undefined) {
      return Promise.reject(new Error(`no launcher for ${request.task.target.kind} targets`));
    }
    return launcher.launch(request);
  };

  /** Handler runs start at once in this process; other targets are launched and waited for. */
  startNow: NonNullable<RunLauncher["startNow"]> = (request) =>
    request.task.target.kind === "handler" ? (this.handler.startNow?.(request) ?? null) : null;

  cancel: RunLauncher["cancel"] = async (run, task) => {
    await this.#for(task)?.cancel(run, task);
  };

  reconcile: RunLauncher["reconcile"] = async (run, task, signal) => {
    const launcher = this.#for(task);
    return launcher === undefined ? { kind: "unknown" } : launcher.reconcile(run, task, signal);
  };

  watches = (task: Task): boolean => this.#for(task)?.watches?.(task) ?? false;

  observe: NonNullable<RunLauncher["observe"]> = async (run, task, signal) => {
    const launcher = this.#for(task);
    if (launcher?.observe === undefined) return { kind: "unknown" };
    return launcher.observe(run, task, signal);
  };

  reconcileDelayMs = (task: Task): number | undefined => this.#for(task)?.reconcileDelayMs?.(task);

  ended: NonNullable<RunLauncher["ended"]> = async (run, task) => {
    await this.#for(task)?.ended?.(run, task);
  };
}

/** Threads of handler and webhook targets are punctual's own labels: any well-formed id is usable. */
const localThreads: ThreadLookup = {
  threadExists: (_owner, scope) => Promise.resolve(!scope.startsWith("agent:")),
};
