/**
 * What a handler can throw to tell punctual how its failure is to be retried
 * (docs/library.md#failures-a-handler-can-state). Anything else a handler throws fails the run, retried
 * as the task's `retry` options say. Recognised by `name` as well as by class, so a copy of the package
 * loaded twice still understands its handlers.
 */

/** Ends the run `failed` (reason `non_retryable`) now, whatever attempts the task's `retry` leaves. */
export class NonRetryableError extends Error {
  override readonly name = "NonRetryableError";
}

/**
 * Fails this attempt and asks for the next one after exactly `delayMs` instead of the task's back-off
 * (e.g. a rate limit's `Retry-After`). It still counts against `retry.max_attempts`: with none left the
 * run ends `failed` as any failure does. A delay over 7 days is cut to 7 days.
 */
export class RetryableError extends Error {
  override readonly name = "RetryableError";
  readonly delayMs: number;

  constructor(message: string, options: { readonly delayMs: number; readonly cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.delayMs = options.delayMs;
  }
}

/** `error` as one of the two, read by `name` (see the module comment). */
export function retryWordOf(
  error: unknown,
): { kind: "never" } | { kind: "after"; delayMs: number } | null {
  if (!(error instanceof Error)) return null;
  if (error.name === "NonRetryableError") return { kind: "never" };
  if (error.name === "RetryableError") {
    const delayMs = (error as { delayMs?: unknown }).delayMs;
    return typeof delayMs === "number" ? { kind: "after", delayMs } : null;
  }
  return null;
}
