/**
 * `Idempotency-Key` records of the HTTP API: the first answer to a request, kept by owner, route and key
 * so a repeat returns it. A record is first reserved (so two concurrent requests with one key cannot both
 * act), then completed with the answer, or released when the request failed.
 */
import type { OwnerId } from "../ids.js";
import type { JsonValue } from "../target.js";
import type { Instant } from "../time.js";

export interface IdempotencyScope {
  readonly owner: OwnerId;
  /** The method and the concrete path, e.g. `POST /v1/tasks/01J.../trigger`. */
  readonly route: string;
  readonly key: string;
}

export interface IdempotencyRecord {
  /** A hash of the request body, to refuse a different request with the same key. */
  readonly requestHash: string;
  /** The answer's status; 0 while the first request is still in progress. */
  readonly statusCode: number;
  readonly response: JsonValue;
  readonly createdAt: Instant;
}

export interface IdempotencyRepository {
  /**
   * Reserves the key for a request: returns null when the reservation is new (the caller acts, then
   * completes or releases it), or the record already there (completed, or in progress).
   */
  reserve(
    scope: IdempotencyScope,
    requestHash: string,
    now: Instant,
  ): Promise<IdempotencyRecord | null>;
  /** Stores the answer of a reserved request. */
  complete(scope: IdempotencyScope, statusCode: number, response: JsonValue): Promise<void>;
  /** Drops a reservation whose request failed, so the client may retry with the same key. */
  release(scope: IdempotencyScope): Promise<void>;
  /**
   * Deletes up to `limit` records made before `before` (oldest first), completed or not: a key is
   * remembered for the retention only. Returns how many were deleted.
   */
  purge(before: Instant, limit: number): Promise<number>;
}
