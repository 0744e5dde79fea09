/**
 * Finding an uncertain launch on its agent server (docs/semantics.md#launch, docs/targets.md#uncertain-launches). The
 * servers have no idempotency key and let no client choose a run id, so a launch is **found** only by a
 * run that carries punctual's own marks (`punctual_run_id`, the idempotency key and the attempt) on the
 * thread punctual chose. Nothing here ever concludes that a launch is absent: listings may be ordered
 * either way, ignore `offset`, cap their size or stop after a page, and a request the server received
 * but has not carried out yet leaves no trace at all. What is not found is unknown, asked again later.
 */
import type { AbortSignalLike } from "../../../domain/abort.js";
import type { Run } from "../../../domain/run.js";
import type { ReconcileFinding } from "../../../domain/run-change.js";
import type { Instant } from "../../../domain/time.js";
import type { AgentReply } from "./agent-http.js";
import { agentPath } from "./agent-http.js";
import { agentRunRefOf } from "./agent-observation.js";
import { isLaunchOf, PUNCTUAL_METADATA } from "./agent-run-request.js";
import type { AgentServerConfig } from "./agent-servers.js";

/** One request to the run's server; transport failures throw `TransportError`. */
export type AgentRequest = (
  method: "GET" | "POST",
  path: string,
  signal: AbortSignalLike,
  body?: unknown,
) => Promise<AgentReply>;

export interface LaunchSearch {
  readonly server: AgentServerConfig;
  readonly run: Run;
  readonly signal: AbortSignalLike;
  readonly request: AgentRequest;
}

/** Run objects a source showed, or null when the server would not show them (not an answer). */
type Source = (search: LaunchSearch) => Promise<readonly unknown[] | null>;

const PAGE_SIZE = 100;
/** Pages read after the first, when the server pages at all: bounded work for each question. */
const MORE_PAGES = 4;
/** Checkpoints of the history search, and runs they name that are fetched. */
const HISTORY_LIMIT = 10;
const HISTORY_RUNS = 3;
const UNKNOWN: ReconcileFinding = { kind: "unknown" };

/**
 * Where a launch can show up, cheapest and likeliest first. DeerFlow's listing takes no query at all
 * (always its newest 100 runs), so it has the one source; the LangGraph servers also filter by status
 * (under `reject` a thread has at most one active run), search the thread's checkpoints by metadata (a
 * run that started wrote one, tagged with the run's metadata and id), and page.
 */
const SOURCES: Readonly<Record<AgentServerConfig["flavor"], readonly Source[]>> = {
  deerflow: [firstPage],
  langgraph: [firstPage, byStatus("pending"), byStatus("running"), byCheckpoints, laterPages],
};

/**
 * The launch of `run` (this attempt) on its thread: `found` with the server's run id and creation
 * instant, else `unknown`. Never `absent`.
 * @throws TransportError when the server cannot be reached (for the caller: unknown)
 */
export async function findLaunch(search: LaunchSearch): Promise<ReconcileFinding> {
  for (const source of SOURCES[search.server.flavor]) {
    const listed = await source(search);
    const match = listed?.find((item) => isLaunchOf(item, search.run));
    const ref = match === undefined ? null : agentRunRefOf(match);
    if (ref !== null) {
      return { kind: "found", targetRunId: ref.targetRunId, createdAt: createdAtOf(match) };
    }
  }
  return UNKNOWN;
}

function firstPage(search: LaunchSearch): Promise<readonly unknown[] | null> {
  return listRuns(search, `limit=${PAGE_SIZE}&offset=0`);
}

function byStatus(status: "pending" | "running"): Source {
  return (search) => listRuns(search, `status=${status}&limit=${PAGE_SIZE}`);
}

/**
 * Further pages, for servers that list oldest first and honour `offset`. A page that is short, empty or
 * brings nothing new ends it (the JS server answers `[]` past the first page; others repeat it).
 */
async function laterPages(search: LaunchSearch): Promise<readonly unknown[] | null> {
  const seen = new Set<string>();
  const all: unknown[] = [];
  for (let page = 0; page <= MORE_PAGES; page++) {
    const listed = await listRuns(search, `limit=${PAGE_SIZE}&offset=${page * PAGE_SIZE}`);
    if (listed === null) break;
    let fresh = 0;
    for (const item of listed) {
      const id = agentRunRefOf(item)?.targetRunId;
      if (id === undefined || seen.has(id)) continue;
      seen.add(id);
      fresh++;
      all.push(item);
    }
    if (listed.length < PAGE_SIZE || fresh === 0) break;
  }
  return all;
}

/**
 * The thread's checkpoints whose metadata carries the run's marks (LangGraph copies a run's metadata and
 * its `run_id` into each checkpoint it writes), then the runs they name, read back so that the proof is
 * the run's own metadata.
 */
async function byCheckpoints(search: LaunchSearch): Promise<readonly unknown[] | null> {
  const { run, signal, request } = search;
  const reply = await request("POST", agentPath("threads", run.threadId, "history"), signal, {
    limit: HISTORY_LIMIT,
    metadata: {
      [PUNCTUAL_METADATA.runId]: run.id,
      [PUNCTUAL_METADATA.idempotencyKey]: run.idempotencyKey,
    },
  });
  if (!isSuccess(reply) || !Array.isArray(reply.body)) return null;
  const runIds = new Set<string>();
  for (const state of reply.body as unknown[]) {
    const id = metadataOf(state)?.["run_id"];
    if (typeof id === "string" && id !== "") runIds.add(id);
  }
  const runs: unknown[] = [];
  for (const id of [...runIds].slice(0, HISTORY_RUNS)) {
    const path = agentPath("threads", run.threadId, "runs", id);
    const found = await request("GET", path, signal);
    if (isSuccess(found)) runs.push(found.body);
  }
  return runs;
}

async function listRuns(search: LaunchSearch, query: string): Promise<readonly unknown[] | null> {
  const path = `${agentPath("threads", search.run.threadId, "runs")}?${query}`;
  const reply = await search.request("GET", path, search.signal);
  return isSuccess(reply) && Array.isArray(reply.body) ? (reply.body as unknown[]) : null;
}

function metadataOf(value: unknown): Record<string, unknown> | null {
  if (typeof value !== "object" || value === null) return null;
  const metadata = (value as { metadata?: unknown }).metadata;
  return typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)
    : null;
}

function createdAtOf(listed: unknown): Instant | null {
  const text = (listed as { created_at?: unknown }).created_at;
  if (typeof text !== "string") return null;
  const at = Date.parse(text);
  return Number.isFinite(at) ? (at as Instant) : null;
}

function isSuccess(reply: AgentReply): boolean {
  return reply.status >= 200 && reply.status < 300;
}
