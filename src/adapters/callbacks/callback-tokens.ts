/**
 * Per-run secrets for the two callback routes (docs/semantics.md#completion, docs/security.md): `POST /v1/runs/{id}/complete` (a webhook
 * receiver that answered 202) and `POST /v1/hooks/agent/{server}` (an agent server's run webhook). Each
 * token is an HMAC of the run id under the task's own secret (made at create, stored with the task), one
 * per purpose: nothing new is stored, every replica can check it, and a token opens one run only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export type CallbackPurpose = "complete" | "agent-hook";

/** The token that authenticates a callback about `runId`. */
export function callbackToken(secret: string, purpose: CallbackPurpose, runId: string): string {
  return createHmac("sha256", secret).update(`punctual:${purpose}:${runId}`).digest("base64url");
}

/** Whether `token` is the callback token of `runId` for `purpose` (constant time). */
export function callbackTokenMatches(
  secret: string,
  purpose: CallbackPurpose,
  runId: string,
  token: string,
): boolean {
  const expected = Buffer.from(callbackToken(secret, purpose, runId), "utf8");
  const given = Buffer.from(token, "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Where punctual can be reached from targets (`PUNCTUAL_PUBLIC_URL`), without a trailing slash. */
export function publicBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`PUNCTUAL_PUBLIC_URL is not a URL: ${text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`PUNCTUAL_PUBLIC_URL must be http or https: ${text}`);
  }
  return url.href.replace(/\/+$/, "");
}

/** The `completion_url` of a webhook run: where a receiver that answered 202 reports the verdict. */
export function completionUrl(base: string, runId: string, secret: string): string {
  const token = callbackToken(secret, "complete", runId);
  return `${base}/v1/runs/${encodeURIComponent(runId)}/complete?token=${token}`;
}

/** The run webhook handed to an agent server: it posts the finished run here. */
export function agentHookUrl(base: string, server: string, runId: string, secret: string): string {
  const token = callbackToken(secret, "agent-hook", runId);
  return (
    `${base}/v1/hooks/agent/${encodeURIComponent(server)}` +
    `?run=${encodeURIComponent(runId)}&token=${token}`
  );
}
