/**
 * The closed error taxonomy (CONVENTIONS "Errors"). Callers branch on `code`; the HTTP layer maps each
 * code to a status in one table. The domain throws these only when a command is refused.
 */

/** Every error code punctual raises. A new code does not compile until the HTTP error map handles it. */
export const ERROR_CODES = [
  "validation_failed",
  "limit_exceeded",
  "not_found",
  "version_conflict",
  "run_active",
  "task_not_mutable",
  "illegal_transition",
  "lease_lost",
  "thread_busy",
  "launch_failed",
  "launch_indeterminate",
  "target_unavailable",
  "calendar_in_use",
  "key_taken",
  "task_defective",
  "quota_exceeded",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One problem with one input field, in words a user understands. */
export interface FieldError {
  /** Dotted path of the field in the public (snake_case) input, e.g. `schedule.cron`. */
  readonly field: string;
  readonly message: string;
}

/**
 * The registered symbol that marks punctual's errors (docs/errors.md#two-copies-of-punctual): a library
 * and a plugin that each bundle punctual load two copies of this module, and an error one copy throws
 * is not an `instanceof` the other's classes by prototype alone. `Symbol.for` answers the same symbol in
 * every copy, so the mark (and the checks below) hold across them.
 */
const PUNCTUAL_ERROR: unique symbol = Symbol.for("punctual.error") as never;

/** Whether `value` carries punctual's error mark, whichever copy of punctual made it. */
function isMarked(value: unknown): value is PunctualError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { readonly [PUNCTUAL_ERROR]?: unknown })[PUNCTUAL_ERROR] === true
  );
}

/** Base of every error punctual raises on purpose. */
export abstract class PunctualError extends Error {
  abstract readonly code: ErrorCode;

  /**
   * `error instanceof PunctualError` holds for any copy's error; `error instanceof NotFoundError` for
   * any copy's error of that class (by its `name`, which each class sets to its own).
   */
  static override [Symbol.hasInstance](
    this: abstract new (...args: never[]) => unknown,
    value: unknown,
  ): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (!isMarked(value)) return false;
    return this === PunctualError || value.name === this.name;
  }
}
Object.defineProperty(PunctualError.prototype, PUNCTUAL_ERROR, { value: true });

/** Thrown when input (a schedule, a task, options) is invalid; lists each field and reason. */
/** How many field errors a ValidationError's message names. */
const MESSAGE_FIELDS = 10;

export class ValidationError extends PunctualError {
  readonly code = "validation_failed";
  override readonly name = "ValidationError";
  readonly errors: readonly FieldError[];

  constructor(errors: readonly FieldError[], options?: { cause?: unknown }) {
    // A batch can refuse a thousand fields: the message names the first few, `errors` holds them all.
    const named = errors.slice(0, MESSAGE_FIELDS).map((e) => `${e.field}: ${e.message}`);
    const more = errors.length - named.length;
    super(more > 0 ? `${named.join("; ")}; and ${String(more)} more` : named.join("; "), options);
    this.errors = errors;
  }

  /** A validation error about a single field. */
  static of(field: string, message: string): ValidationError {
    return new ValidationError([{ field, message }]);
  }
}

/** Thrown when an input exceeds a documented limit (docs/security.md); `limit` names it, `max` is its value. */
export class LimitExceededError extends PunctualError {
  readonly code = "limit_exceeded";
  override readonly name = "LimitExceededError";

  constructor(
    readonly limit: string,
    readonly max: number,
    message?: string,
  ) {
    super(message ?? `${limit} exceeds the limit of ${max}`);
  }
}

/**
 * Thrown when a command would take its owner over a rate quota (docs/security.md#quotas): runs
 * triggered per minute, backfilled runs per hour. `retryAfterSeconds` is when the window has room again.
 */
export class QuotaExceededError extends PunctualError {
  readonly code = "quota_exceeded";
  override readonly name = "QuotaExceededError";

  constructor(
    readonly limit: string,
    readonly max: number,
    readonly retryAfterSeconds: number,
    message?: string,
  ) {
    super(message ?? `${limit} is over its quota of ${max}`);
  }
}

/** Thrown when a task or run does not exist, or belongs to another owner (never "forbidden"). */
export class NotFoundError extends PunctualError {
  readonly code = "not_found";
  override readonly name = "NotFoundError";

  constructor(
    readonly resource: "task" | "run" | "thread" | "token" | "agent_server" | "calendar",
    readonly id: string,
  ) {
    super(`${resource} ${id} not found`);
  }
}

/** Thrown when an edit carries a `version` that is no longer the task's current one. */
export class StaleVersionError extends PunctualError {
  readonly code = "version_conflict";
  override readonly name = "StaleVersionError";

  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`the task is at version ${actual}, not ${expected}: read it again and retry`);
  }
}

/**
 * Thrown when a task is written with a snapshot of a calendar that has changed (or gone) since it was
 * read: the writer reads the calendar again and retries.
 */
export class CalendarChangedError extends PunctualError {
  readonly code = "version_conflict";
  override readonly name = "CalendarChangedError";

  constructor(readonly calendar: string) {
    super(`calendar "${calendar}" changed while the task was written: read it again and retry`);
  }
}

/** Thrown when a calendar that a task's schedule names is deleted; `taskId` names one such task. */
export class CalendarInUseError extends PunctualError {
  readonly code = "calendar_in_use";
  override readonly name = "CalendarInUseError";

  constructor(
    readonly calendar: string,
    readonly taskId: string,
  ) {
    super(
      `calendar "${calendar}" is used by task ${taskId}: remove it from that task's exclude (and any other's) first`,
    );
  }
}

/**
 * Thrown when a task is created with a key another task of the owner already has
 * (docs/semantics.md#task-keys); `upsert` brings that task to the definition instead.
 */
export class KeyTakenError extends PunctualError {
  readonly code = "key_taken";
  override readonly name = "KeyTakenError";

  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`another task already has the key "${key}": upsert it, or choose another key`, options);
  }
}

/** Thrown when a command conflicts with an active run (trigger under overlap `skip`). */
export class ActiveRunError extends PunctualError {
  readonly code = "run_active";
  override readonly name = "ActiveRunError";
}

/** Thrown when a task cannot be changed as asked (delete while a run is launching or running). */
export class TaskNotMutableError extends PunctualError {
  readonly code = "task_not_mutable";
  override readonly name = "TaskNotMutableError";
}

/**
 * Thrown when a command needs a stored field of the task that no longer parses
 * (docs/operations.md#a-task-that-does-not-parse): only an edit that repairs it, or a delete, is allowed.
 */
export class TaskDefectiveError extends PunctualError {
  readonly code = "task_defective";
  override readonly name = "TaskDefectiveError";

  constructor(
    readonly fields: readonly string[],
    command: string,
  ) {
    super(
      `the task's stored ${fields.join(", ")} does not parse: ${command} needs it; ` +
        "edit the task giving it anew, or delete the task",
    );
  }
}

/** Thrown when a run or task transition is not allowed from its current status. */
export class IllegalTransitionError extends PunctualError {
  readonly code = "illegal_transition";
  override readonly name = "IllegalTransitionError";

  constructor(
    readonly entity: "run" | "task",
    readonly from: string,
    readonly to: string,
  ) {
    super(`a ${entity} cannot move from ${from} to ${to}`);
  }
}

/**
 * Thrown when a redrive (`POST /v1/runs/{id}/retry`) asks for a run that is not `failed`, `timed_out` or
 * `cancelled`: the message says why (still active, succeeded, or born terminal).
 */
export class RunNotRedrivableError extends PunctualError {
  readonly code = "illegal_transition";
  override readonly name = "RunNotRedrivableError";

  constructor(
    readonly runId: string,
    readonly status: string,
    why?: string,
  ) {
    super(`run ${runId} is ${status}: ${why ?? whyNotRedrivable(status)}`);
  }
}

function whyNotRedrivable(status: string): string {
  switch (status) {
    case "queued":
    case "launching":
    case "running":
      return "it is still active; only a failed, timed_out or cancelled run can be retried";
    case "succeeded":
      return "it succeeded; trigger the task for a new run instead";
    default:
      return "it was never launched (a skipped or missed record); only a failed, timed_out or cancelled run can be retried";
  }
}

/** Thrown when a write carries a fencing token that has been superseded (the claim was lost). */
export class LeaseLostError extends PunctualError {
  readonly code = "lease_lost";
  override readonly name = "LeaseLostError";
}

/** Launcher outcome: the thread has a run active elsewhere; the run goes back to the queue. */
export class ThreadBusyError extends PunctualError {
  readonly code = "thread_busy";
  override readonly name = "ThreadBusyError";
}

/** Launcher outcome: certainly nothing started (a 4xx, a validation refusal); counts against retries. */
export class LaunchFailedError extends PunctualError {
  readonly code = "launch_failed";
  override readonly name = "LaunchFailedError";
}

/** Launcher outcome: the run may have started (timeout, 5xx, transport); treated as launched. */
export class LaunchIndeterminateError extends PunctualError {
  readonly code = "launch_indeterminate";
  override readonly name = "LaunchIndeterminateError";
}

/** A target that had to be asked (does this agent thread exist?) could not answer; try again later. */
export class TargetUnavailableError extends PunctualError {
  readonly code = "target_unavailable";
  override readonly name = "TargetUnavailableError";
}

/** True when `value` is one of punctual's own errors, made by this copy of punctual or another. */
export function isPunctualError(value: unknown): value is PunctualError {
  return isMarked(value);
}

/** Exhaustiveness guard for `switch` defaults. */
export function assertNever(value: never): never {
  throw new TypeError(`unexpected value: ${JSON.stringify(value)}`);
}
