/**
 * `Idempotency-Key` records in memory, keyed by owner, route and key (the SQL stores' primary key).
 */
import type {
  IdempotencyRecord,
  IdempotencyRepository,
  IdempotencyScope,
} from "../../../domain/ports/idempotency-repository.js";
import type { JsonValue } from "../../../domain/target.js";
import type { Instant } from "../../../domain/time.js";

function keyOf(scope: IdempotencyScope): string {
  return JSON.stringify([scope.owner, scope.route, scope.key]);
}

export class MemoryIdempotencyRepository implements IdempotencyRepository {
  readonly #records = new Map<string, IdempotencyRecord>();

  reserve(
    scope: IdempotencyScope,
    requestHash: string,
    now: Instant,
  ): Promise<IdempotencyRecord | null> {
    const key = keyOf(scope);
    const existing = this.#records.get(key);
    if (existing !== undefined) return Promise.resolve(existing);
    this.#records.set(key, { requestHash, statusCode: 0, response: null, createdAt: now });
    return Promise.resolve(null);
  }

  complete(scope: IdempotencyScope, statusCode: number, response: JsonValue): Promise<void> {
    const key = keyOf(scope);
    const existing = this.#records.get(key);
    if (existing !== undefined) this.#records.set(key, { ...existing, statusCode, response });
    return Promise.resolve();
  }

  release(scope: IdempotencyScope): Promise<void> {
    const key = keyOf(scope);
    if (this.#records.get(key)?.statusCode === 0) this.#records.delete(key);
    return Promise.resolve();
  }

  purge(before: Instant, limit: number): Promise<number> {
    const doomed = [...this.#records.entries()]
      .filter(([, record]) => record.createdAt < before)
      .sort(([, a], [, b]) => a.createdAt - b.createdAt)
      .slice(0, Math.max(0, limit));
    for (const [key] of doomed) this.#records.delete(key);
    return Promise.resolve(doomed.length);
  }
}
