/**
 * What a webhook receives (docs/semantics.md#launch): the JSON envelope and the headers, signed with HMAC-SHA256
 * in punctual's format or the Standard Webhooks one (docs/targets.md#verifying-a-signature). Builds requests
 * only; it sends nothing.
 */
import { createHmac } from "node:crypto";
import { formatInstant } from "../../../application/shapes/view-mappers.js";
import type { Run } from "../../../domain/run.js";
import type { JsonValue, WebhookSignature, WebhookTarget } from "../../../domain/target.js";
import type { Task } from "../../../domain/task.js";

/** The body of a launch request. */
export interface WebhookEnvelope {
  readonly task: {
    readonly id: string;
    readonly title: string;
    readonly metadata: Readonly<Record<string, string>>;
  };
  readonly run: { readonly id: string; readonly trigger: string; readonly attempt: number };
  readonly occurrence: {
    readonly scheduled_for: string;
    readonly fire_at: string;
    readonly late: boolean;
  };
  readonly input: JsonValue;
  readonly completion_url?: string;
}

export function webhookEnvelope(
  run: Run,
  task: Task,
  target: WebhookTarget,
  completionUrl: string | null,
): WebhookEnvelope {
  return {
    task: { id: task.id, title: task.title, metadata: task.metadata },
    run: { id: run.id, trigger: run.trigger, attempt: run.attempt },
    occurrence: {
      scheduled_for: formatInstant(run.scheduledFor),
      fire_at: formatInstant(run.fireAt),
      late: run.late,
    },
    input: target.input,
    ...(completionUrl === null ? {} : { completion_url: completionUrl }),
  };
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1` per secret (two while a rotation's
 * grace lasts: docs/security.md#rotating-a-tasks-signing-secret).
 */
export function signatureHeader(
  secret: string | readonly string[],
  body: string,
  nowMs: number,
): string {
  const t = Math.floor(nowMs / 1000);
  const secrets = typeof secret === "string" ? [secret] : secret;
  const v1 = secrets.map(
    (one) => `v1=${createHmac("sha256", one).update(`${t}.${body}`, "utf8").digest("hex")}`,
  );
  return `t=${t},${v1.join(",")}`;
}

/**
 * The Standard Webhooks key of a secret: the bytes a `whsec_<base64>` secret encodes, else the secret's
 * UTF-8 bytes (so a task's stored secret and its `whsec_` form shown to the owner are one key).
 */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret, "utf8");
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<unix seconds>.<body>">`, the Standard Webhooks signature. */
export function standardWebhooksSignature(
  secret: string,
  signed: { readonly id: string; readonly timestamp: number; readonly body: string },
): string {
  const mac = createHmac("sha256", standardWebhooksKey(secret))
    .update(`${signed.id}.${signed.timestamp}.${signed.body}`, "utf8")
    .digest("base64");
  return `v1,${mac}`;
}

/**
 * The signature headers of one request in `format`. Under Standard Webhooks the message id is the
 * run's idempotency key, which the specification asks to stay the same when a message is re-sent.
 */
export function signatureHeaders(
  format: WebhookSignature,
  secret: string | readonly string[],
  request: { readonly idempotencyKey: string; readonly body: string; readonly nowMs: number },
): Record<string, string> {
  switch (format) {
    case "punctual":
      return { "Punctual-Signature": signatureHeader(secret, request.body, request.nowMs) };
    case "standard_webhooks": {
      const timestamp = Math.floor(request.nowMs / 1000);
      const id = request.idempotencyKey;
      return {
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        // Several signatures are space-separated (Standard Webhooks): one per valid secret.
        "webhook-signature": (typeof secret === "string" ? [secret] : secret)
          .map((one) => standardWebhooksSignature(one, { id, timestamp, body: request.body }))
          .join(" "),
      };
    }
  }
}

/** Headers a target may not set: punctual's own, and those that frame the request. */
const RESERVED = new Set([
  "content-type",
  "content-length",
  "idempotency-key",
  "punctual-signature",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "host",
  "connection",
  "transfer-encoding",
]);

/** The target's headers (minus reserved ones), then punctual's. */
export function webhookHeaders(
  target: WebhookTarget,
  signed: { idempotencyKey: string; signature: Readonly<Record<string, string>> },
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = value;
  }
  headers["Content-Type"] = "application/json";
  headers["Idempotency-Key"] = signed.idempotencyKey;
  return { ...headers, ...signed.signature };
}
