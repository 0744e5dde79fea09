/**
 * `Idempotency-Key` records in PostgreSQL (`idempotency_records`, migration 0001). The reservation is an
 * `INSERT ... ON CONFLICT DO NOTHING`: exactly one request with a key wins it, on any replica.
 */
import type {
  IdempotencyRecord,
  IdempotencyRepository,
  IdempotencyScope,
} from "../../../domain/ports/idempotency-repository.js";
import type { JsonValue } from "../../../domain/target.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import { instantOf, integer, record, text } from "./postgres-rows.js";
import { msToTimestamp, timestampToMs } from "./postgres-sql.js";

export class PostgresIdempotencyRepository implements IdempotencyRepository {
  readonly #ctx: PostgresContext;
  readonly #table: string;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#table = `${ctx.schema.quoted}.idempotency_records`;
  }

  async reserve(
    scope: IdempotencyScope,
    requestHash: string,
    now: Instant,
  ): Promise<IdempotencyRecord | null> {
    const inserted = await this.#ctx.pool.query(
      `INSERT INTO ${this.#table} (owner, route, key, request_hash, status_code, response, created_at)
       VALUES ($1::text, $2::text, $3::text, $4::text, 0, 'null'::jsonb, ${msToTimestamp("$5::int8")})
       ON CONFLICT DO NOTHING`,
      [scope.owner, scope.route, scope.key, requestHash, now],
    );
    if (inserted.rowCount === 1) return null;
    const result = await this.#ctx.pool.query(
      `SELECT request_hash, status_code, response, ${timestampToMs("created_at")} AS created_at
       FROM ${this.#table} WHERE owner = $1::text AND route = $2::text AND key = $3::text`,
      [scope.owner, scope.route, scope.key],
    );
    if (result.rows[0] === undefined) return null;
    const row = record(result.rows[0]);
    return {
      requestHash: text(row, "request_hash"),
      statusCode: integer(row, "status_code"),
      response: (row["response"] ?? null) as JsonValue,
      createdAt: instantOf(row, "created_at"),
    };
  }

  async complete(scope: IdempotencyScope, statusCode: number, response: JsonValue): Promise<void> {
    await this.#ctx.pool.query(
      `UPDATE ${this.#table} SET status_code = $1::int4, response = $2::jsonb
       WHERE owner = $3::text AND route = $4::text AND key = $5::text`,
      [statusCode, JSON.stringify(response), scope.owner, scope.route, scope.key],
    );
  }

  async release(scope: IdempotencyScope): Promise<void> {
    await this.#ctx.pool.query(
      `DELETE FROM ${this.#table}
       WHERE owner = $1::text AND route = $2::text AND key = $3::text AND status_code = 0`,
      [scope.owner, scope.route, scope.key],
    );
  }

  async purge(before: Instant, limit: number): Promise<number> {
    const result = await this.#ctx.pool.query(
      `DELETE FROM ${this.#table} WHERE ctid IN (
         SELECT ctid FROM ${this.#table} WHERE created_at < ${msToTimestamp("$1::int8")}
         ORDER BY created_at LIMIT $2::int4)`,
      [before, Math.max(0, limit)],
    );
    return result.rowCount ?? 0;
  }
}
