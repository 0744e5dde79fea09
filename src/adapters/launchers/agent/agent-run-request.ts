/**
 * The body of `POST /threads/{thread_id}/runs` (docs/targets.md#agent): the assistant, the
 * input, an explicit `multitask_strategy` (the servers' defaults differ), punctual's metadata (the only
 * way to find a run again: the protocol has no idempotency key) over the target's own, the run's config and context (the
 * server's defaults under the task's own) and, where supported, the run webhook.
 * Only fields every flavor accepts: DeerFlow refuses unknown and unsupported options with 422.
 */
import type { Run } from "../../../domain/run.js";
import type { AgentTarget, JsonValue } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";
import { knobsBody, targetKnobs } from "./agent-knobs.js";
import type { AgentServerConfig } from "./agent-servers.js";

/** Metadata keys punctual puts on every run it launches (docs/semantics.md#launch: the target is told both times). */
export const PUNCTUAL_METADATA = {
  taskId: "punctual_task_id",
  runId: "punctual_run_id",
  owner: "punctual_owner",
  trigger: "punctual_trigger",
  occurrence: "punctual_occurrence",
  fireAt: "punctual_fire_at",
  late: "punctual_late",
  idempotencyKey: "punctual_idempotency_key",
  attempt: "punctual_attempt",
} as const;

export interface CreateRunBody {
  readonly assistant_id: string;
  readonly input: JsonValue;
  readonly multitask_strategy: "reject";
  readonly metadata: Readonly<Record<string, JsonValue>>;
  readonly config?: Readonly<Record<string, JsonValue>>;
  readonly context?: Readonly<Record<string, JsonValue>>;
  readonly if_not_exists?: "create";
  readonly webhook?: string;
}

export interface CreateRunParts {
  readonly server: AgentServerConfig;
  readonly target: AgentTarget;
  readonly run: Run;
  readonly task: Task;
  /** The URL the server should call when the run ends, or null for none. */
  readonly webhook: string | null;
  /** The launch span's `traceparent`/`tracestate`, put in the run's metadata (docs/operations.md#tracing). */
  readonly traceHeaders?: Readonly<Record<string, string>> | undefined;
}

/** Whether this launch lets the server create the thread (fresh threads; DeerFlow always creates). */
export function createsThread(server: AgentServerConfig, task: Task): boolean {
  return server.flavor === "deerflow" || task.context.mode === "fresh_thread_per_run";
}

/**
 * The create-run body. `multitask_strategy` is always `reject`: punctual keeps one run per thread itself
 * (docs/semantics.md#words), so a run active on the thread means someone else's, and the launch must wait (busy).
 */
export function createRunBody(parts: CreateRunParts): CreateRunBody {
  const { server, target, run, task } = parts;
  return {
    assistant_id: target.assistantId,
    input: target.input,
    multitask_strategy: "reject",
    metadata: { ...target.metadata, ...punctualMetadata(run), ...parts.traceHeaders },
    ...knobsBody(targetKnobs(server.knobs, target)),
    ...(createsThread(server, task) ? { if_not_exists: "create" as const } : {}),
    ...(server.webhooks && parts.webhook !== null ? { webhook: parts.webhook } : {}),
  };
}

function punctualMetadata(run: Run): Record<string, JsonValue> {
  const m = PUNCTUAL_METADATA;
  return {
    [m.taskId]: run.taskId,
    [m.runId]: run.id,
    [m.owner]: run.owner,
    [m.trigger]: run.trigger,
    [m.occurrence]: new Date(run.scheduledFor).toISOString(),
    [m.fireAt]: new Date(run.fireAt).toISOString(),
    [m.late]: run.late,
    [m.idempotencyKey]: run.idempotencyKey,
    [m.attempt]: run.attempt,
  };
}

/**
 * Whether a run the server shows is the one punctual launched for this attempt of `run`: punctual's run
 * id, idempotency key and attempt in its metadata, on the run's thread. An earlier attempt's run (one that
 * failed and was retried) is not this launch.
 */
export function isLaunchOf(listed: unknown, run: Run): boolean {
  if (typeof listed !== "object" || listed === null) return false;
  const { metadata, thread_id } = listed as { metadata?: unknown; thread_id?: unknown };
  if (typeof metadata !== "object" || metadata === null) return false;
  if (thread_id !== undefined && thread_id !== run.threadId) return false;
  const tags = metadata as Record<string, unknown>;
  return (
    tags[PUNCTUAL_METADATA.runId] === run.id &&
    tags[PUNCTUAL_METADATA.idempotencyKey] === run.idempotencyKey &&
    tags[PUNCTUAL_METADATA.attempt] === run.attempt
  );
}
