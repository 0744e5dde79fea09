/**
 * What a webhook receives (docs/semantics.md#launch): the JSON envelope and the headers, signed with HMAC-SHA256 over
 * `<unix seconds>.<body>`. Builds requests only; it sends nothing.
 */
import { createHmac } from "node:crypto";
import { formatInstant } from "../../../application/views.js";
import type { Run } from "../../../domain/run.js";
import type { JsonValue, WebhookTarget } from "../../../domain/target.js";
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

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signatureHeader(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest("hex");
  return `t=${t},v1=${v1}`;
}

/** Headers a target may not set: punctual's own, and those that frame the request. */
const RESERVED = new Set([
  "content-type",
  "content-length",
  "idempotency-key",
  "punctual-signature",
  "host",
  "connection",
  "transfer-encoding",
]);

/** The target's headers (minus reserved ones), then punctual's. */
export function webhookHeaders(
  target: WebhookTarget,
  signed: { idempotencyKey: string; signature: string },
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = value;
  }
  headers["Content-Type"] = "application/json";
  headers["Idempotency-Key"] = signed.idempotencyKey;
  headers["Punctual-Signature"] = signed.signature;
  return headers;
}
