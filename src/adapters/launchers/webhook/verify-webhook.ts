/**
 * The receiver's side of a signed webhook (docs/targets.md#verifying-a-signature): checks a request
 * against one secret or two (while the sender rotates), in punctual's format or the Standard Webhooks
 * one, in constant time and within a timestamp tolerance. It reads nothing but its arguments.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookSignature } from "../../../domain/target.js";
import { standardWebhooksKey } from "./webhook-envelope.js";

/** Why a request was refused. */
export const WEBHOOK_REJECTIONS = [
  "missing_signature",
  "malformed_signature",
  "timestamp_outside_tolerance",
  "signature_mismatch",
] as const;
export type WebhookRejection = (typeof WEBHOOK_REJECTIONS)[number];

/** Thrown by {@link verifyWebhook} when a request must not be trusted; `reason` says why. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly reason: WebhookRejection,
    message: string,
  ) {
    super(message);
  }
}

/** What a receiver hands over: the headers as received and the body exactly as received (not re-serialised). */
export interface WebhookRequestParts {
  /** A fetch `Headers`, or a record such as node's `IncomingHttpHeaders` (names in any case). */
  readonly headers:
    | { get(name: string): string | null }
    | Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: string | Uint8Array;
}

export interface VerifyWebhookOptions {
  /** How far the signed timestamp may be from now, either way, in seconds. @default 300 */
  readonly tolerance?: number;
  /** Accept only this format. @default whichever the request's headers carry */
  readonly format?: WebhookSignature;
  /** The instant to check the timestamp against (epoch ms or a Date). @default Date.now() */
  readonly now?: number | Date;
}

/** A request whose signature holds. */
export interface VerifiedWebhook {
  readonly format: WebhookSignature;
  /** The signed timestamp. */
  readonly signedAt: Date;
  /**
   * The run's idempotency key: the signed `webhook-id` under Standard Webhooks, the `Idempotency-Key`
   * header under punctual's format (not covered by that signature; the body it came with is).
   */
  readonly idempotencyKey: string | null;
  /** Which of the given secrets matched (0 or 1 while rotating). */
  readonly secretIndex: number;
}

const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Checks a webhook request from punctual before its body is trusted.
 *
 * @param secret the task's `webhook_secret` (or the server's), or two of them while the sender rotates
 * @throws WebhookVerificationError when the signature is missing, malformed, too old or too new, or wrong
 * @example
 * ```ts
 * import { verifyWebhook } from "punctual";
 * const body = await readBody(req); // the raw text, before JSON.parse
 * const { idempotencyKey } = verifyWebhook({ headers: req.headers, body }, [current, previous]);
 * ```
 */
export function verifyWebhook(
  request: WebhookRequestParts,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): VerifiedWebhook {
  const secrets = typeof secret === "string" ? [secret] : secret;
  if (secrets.length === 0 || secrets.some((one) => one === "")) {
    throw new TypeError("verifyWebhook needs at least one non-empty secret");
  }
  const header = headerReader(request.headers);
  const format = options.format ?? detectFormat(header);
  const signed =
    format === "punctual"
      ? punctualSigned(header, request.body)
      : standardSigned(header, request.body);
  checkTimestamp(signed.timestamp, options);
  const secretIndex = matchingSecret(secrets, signed);
  return {
    format,
    signedAt: new Date(signed.timestamp * 1000),
    idempotencyKey: signed.id,
    secretIndex,
  };
}

interface SignedParts {
  readonly timestamp: number;
  readonly id: string | null;
  /** The bytes the MAC covers. */
  readonly content: Buffer;
  readonly given: readonly Buffer[];
  readonly mac: (secret: string) => Buffer;
}

type HeaderReader = (name: string) => string | undefined;

function headerReader(headers: WebhookRequestParts["headers"]): HeaderReader {
  if (typeof headers.get === "function") {
    const fetchHeaders = headers as { get(name: string): string | null };
    return (name) => fetchHeaders.get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  return (name) => {
    for (const [key, value] of Object.entries(record)) {
      if (key.toLowerCase() !== name) continue;
      // A repeated signature header is read as its first value, never as a merged list.
      return typeof value === "string" ? value : value?.[0];
    }
    return undefined;
  };
}

function detectFormat(header: HeaderReader): WebhookSignature {
  if (header("webhook-signature") !== undefined) return "standard_webhooks";
  if (header("punctual-signature") !== undefined) return "punctual";
  throw new WebhookVerificationError(
    "missing_signature",
    "the request carries neither Punctual-Signature nor webhook-signature",
  );
}

function bodyBytes(body: string | Uint8Array): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
}

function parseTimestamp(text: string | undefined): number {
  if (text === undefined || !/^\d{1,12}$/.test(text)) {
    throw new WebhookVerificationError(
      "malformed_signature",
      "the signed timestamp is not a number",
    );
  }
  return Number(text);
}

/** `Punctual-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
function punctualSigned(header: HeaderReader, body: string | Uint8Array): SignedParts {
  const text = header("punctual-signature");
  if (text === undefined) {
    throw new WebhookVerificationError(
      "missing_signature",
      "the request has no Punctual-Signature",
    );
  }
  const fields = new Map<string, string[]>();
  for (const part of text.split(",")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    const key = part.slice(0, at).trim();
    fields.set(key, [...(fields.get(key) ?? []), part.slice(at + 1).trim()]);
  }
  const timestamp = parseTimestamp(fields.get("t")?.[0]);
  const given = (fields.get("v1") ?? [])
    .filter((hex) => /^[0-9a-f]{64}$/i.test(hex))
    .map((hex) => Buffer.from(hex, "hex"));
  if (given.length === 0) {
    throw new WebhookVerificationError("malformed_signature", "Punctual-Signature has no v1 value");
  }
  const content = Buffer.concat([Buffer.from(`${timestamp}.`, "utf8"), bodyBytes(body)]);
  return {
    timestamp,
    id: header("idempotency-key") ?? null,
    content,
    given,
    mac: (secret) => createHmac("sha256", secret).update(content).digest(),
  };
}

/** `webhook-signature: v1,<base64 HMAC of "<webhook-id>.<webhook-timestamp>.<body>">` (space-separated list). */
function standardSigned(header: HeaderReader, body: string | Uint8Array): SignedParts {
  const text = header("webhook-signature");
  const id = header("webhook-id");
  if (text === undefined || id === undefined) {
    throw new WebhookVerificationError(
      "missing_signature",
      "the request lacks webhook-signature or webhook-id",
    );
  }
  const timestamp = parseTimestamp(header("webhook-timestamp"));
  const given = text
    .split(" ")
    .filter((item) => item.startsWith("v1,"))
    .map((item) => Buffer.from(item.slice(3), "base64"))
    .filter((mac) => mac.length === 32);
  if (given.length === 0) {
    throw new WebhookVerificationError("malformed_signature", "webhook-signature has no v1 value");
  }
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), bodyBytes(body)]);
  return {
    timestamp,
    id,
    content,
    given,
    mac: (secret) => createHmac("sha256", standardWebhooksKey(secret)).update(content).digest(),
  };
}

function checkTimestamp(timestamp: number, options: VerifyWebhookOptions): void {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError("verifyWebhook: tolerance is a number of seconds, at least 0");
  }
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  if (Math.abs(nowMs / 1000 - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_outside_tolerance",
      `the signature's timestamp is more than ${tolerance} s away from now`,
    );
  }
}

function matchingSecret(secrets: readonly string[], signed: SignedParts): number {
  // Every secret and every given signature is compared, so the time taken says nothing about which matched.
  let found = -1;
  secrets.forEach((secret, index) => {
    const expected = signed.mac(secret);
    for (const mac of signed.given) {
      if (mac.length === expected.length && timingSafeEqual(mac, expected) && found === -1) {
        found = index;
      }
    }
  });
  if (found === -1) {
    throw new WebhookVerificationError(
      "signature_mismatch",
      "the signature does not match the secret",
    );
  }
  return found;
}
