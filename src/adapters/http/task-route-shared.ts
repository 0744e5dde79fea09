/**
 * What the task and run routes share (docs/api.md): their dependencies, the problem answers every route
 * may give, the `Idempotency-Key` header and the task's ETag.
 */
import type { IdempotencyRepository } from "../../application/idempotency-repository.js";
import type { TaskService } from "../../application/task-service.js";
import type { TaskView } from "../../application/views.js";
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
