/**
 * What an agent server's Run object says about a run (docs/semantics.md#completion): `pending|running` still active,
 * `success` succeeded, `error|timeout` failed, `interrupted|rollback` cancelled. The same reading serves
 * the polled `GET /threads/{t}/runs/{r}` and the run webhook's payload (the Run object with its terminal
 * `status` and an `error` text). Pure: no I/O, never throws.
 */
import type { RunObservation } from "../../../domain/ports/run-launcher.js";
import type { CompletionVerdict } from "../../../domain/run-change.js";
import { PUNCTUAL_METADATA } from "./agent-run-request.js";

/** The verdict for a run the server no longer knows: `rollback` deletes a run and its checkpoints. */
export const DISAPPEARED_RUN: RunObservation = {
  kind: "finished",
  verdict: {
    status: "cancelled",
    error: "the run disappeared from the agent server (rolled back or deleted)",
  },
};

const UNKNOWN: RunObservation = { kind: "unknown" };
const ACTIVE: RunObservation = { kind: "active" };
/** The server's error text is kept, shortened: a stack trace is not a run's error field. */
const ERROR_CHARS = 1000;

/**
 * Reads an agent Run object (polled, or the payload of the server's run webhook) as an observation.
 * Anything that is not a Run object with a known `status` is `unknown`.
 *
 * @example observationFromAgentRun({ run_id: "...", status: "error", error: "ValueError: ..." })
 *   // { kind: "finished", verdict: { status: "failed", error: "the agent run failed: ValueError: ..." } }
 */
export function observationFromAgentRun(body: unknown): RunObservation {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return UNKNOWN;
  const { status, error } = body as { status?: unknown; error?: unknown };
  const reason = typeof error === "string" && error.trim() !== "" ? shorten(error.trim()) : null;
  const finished = (verdict: CompletionVerdict["status"], what: string): RunObservation => ({
    kind: "finished",
    verdict: { status: verdict, error: reason === null ? what : `${what}: ${reason}` },
  });
  switch (status) {
    case "pending":
    case "running":
      return ACTIVE;
    case "success":
      return { kind: "finished", verdict: { status: "succeeded" } };
    case "error":
      return finished("failed", "the agent run failed (status error)");
    case "timeout":
      return finished("failed", "the agent server timed the run out (status timeout)");
    case "interrupted":
      return finished("cancelled", "the agent run was interrupted (status interrupted)");
    case "rollback":
      return finished("cancelled", "the agent run was rolled back (status rollback)");
    default:
      return UNKNOWN;
  }
}

/** Which run a Run object (or run webhook payload) is about: the server's ids and punctual's run id. */
export interface AgentRunRef {
  readonly targetRunId: string;
  readonly threadId: string | null;
  /** `metadata.punctual_run_id`, when punctual launched the run. */
  readonly punctualRunId: string | null;
}

/**
 * The identity of a Run object, or null when it names no run. A hook route uses it to find the punctual
 * run a webhook is about and to check it is the run punctual launched (`target_run_id`).
 */
export function agentRunRefOf(body: unknown): AgentRunRef | null {
  if (typeof body !== "object" || body === null) return null;
  const { run_id, thread_id, metadata } = body as Record<string, unknown>;
  if (typeof run_id !== "string" || run_id === "") return null;
  const tagged =
    typeof metadata === "object" && metadata !== null
      ? (metadata as Record<string, unknown>)[PUNCTUAL_METADATA.runId]
      : undefined;
  return {
    targetRunId: run_id,
    threadId: typeof thread_id === "string" ? thread_id : null,
    punctualRunId: typeof tagged === "string" ? tagged : null,
  };
}

function shorten(text: string): string {
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS)}...` : text;
}
