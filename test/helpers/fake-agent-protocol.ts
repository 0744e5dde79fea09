/**
 * What the fake agent server needs to answer like the real ones (shared/reference/agent-server-api.md):
 * the shapes it shows, where the flavors differ (as data rather than branches), DeerFlow's refusals,
 * and the wire helpers.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";

export type FakeFlavor = "python" | "js" | "deerflow";
export type FakeRunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";
/** How every request is answered; `slow` and `drop` do the work first, then answer late or never. */
export type FakeMode =
  | { readonly kind: "normal" }
  | { readonly kind: "slow"; readonly ms: number }
  | { readonly kind: "drop" }
  | { readonly kind: "reply"; readonly status: number; readonly body?: unknown }
  /** Create-run requests are carried out (and answered) only `ms` after they arrive; others normally. */
  | { readonly kind: "slow_create"; readonly ms: number };

/**
 * How `GET /threads/{id}/runs` lists (the servers differ, reference 3 and issue 17): in which order, what
 * `offset` does (`slice`: the JS server's `slice(offset, limit)`, empty past the first page), the largest
 * page, whether `status` filters and `POST /threads/{id}/history` searches checkpoints by metadata.
 */
export interface FakeListing {
  readonly order: "newest" | "oldest";
  readonly offset: "honoured" | "ignored" | "slice";
  readonly maxPage: number;
  readonly defaultLimit: number;
  readonly statusFilter: boolean;
  readonly history: boolean;
}

export interface FakeRun {
  readonly run_id: string;
  readonly thread_id: string;
  readonly assistant_id: string | null;
  status: FakeRunStatus;
  readonly metadata: Record<string, unknown>;
  readonly multitask_strategy: string;
  readonly kwargs: { readonly input: unknown; readonly webhook: string | null };
  readonly created_at: string;
  updated_at: string;
}

export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface FakeWebhookDelivery {
  readonly url: string;
  readonly payload: Record<string, unknown>;
  readonly contentType: string;
  /** The receiver's status, or the delivery's failure. */
  readonly outcome: number | string;
}

export interface Thread {
  readonly thread_id: string;
  readonly metadata: Record<string, unknown>;
  readonly created_at: string;
}

export interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export type Failure = readonly [status: number, detail: string];

/** Where the flavors differ (reference 1.4, 3, 4, 5), as data rather than branches. */
export interface FlavorRules {
  readonly threadId: RegExp;
  readonly defaultStrategy: string;
  readonly busy: (threadId: string) => Failure;
  /** A missing thread under `if_not_exists: reject`; null: the thread is created anyway. */
  readonly missingThread: Failure | null;
  readonly invalidBodyStatus: number;
  /** Errors as plain text (Hono's HTTPException) instead of `{"detail": ...}`. */
  readonly plainErrors: boolean;
  /** Cancelling a run that already ended: 409 (DeerFlow) or a silent 202. */
  readonly cancelEndedStatus: number;
  readonly checksAssistant: boolean;
  readonly webhookContentType: string;
  readonly listing: FakeListing;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BUSY =
  "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.";
const LANGGRAPH = {
  threadId: UUID,
  invalidBodyStatus: 422,
  cancelEndedStatus: 202,
  checksAssistant: true,
};
const PAGING: FakeListing = {
  order: "newest",
  offset: "honoured",
  maxPage: Number.MAX_SAFE_INTEGER,
  defaultLimit: 10,
  statusFilter: true,
  history: true,
};
export const FLAVORS: Readonly<Record<FakeFlavor, FlavorRules>> = {
  python: {
    ...LANGGRAPH,
    defaultStrategy: "enqueue",
    busy: () => [409, BUSY],
    missingThread: [404, "Thread or assistant not found."],
    plainErrors: false,
    webhookContentType: "application/json",
    listing: PAGING,
  },
  // The JS server answers a missing thread with its busy message (reference 1.4) and posts webhooks
  // as a bare string, so their content type is text/plain.
  js: {
    ...LANGGRAPH,
    invalidBodyStatus: 400,
    defaultStrategy: "reject",
    busy: () => [422, BUSY],
    missingThread: [422, BUSY],
    plainErrors: true,
    webhookContentType: "text/plain;charset=UTF-8",
    // Seen on @langchain/langgraph-api 1.5: insertion order, `runs.slice(offset ?? 0, limit ?? 10)`.
    listing: { ...PAGING, order: "oldest", offset: "slice" },
  },
  deerflow: {
    threadId: /^[A-Za-z0-9_-]{1,64}$/,
    defaultStrategy: "reject",
    busy: (t) => [409, `Thread ${t} already has an active run`],
    missingThread: null,
    invalidBodyStatus: 422,
    plainErrors: false,
    cancelEndedStatus: 409,
    checksAssistant: false,
    webhookContentType: "",
    // DeerFlow's `list_runs` takes no query: always its newest 100 runs.
    listing: {
      order: "newest",
      offset: "ignored",
      maxPage: 100,
      defaultLimit: 100,
      statusFilter: false,
      history: false,
    },
  },
};
/** The create-run fields DeerFlow knows (`extra="forbid"`), and those it knows but refuses when set. */
const DEERFLOW_FIELDS = new Set(
  `assistant_id input command metadata config context webhook checkpoint_id checkpoint interrupt_before
  interrupt_after stream_mode stream_subgraphs stream_resumable on_disconnect on_completion
  multitask_strategy after_seconds if_not_exists feedback_keys`.split(/\s+/),
);
const DEERFLOW_UNSUPPORTED = ["webhook", "after_seconds", "feedback_keys", "on_completion"];

/** DeerFlow's 422 for unknown fields and options it does not support (reference 1.4). */
export function deerflowRefusal(body: Record<string, unknown>): Answer | null {
  const refused = (key: string, msg: string): { loc: string[]; msg: string } => ({
    loc: ["body", key],
    msg,
  });
  const set = (key: string): boolean => body[key] !== undefined && body[key] !== null;
  const input = body["input"];
  const detail = [
    ...Object.keys(body)
      .filter((key) => !DEERFLOW_FIELDS.has(key))
      .map((key) => refused(key, "Extra inputs are not permitted")),
    ...DEERFLOW_UNSUPPORTED.filter(set).map((key) =>
      refused(key, `Run option '${key}' is not supported by DeerFlow`),
    ),
    ...(set("if_not_exists") && body["if_not_exists"] !== "create"
      ? [refused("if_not_exists", "Run option 'if_not_exists' is not supported by DeerFlow")]
      : []),
    ...(body["multitask_strategy"] === "enqueue"
      ? [refused("multitask_strategy", "Run option 'multitask_strategy' is not supported")]
      : []),
    ...(input !== undefined && input !== null && !isRecord(input)
      ? [refused("input", "Input should be a valid dictionary")]
      : []),
  ];
  return detail.length === 0 ? null : { status: 422, body: { detail } };
}

/** Writes an answer: a string body as plain text, anything else as JSON. */
export function write(res: ServerResponse, { status, body, headers = {} }: Answer): void {
  const plain = typeof body === "string";
  const type =
    body === undefined ? {} : { "content-type": plain ? "text/plain" : "application/json" };
  res.writeHead(status, { ...headers, ...type });
  res.end(body === undefined ? undefined : plain ? body : JSON.stringify(body));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parse(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function now(): string {
  return new Date().toISOString();
}
