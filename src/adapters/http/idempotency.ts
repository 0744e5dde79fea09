/**
 * `Idempotency-Key` on create and trigger: the first answer is stored by owner, route and key, and a
 * repeat gets it back (`Idempotent-Replayed: true`); the same key with a different body is refused (422).
 * A failed first request releases its key, so the client may retry it. A stored answer never holds a
 * signing secret: every `webhook_secret` is stored as null, and a replay asks `restore` for the task's
 * current one (docs/security.md#secrets-at-rest).
 */
import { createHash } from "node:crypto";
import type { Actor } from "../../application/access/actor.js";
import type { IdempotencyRepository } from "../../domain/ports/idempotency-repository.js";
import { ValidationError } from "../../domain/errors.js";
import type { JsonValue } from "../../domain/target.js";
import type { Instant } from "../../domain/time.js";
import { HttpProblem } from "./problem.js";
import type { Answer } from "./route-spec.js";

export const IDEMPOTENCY_HEADER = "idempotency-key";
const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** The request's key, or undefined; a malformed key is a validation problem. */
export function idempotencyKeyOf(headers: Record<string, unknown>): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !KEY_PATTERN.test(value)) {
    throw ValidationError.of("Idempotency-Key", "must be 1 to 200 visible ASCII characters");
  }
  return value;
}

/** JSON with sorted keys, so the same body hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return value === undefined ? "null" : JSON.stringify(value);
}

/** `value` with every `webhook_secret` that holds a secret set to null, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, field]) => [
      name,
      name === "webhook_secret" && typeof field === "string" ? null : withoutSecrets(field),
    ]),
  );
}

/**
 * Runs `act` once per key: a repeat answers what the first request answered, its secrets filled in by
 * `restore` (the stored answer has none).
 */
export async function idempotent(
  records: IdempotencyRepository,
  args: { actor: Actor; route: string; key: string | undefined; body: unknown; now: Instant },
  act: () => Promise<Answer>,
  restore: (stored: unknown) => Promise<unknown> = (stored) => Promise.resolve(stored),
): Promise<Answer> {
  if (args.key === undefined) return act();
  const scope = { owner: args.actor.owner, route: args.route, key: args.key };
  const hash = createHash("sha256")
    .update(canonical(args.body ?? null))
    .digest("hex");
  const existing = await records.reserve(scope, hash, args.now);
  if (existing !== null) {
    if (existing.statusCode === 0) {
      throw new HttpProblem(
        "idempotency_in_progress",
        "the first request with this Idempotency-Key is still in progress; retry shortly",
      );
    }
    if (existing.requestHash !== hash) {
      throw new HttpProblem(
        "idempotency_key_reused",
        "this Idempotency-Key was already used with a different request body",
      );
    }
    return {
      status: existing.statusCode,
      body: await restore(existing.response),
      headers: { "idempotent-replayed": "true" },
    };
  }
  let answer: Answer;
  try {
    answer = await act();
  } catch (error) {
    await records.release(scope);
    throw error;
  }
  await records.complete(scope, answer.status, withoutSecrets(answer.body ?? null) as JsonValue);
  return answer;
}
