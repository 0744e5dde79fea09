/**
 * What the task and run routes share (docs/api.md): their dependencies, the problem answers every route
 * may give, the `Idempotency-Key` header and the task's ETag.
 */
import type { Actor } from "../../application/access/actor.js";
import type { IdempotencyRepository } from "../../domain/ports/idempotency-repository.js";
import type { TaskService } from "../../application/tasks/task-service.js";
import type { TaskView } from "../../application/shapes/view-mappers.js";
import { PunctualError } from "../../domain/errors.js";
import type { Instant } from "../../domain/time.js";
import { etagOf } from "./route-helpers.js";
import type { HeaderSpec, ResponseSpec } from "./route-spec.js";
import { problemSchema } from "./schemas.js";

export interface TaskRouteDeps {
  readonly tasks: TaskService;
  readonly idempotency: IdempotencyRepository;
  readonly now: () => Instant;
}

export const problem = (description: string): ResponseSpec => ({
  description,
  schema: problemSchema,
});

/** Answers any authenticated route may give. */
export const COMMON = {
  401: problem("no or bad bearer token"),
  429: problem("rate limited"),
} as const;

export const NOT_FOUND = problem("no such task (or another owner's)");
export const INVALID = problem("validation failed or a limit exceeded");

export const IDEMPOTENCY: HeaderSpec = {
  name: "Idempotency-Key",
  required: false,
  description: "a repeat with the same key returns the first answer",
};

export const withEtag = (task: TaskView) => ({ etag: etagOf(task.version) });

/** A stored task view whose secret the idempotency record left out (`withoutSecrets`). */
function isRedactedWebhookTask(value: object): value is { id: string; webhook_secret: null } {
  const view = value as { id?: unknown; webhook_secret?: unknown; target?: { kind?: unknown } };
  return (
    typeof view.id === "string" && view.webhook_secret === null && view.target?.kind === "webhook"
  );
}

/**
 * The `restore` of a replayed create: every webhook task in the stored answer gets its current
 * `webhook_secret`, read from the task, as a GET would show it (null again if the task is gone).
 */
export function restoreTaskSecrets(tasks: TaskService, actor: Actor) {
  const restore = async (value: unknown): Promise<unknown> => {
    if (Array.isArray(value)) return Promise.all(value.map(restore));
    if (typeof value !== "object" || value === null) return value;
    if (isRedactedWebhookTask(value)) {
      const current = await tasks.get(actor, value.id).catch((error: unknown) => {
        if (error instanceof PunctualError && error.code === "not_found") return null;
        throw error;
      });
      return { ...value, webhook_secret: current?.webhook_secret ?? null };
    }
    const entries = await Promise.all(
      Object.entries(value).map(async ([name, field]) => [name, await restore(field)] as const),
    );
    return Object.fromEntries(entries);
  };
  return restore;
}
