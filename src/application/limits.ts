/**
 * Every limit on what a caller may send or ask for (docs/security.md#input-limits), in one place, so the
 * library, the HTTP API and `punctual/client` accept and refuse exactly the same tasks and queries. Only
 * the HTTP request body's size (1 MiB) is the HTTP adapter's own: it bounds a document before parsing.
 *
 * The values the domain checks as invariants of a task (title, description, metadata, backfill count,
 * trigger keys) live in `TASK_LIMITS` (domain/task.ts), which the domain cannot get from here; they are
 * read from there, not repeated. Each check below throws `limit_exceeded` naming the limit (its `limit`
 * and `max`) or `validation_failed` naming the field.
 *
 * Adding a limit (depth of JSON, quotas per owner, a `run_timeout` maximum): give it a value in `Limits`
 * and `DEFAULT_LIMITS`, a check here, and call the check where the task service takes input (`create`,
 * `update`, `upsert`), so both surfaces get it at once. A limit an operator may set is a field of `Limits` the
 * composition root fills from its options over `DEFAULT_LIMITS`.
 */
import { LimitExceededError, ValidationError } from "../domain/errors.js";
import { TASK_LIMITS } from "../domain/task.js";

/** The limits, by name; every size is in bytes of UTF-8 JSON. */
export interface Limits {
  /** A target's `input` (docs/security.md#input-limits). @default 256 KiB */
  readonly targetInputBytes: number;
  /** A run's `result`, from a handler, a webhook answer or `/complete`. @default 64 KiB */
  readonly resultBytes: number;
  /** The largest page a listing serves (`?limit=` / `{ limit }`). @default 200 */
  readonly pageSizeMax: number;
  /** A listing's page size when none is given. @default 50 */
  readonly pageSizeDefault: number;
  /** How many fires a preview lists at most. @default 100 */
  readonly previewCountMax: number;
  /** How many nominal times one backfill may replay. @default 1,000 */
  readonly backfillRuns: number;
  /** The longest retry delay a handler may ask for (`RetryableError`'s `delay`). @default 7 days */
  readonly retryDelayMaxMs: number;
  /** Title length in characters. @default 200 */
  readonly titleChars: number;
  /** Description length in characters. @default 10,000 */
  readonly descriptionChars: number;
  /** Metadata: keys, key length, value length. @default 32, 64, 1,024 */
  readonly metadataKeys: number;
  readonly metadataKeyChars: number;
  readonly metadataValueChars: number;
  /** A trigger's `idempotency_key` length. @default 200 */
  readonly idempotencyKeyChars: number;
  /**
   * The longest `options.run_timeout` at create and edit (docs/operations.md#thresholds); operator-set
   * (`maxRunTimeoutSeconds`, `--max-run-timeout`). @default 24 hours
   */
  readonly runTimeoutMaxMs: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  targetInputBytes: TASK_LIMITS.inputBytesMax,
  resultBytes: TASK_LIMITS.resultBytesMax,
  pageSizeMax: 200,
  pageSizeDefault: 50,
  previewCountMax: TASK_LIMITS.previewMax,
  backfillRuns: TASK_LIMITS.backfillMax,
  retryDelayMaxMs: 7 * 24 * 3600 * 1000,
  titleChars: TASK_LIMITS.titleMax,
  descriptionChars: TASK_LIMITS.descriptionMax,
  metadataKeys: TASK_LIMITS.metadataKeysMax,
  metadataKeyChars: TASK_LIMITS.metadataKeyMax,
  metadataValueChars: TASK_LIMITS.metadataValueMax,
  idempotencyKeyChars: TASK_LIMITS.idempotencyKeyMax,
  runTimeoutMaxMs: 24 * 3600 * 1000,
});

/** The limits with the operator's settings over the defaults. @throws RangeError for a bad value */
export function limitsOf(options: { readonly maxRunTimeoutSeconds?: number } = {}): Limits {
  const seconds = options.maxRunTimeoutSeconds;
  if (seconds === undefined) return DEFAULT_LIMITS;
  if (!Number.isFinite(seconds) || seconds < 1) {
    throw new RangeError("maxRunTimeoutSeconds must be at least 1");
  }
  return Object.freeze({ ...DEFAULT_LIMITS, runTimeoutMaxMs: seconds * 1000 });
}

/**
 * A task's `options.run_timeout`, when the create or edit names one, is at most `runTimeoutMaxMs`. A
 * stored task over the limit (set before it was lowered) keeps working: only the input is checked.
 * @throws limit_exceeded (`run_timeout`)
 */
export function checkRunTimeout(
  runTimeoutMs: number | undefined,
  limits: Limits = DEFAULT_LIMITS,
): void {
  if (runTimeoutMs === undefined || runTimeoutMs <= limits.runTimeoutMaxMs) return;
  throw new LimitExceededError(
    "run_timeout",
    limits.runTimeoutMaxMs / 1000,
    `options.run_timeout is ${formatSeconds(runTimeoutMs)}, over the operator's maximum of ` +
      formatSeconds(limits.runTimeoutMaxMs),
  );
}

function formatSeconds(ms: number): string {
  return `${ms / 1000} s`;
}

/** The size of `value` as UTF-8 JSON (`undefined` is 0 bytes). */
export function jsonBytes(value: unknown): number {
  if (value === undefined) return 0;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}

/**
 * A create, patch or upsert body's `target.input` is at most `targetInputBytes`, checked before the
 * body is parsed further. Anything that is not an object with a target is left to the parser.
 * @throws limit_exceeded (`target_input`)
 */
export function checkTaskInputSize(body: unknown, limits: Limits = DEFAULT_LIMITS): void {
  if (typeof body !== "object" || body === null) return;
  const target = (body as { target?: unknown }).target;
  if (typeof target !== "object" || target === null || !("input" in target)) return;
  const size = jsonBytes(target.input);
  if (size > limits.targetInputBytes) {
    throw new LimitExceededError(
      "target_input",
      limits.targetInputBytes,
      `target.input is ${size} bytes, over the limit of ${limits.targetInputBytes}`,
    );
  }
}

/** Whether a run's `result` fits (`resultBytes`): a handler's or a webhook's larger one fails its run. */
export function resultTooLarge(result: unknown, limits: Limits = DEFAULT_LIMITS): boolean {
  return jsonBytes(result) > limits.resultBytes;
}

/** The words a run's error records for a result over the limit, naming who sent it. */
export function resultTooLargeMessage(who: string, limits: Limits = DEFAULT_LIMITS): string {
  return `${who} result exceeds ${limits.resultBytes / 1024} KiB`;
}

/**
 * A `/complete` result over `resultBytes`: refused, nothing recorded.
 * @throws limit_exceeded (`result`)
 */
export function checkResultSize(result: unknown, limits: Limits = DEFAULT_LIMITS): void {
  if (resultTooLarge(result, limits)) {
    throw new LimitExceededError(
      "result",
      limits.resultBytes,
      resultTooLargeMessage("the", limits),
    );
  }
}

/**
 * A listing's page size: the default when absent, else 1..`pageSizeMax`.
 * @throws limit_exceeded (`page_size`)
 */
export function pageSizeOf(limit: number | undefined, limits: Limits = DEFAULT_LIMITS): number {
  if (limit === undefined) return limits.pageSizeDefault;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new LimitExceededError("page_size", limits.pageSizeMax, "limit must be at least 1");
  }
  if (limit > limits.pageSizeMax) {
    throw new LimitExceededError(
      "page_size",
      limits.pageSizeMax,
      `limit must be at most ${limits.pageSizeMax}`,
    );
  }
  return limit;
}

/**
 * A preview's count: 1..`previewCountMax`.
 * @throws validation_failed naming `count`
 */
export function checkPreviewCount(count: number, limits: Limits = DEFAULT_LIMITS): void {
  if (!Number.isInteger(count) || count < 1 || count > limits.previewCountMax) {
    throw ValidationError.of("count", `must be an integer from 1 to ${limits.previewCountMax}`);
  }
}

/** A retry delay a handler asked for, within 0..`retryDelayMaxMs` (a larger one is cut to it). */
export function boundedRetryDelayMs(delayMs: number, limits: Limits = DEFAULT_LIMITS): number {
  if (!Number.isFinite(delayMs) || delayMs <= 0) return 0;
  return Math.min(Math.ceil(delayMs), limits.retryDelayMaxMs);
}
