/**
 * The references a task names that the domain cannot see (docs/architecture.md#task-mutation): the
 * handler a handler target names, the agent server an agent target names (and what it would refuse),
 * and the thread a `reuse_thread` context binds. Checked before anything is written.
 */
import { NotFoundError, ValidationError } from "../../domain/errors.js";
import type { FieldError } from "../../domain/errors.js";
import type { ThreadLookup } from "../../domain/ports/thread-lookup.js";
import { threadScopeOf } from "../../domain/target.js";
import type { AgentTarget, JsonValue } from "../../domain/target.js";
import type { TaskUserFields } from "../../domain/task.js";
import type { Actor } from "../access/actor.js";

/** What the service knows exists (a null set is not checked). */
export interface KnownReferences {
  readonly threads: ThreadLookup;
  readonly handlerNames: ReadonlySet<string> | null;
  /** What a typed handler's schema finds wrong with a target's input (fields under `target.input`). */
  readonly handlerInputProblems?:
    ((name: string, input: JsonValue) => Promise<readonly FieldError[]>) | null;
  readonly agentServers: ReadonlySet<string> | null;
  readonly agentTargetProblems?: ((target: AgentTarget) => readonly FieldError[]) | null;
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
  if (
    target?.kind === "handler" &&
    known.handlerNames !== null &&
    !known.handlerNames.has(target.name)
  ) {
    throw ValidationError.of("target.name", `no handler named "${target.name}" is registered`);
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
  const problems = target?.kind === "agent" ? known.agentTargetProblems?.(target) : undefined;
  if (problems !== undefined && problems.length > 0) throw new ValidationError(problems);
  const context = merged.context;
  const moved = changed.context !== undefined || changed.target !== undefined;
  if (moved && context.mode === "reuse_thread") {
    const exists = await known.threads.threadExists(
      actor.owner,
      threadScopeOf(merged.target),
      context.threadId,
    );
    if (!exists) throw new NotFoundError("thread", context.threadId);
  }
}
