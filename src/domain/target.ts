/**
 * Targets (where a run is launched) and execution contexts (which thread it runs on), docs/semantics.md#words, docs/semantics.md#tasks.
 * Thread identity is `(thread_scope, thread_id)`: the scope is the agent server's name, or the target kind
 * and the task's owner (docs/semantics.md#threads).
 */
import type { OwnerId, ThreadId } from "./ids.js";

export const TARGET_KINDS = ["agent", "webhook", "handler"] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** A JSON value as it travels in `input` and `result`. */
export type JsonValue =
  null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** LangGraph's RunnableConfig overrides a task may send with its runs (`target.config`). */
export interface AgentRunConfig {
  readonly configurable?: Readonly<Record<string, JsonValue>>;
  readonly recursionLimit?: number;
  readonly tags?: readonly string[];
}

export interface AgentTarget {
  readonly kind: "agent";
  /** The name of a configured agent server. */
  readonly server: string;
  readonly assistantId: string;
  readonly input: JsonValue;
  /** Overrides of the server's default run config; absent on tasks stored before they existed. */
  readonly config?: AgentRunConfig;
  /** Static runtime context (LangGraph `context`, DeerFlow's `model_name`, ...), over the server's. */
  readonly context?: Readonly<Record<string, JsonValue>>;
  /** Metadata put on each run, under punctual's own keys (a LangGraph cron's `metadata`). */
  readonly metadata?: Readonly<Record<string, JsonValue>>;
  /**
   * What becomes of a fresh thread once its run has ended (docs/targets.md#langgraph-crons): `delete`
   * deletes it on the server, `keep` (the default; absent on tasks stored before it existed) keeps it.
   * A reused thread is always kept.
   */
  readonly onRunCompleted?: OnRunCompleted;
}

export const ON_RUN_COMPLETED = ["keep", "delete"] as const;
export type OnRunCompleted = (typeof ON_RUN_COMPLETED)[number];

export const WEBHOOK_METHODS = ["POST", "PUT", "PATCH"] as const;
export type WebhookMethod = (typeof WEBHOOK_METHODS)[number];

/**
 * How a webhook request is signed (docs/targets.md#verifying-a-signature): `punctual` (the
 * `Punctual-Signature` header) or `standard_webhooks` (the `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` headers of the Standard Webhooks specification).
 */
export const WEBHOOK_SIGNATURES = ["punctual", "standard_webhooks"] as const;
export type WebhookSignature = (typeof WEBHOOK_SIGNATURES)[number];

export interface WebhookTarget {
  readonly kind: "webhook";
  readonly url: string;
  readonly method: WebhookMethod;
  readonly headers: Readonly<Record<string, string>>;
  readonly input: JsonValue;
  readonly cancelUrl: string | null;
  /** The receiver dedupes by `Idempotency-Key`, so an uncertain launch may be re-sent. */
  readonly idempotent: boolean;
  /** The signature format; absent (`punctual`) on tasks stored before it existed. */
  readonly signature?: WebhookSignature;
}

export interface HandlerTarget {
  readonly kind: "handler";
  /** A handler name registered with the server or library. */
  readonly name: string;
  readonly input: JsonValue;
}

export type Target = AgentTarget | WebhookTarget | HandlerTarget;

export const CONTEXT_MODES = ["fresh_thread_per_run", "reuse_thread"] as const;
export type ContextMode = (typeof CONTEXT_MODES)[number];

export type ExecutionContext =
  | { readonly mode: "fresh_thread_per_run" }
  | { readonly mode: "reuse_thread"; readonly threadId: ThreadId };

/** Thread ids: letters, digits, `_`, `-` and `.`, 1-128 characters, not `.` or `..`. */
export const THREAD_ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,128}$/;

/**
 * The scope a target's threads live in (docs/semantics.md#threads): `agent:<server>` for an agent
 * (its threads are the server's, guarded there by their `punctual_owner`), `webhook:<owner>` or
 * `handler:<owner>` otherwise, so that two owners naming one `reuse_thread` label never share a thread.
 */
export function threadScopeOf(target: Target, owner: OwnerId): string {
  return target.kind === "agent" ? `agent:${target.server}` : `${target.kind}:${owner}`;
}
