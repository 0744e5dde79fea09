/**
 * The references a task names that the domain cannot see (docs/architecture.md#task-mutation): the
 * handler a handler target names, the agent server an agent target names (and what it would refuse),
 * and the thread a `reuse_thread` context binds. Checked before anything is written.
 */
import { NotFoundError, ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import type { ThreadLookup } from "../../domain/ports/thread-lookup.js";
import { threadScopeOf } from "../../domain/target.js";
import type { AgentTarget, JsonValue, WebhookTarget } from "../../domain/target.js";
import type { TaskUserFields } from "../../domain/task.js";
import type { Actor } from "../access/actor.js";

/** What the service knows exists (a null set is not checked). */
export interface KnownReferences {
  readonly threads: ThreadLookup;
  readonly handlerNames: ReadonlySet<string> | null;
  /**
   * The handler names the live replicas registered (docs/deploy.md#handler-names), asked only for a
   * name `handlerNames` lacks. @default none
   */
  readonly registeredHandlerNames?: (() => Promise<ReadonlySet<string>>) | null;
  /** What a typed handler's schema finds wrong with a target's input (fields under `target.input`). */
  readonly handlerInputProblems?:
    ((name: string, input: JsonValue) => Promise<readonly FieldError[]>) | null;
  readonly agentServers: ReadonlySet<string> | null;
  readonly agentTargetProblems?: ((target: AgentTarget) => readonly FieldError[]) | null;
  /** What the SSRF guard refuses in a webhook target before any DNS lookup (docs/targets.md#ssrf-protection). */
  readonly webhookTargetProblems?: ((target: WebhookTarget) => readonly FieldError[]) | null;
}

/** Whether a handler target may name `name`: this process's, an operator-given or a registered one. */
async function handlerKnown(known: KnownReferences, name: string): Promise<boolean> {
  if (known.handlerNames === null || known.handlerNames.has(name)) return true;
  const registered = await known.registeredHandlerNames?.();
  return registered?.has(name) ?? false;
}

/**
 * Handler names, agent servers and bound threads must exist, and a typed handler's input must pass its
 * schema (docs/library.md#typed-handlers), before anything is written: `changed` is
 * what an edit (or a create) sets, `merged` the task as it would be.
 * @throws validation_failed naming the field, or not_found for a bound thread that does not exist
 */
export async function checkReferences(
  known: KnownReferences,
  actor: Actor,
  changed: Partial<TaskUserFields>,
  merged: TaskUserFields,
): Promise<void> {
  const target = changed.target;
  if (target?.kind === "handler" && !(await handlerKnown(known, target.name))) {
    throw ValidationError.of(
      "target.name",
      `no handler named "${target.name}" is registered: this process does not run it and no live ` +
        "worker registered it (an API-only process may also be given the workers' handlers with " +
        "--handler-names or PUNCTUAL_HANDLER_NAMES)",
    );
  }
  if (target?.kind === "handler" && known.handlerInputProblems) {
    const problems = await known.handlerInputProblems(target.name, target.input);
    if (problems.length > 0) throw new ValidationError(problems);
  }
  if (
    target?.kind === "agent" &&
    known.agentServers !== null &&
    !known.agentServers.has(target.server)
  ) {
    throw ValidationError.of(
      "target.server",
      `no agent server named "${target.server}" is configured`,
    );
  }
  const problems =
    target?.kind === "agent"
      ? known.agentTargetProblems?.(target)
      : target?.kind === "webhook"
        ? known.webhookTargetProblems?.(target)
        : undefined;
  if (problems !== undefined && problems.length > 0) throw new ValidationError(problems);
  const context = merged.context;
  const moved = changed.context !== undefined || changed.target !== undefined;
  if (moved && context.mode === "reuse_thread") {
    const exists = await known.threads.threadExists(
      actor.owner,
      threadScopeOf(merged.target, actor.owner),
      context.threadId,
    );
    if (!exists) throw new NotFoundError("thread", context.threadId);
  }
}
