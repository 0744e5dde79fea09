/**
 * Whether a thread a task wants to reuse exists (docs/semantics.md#tasks, docs/security.md). Agent threads live on their server and are
 * asked for; a thread tagged for another punctual owner (`metadata.punctual_owner`) reads as not found,
 * so one owner cannot probe another's. Threads of handler and webhook targets are punctual's own labels.
 */
import type { Logger } from "../../../application/events/logger.js";
import { silentLogger } from "../../../application/events/logger.js";
import type { OwnerId, ThreadId } from "../../../domain/ids.js";
import type { ThreadLookup } from "../../../domain/ports/thread-lookup.js";
import type { FetchLike } from "./agent-http.js";
import { agentExchange, agentPath, messageOf } from "./agent-http.js";
import { detailOf } from "./agent-launch-reply.js";
import { PUNCTUAL_METADATA } from "./agent-run-request.js";
import type { AgentServerConfig } from "./agent-servers.js";
import { TargetUnavailableError } from "../../../domain/errors.js";

export interface AgentThreadLookupOptions {
  readonly servers: readonly AgentServerConfig[];
  readonly logger?: Logger;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
}

const AGENT_SCOPE_PREFIX = "agent:";
const NEVER_ABORTED = new AbortController().signal;
/**
 * Answers that mean "no such thread": 404, and the refusal of an id that cannot be a thread (422 from
 * langgraph-api, 400 from the JS server's validator).
 */
const NOT_A_THREAD = new Set([400, 404, 422]);

export class AgentThreadLookup implements ThreadLookup {
  readonly #servers: ReadonlyMap<string, AgentServerConfig>;
  readonly #fetch: FetchLike;
  readonly #log: Logger;

  constructor(options: AgentThreadLookupOptions) {
    this.#servers = new Map(options.servers.map((server) => [server.name, server]));
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#log = options.logger ?? silentLogger;
  }

  /**
   * True when `owner` may run tasks on the thread. Unknown agent servers have no threads.
   * @throws TargetUnavailableError when the server cannot be asked or answers unexpectedly (503, not
   *   a missing thread)
   */
  async threadExists(owner: OwnerId, threadScope: string, threadId: ThreadId): Promise<boolean> {
    if (!threadScope.startsWith(AGENT_SCOPE_PREFIX)) return true;
    const name = threadScope.slice(AGENT_SCOPE_PREFIX.length);
    const server = this.#servers.get(name);
    if (server === undefined) return false;
    const asking = `asking agent server "${name}" for thread ${threadId}`;
    let reply;
    try {
      reply = await agentExchange({
        server,
        method: "GET",
        path: agentPath("threads", threadId),
        signal: NEVER_ABORTED,
        fetch: this.#fetch,
      });
    } catch (error) {
      throw new TargetUnavailableError(`${asking} failed: ${messageOf(error)}`, { cause: error });
    }
    if (NOT_A_THREAD.has(reply.status)) return false;
    if (reply.status < 200 || reply.status >= 300) {
      const detail = detailOf(reply);
      throw new TargetUnavailableError(
        `${asking}: it answered ${reply.status}${detail === "" ? "" : `: ${detail}`}`,
      );
    }
    const body = reply.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new TargetUnavailableError(
        `${asking}: it answered ${reply.status} without a thread object`,
      );
    }
    const metadata = (body as { metadata?: unknown }).metadata;
    const tagged =
      typeof metadata === "object" && metadata !== null
        ? (metadata as Record<string, unknown>)[PUNCTUAL_METADATA.owner]
        : undefined;
    if (typeof tagged === "string" && tagged !== owner) {
      this.#log.debug({ threadId, server: name }, "a thread of another owner reads as not found");
      return false;
    }
    return true;
  }
}
