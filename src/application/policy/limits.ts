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
 * Adding a limit (quotas per owner, a `run_timeout` maximum): give it a value in `Limits`
 * and `DEFAULT_LIMITS`, a check here, and call the check where the task service takes input (`create`,
 * `update`, `upsert`), so both surfaces get it at once. A limit an operator may set is a field of `Limits` the
 * composition root fills from its options over `DEFAULT_LIMITS`.
 */
import { LimitExceededError, ValidationError } from "../../domain/errors.js";
import { TASK_LIMITS } from "../../domain/task.js";

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
  /**
   * How deep arrays and objects may nest in any JSON document punctual takes in (a request body, a
   * task's input, a run's result, a target's answer). @default 64
   */
  readonly jsonDepth: number;
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
  jsonDepth: 64,
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

/**
 * How deep `value` nests (a scalar is 0, `[]` is 1, `{"a":[1]}` is 2), counted without recursion and
 * only up to `stopAt` + 1: a 100,000-deep or cyclic value costs no more than one 65 deep.
 */
export function jsonDepth(value: unknown, stopAt: number = DEFAULT_LIMITS.jsonDepth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== "object" || node === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > stopAt) return deepest;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === "object" && child !== null) stack.push([child, here]);
    }
  }
  return deepest;
}

/**
 * How deep the JSON text `text` nests, read as characters before it is parsed (brackets inside strings
 * do not count), up to `stopAt` + 1. Text that is not JSON gets some depth; the parser then refuses it.
 */
export function jsonTextDepth(text: string, stopAt: number = DEFAULT_LIMITS.jsonDepth): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAt) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

/** U+0000 and lone surrogates: text no database stores faithfully (PostgreSQL refuses both). */
// eslint-disable-next-line no-control-regex -- U+0000 is what this refuses
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

/**
 * The path of the first string (a value or a key) in `value` holding U+0000 or a lone surrogate, or null.
 * PostgreSQL refuses both in text and jsonb, SQLite would keep a lone surrogate as U+FFFD: refused before
 * any store sees them, so every store takes the same documents (docs/security.md#bounded-input). Walked
 * without recursion; call it on a value whose depth is already bounded.
 */
export function unstorableTextAt(value: unknown, root = ""): string | null {
  const stack: [unknown, string][] = [[value, root]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, path] = item;
    if (typeof node === "string") {
      if (UNSTORABLE.test(node)) return path;
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, `${path}[${i}]`]));
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (UNSTORABLE.test(key)) return at;
      stack.push([child, at]);
    }
  }
  return null;
}

const UNSTORABLE_WORDS = "must not hold U+0000 or a lone surrogate (no store keeps them)";

/**
 * No string in `value` holds what a store cannot keep (`unstorableTextAt`).
 * @throws validation_failed naming the field
 */
export function checkStorableText(value: unknown, root = ""): void {
  const at = unstorableTextAt(value, root);
  if (at !== null) throw ValidationError.of(at === "" ? "body" : at, UNSTORABLE_WORDS);
}

/** The refusal of a document nested deeper than `jsonDepth`. */
function tooDeep(what: string, limits: Limits): LimitExceededError {
  return new LimitExceededError(
    "json_depth",
    limits.jsonDepth,
    `${what} nests deeper than ${limits.jsonDepth} levels`,
  );
}

/**
 * A JSON document's text nests at most `jsonDepth` deep: checked before it is parsed.
 * @throws limit_exceeded (`json_depth`)
 */
export function checkJsonTextDepth(
  text: string,
  what = "the body",
  limits: Limits = DEFAULT_LIMITS,
): void {
  if (jsonTextDepth(text, limits.jsonDepth) > limits.jsonDepth) throw tooDeep(what, limits);
}

/**
 * A document given as a value (the library's input, a parsed body) nests at most `jsonDepth` deep.
 * @throws limit_exceeded (`json_depth`)
 */
export function checkJsonDepth(
  value: unknown,
  what = "the input",
  limits: Limits = DEFAULT_LIMITS,
): void {
  if (jsonDepth(value, limits.jsonDepth) > limits.jsonDepth) throw tooDeep(what, limits);
}

/**
 * The size of `value` as UTF-8 JSON (`undefined` is 0 bytes). A value nested deeper than `jsonDepth`
 * (which `JSON.stringify` could not even walk) or that cannot be written as JSON at all (a cycle, a
 * BigInt) is `Infinity`: over every limit.
 */
export function jsonBytes(value: unknown, limits: Limits = DEFAULT_LIMITS): number {
  if (value === undefined) return 0;
  if (jsonDepth(value, limits.jsonDepth) > limits.jsonDepth) return Infinity;
  let text: unknown;
  try {
    text = JSON.stringify(value);
  } catch {
    return Infinity;
  }
  return typeof text === "string" ? Buffer.byteLength(text, "utf8") : 0;
}

/** The JSON documents of a task that are the owner's own (a target's input, an agent's config and context). */
const TARGET_DOCUMENTS = ["input", "configurable", "context"] as const;

/**
 * A create, patch or upsert body nests at most `jsonDepth` deep, and its target's `input` (and an agent
 * target's `configurable` and `context`) is at most `targetInputBytes` each, checked before the body is
 * parsed further. Anything that is not an object with a target is left to the parser.
 * @throws limit_exceeded (`json_depth`, `target_input`)
 */
export function checkTaskInputSize(body: unknown, limits: Limits = DEFAULT_LIMITS): void {
  if (typeof body !== "object" || body === null) return;
  checkJsonDepth(body, "the task", limits);
  checkStorableText(body);
  const target = (body as { target?: unknown }).target;
  if (typeof target !== "object" || target === null) return;
  for (const field of TARGET_DOCUMENTS) {
    if (!(field in target)) continue;
    const size = jsonBytes((target as Record<string, unknown>)[field], limits);
    if (size > limits.targetInputBytes) {
      throw new LimitExceededError(
        "target_input",
        limits.targetInputBytes,
        `target.${field} is ${size} bytes, over the limit of ${limits.targetInputBytes}`,
      );
    }
  }
}

/**
 * Why a run's `result` is refused (nested deeper than `jsonDepth`, or over `resultBytes`), in the words
 * its run's error records naming `who` sent it; null when it fits. A handler's, a webhook's or an agent's
 * refused result fails its run; a `/complete` one is refused (`checkResultSize`).
 */
export function resultProblem(
  result: unknown,
  who: string,
  limits: Limits = DEFAULT_LIMITS,
): string | null {
  if (jsonDepth(result, limits.jsonDepth) > limits.jsonDepth) {
    return `${who} result nests deeper than ${limits.jsonDepth} levels`;
  }
  if (unstorableTextAt(result) !== null) {
    return `${who} result holds U+0000 or a lone surrogate, which no store keeps`;
  }
  if (jsonBytes(result, limits) > limits.resultBytes) return resultTooLargeMessage(who, limits);
  return null;
}

/** Whether a run's `result` fits (`resultBytes`, `jsonDepth`): a handler's or a webhook's larger one fails its run. */
export function resultTooLarge(result: unknown, limits: Limits = DEFAULT_LIMITS): boolean {
  return resultProblem(result, "the", limits) !== null;
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
  checkJsonDepth(result, "the result", limits);
  checkStorableText(result, "result");
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
