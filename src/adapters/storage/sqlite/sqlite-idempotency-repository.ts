/**
 * `Idempotency-Key` records in SQLite (`idempotency_records`, migrations 1 and 2). The reservation is an
 * `INSERT ... ON CONFLICT DO NOTHING`: exactly one request with a key wins it.
 */
import type {
  IdempotencyRecord,
  IdempotencyRepository,
  IdempotencyScope,
} from "../../../domain/ports/idempotency-repository.js";
import type { JsonValue } from "../../../domain/target.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase } from "./sqlite-database.js";

interface RecordRow {
  readonly request_hash: string;
  readonly status_code: number;
  readonly response: string;
  readonly created_at: number;
}

export class SqliteIdempotencyRepository implements IdempotencyRepository {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  reserve(
    scope: IdempotencyScope,
    requestHash: string,
    now: Instant,
  ): Promise<IdempotencyRecord | null> {
    return settle(() => {
      const inserted = this.#db
        .prepare(
          `INSERT INTO idempotency_records (owner, route, key, request_hash, status_code, response, created_at)
           VALUES (?, ?, ?, ?, 0, 'null', ?) ON CONFLICT DO NOTHING`,
        )
        .run(scope.owner, scope.route, scope.key, requestHash, now);
      if (inserted.changes === 1) return null;
      const row = this.#db
        .prepare(
          `SELECT request_hash, status_code, response, created_at FROM idempotency_records
           WHERE owner = ? AND route = ? AND key = ?`,
        )
        .get(scope.owner, scope.route, scope.key) as RecordRow | undefined;
      if (row === undefined) return null;
      return {
        requestHash: row.request_hash,
        statusCode: row.status_code,
        response: JSON.parse(row.response) as JsonValue,
        createdAt: instant(row.created_at),
      };
    });
  }

  complete(scope: IdempotencyScope, statusCode: number, response: JsonValue): Promise<void> {
    return settle(() => {
      this.#db
        .prepare(
          `UPDATE idempotency_records SET status_code = ?, response = ?
           WHERE owner = ? AND route = ? AND key = ?`,
        )
        .run(statusCode, JSON.stringify(response), scope.owner, scope.route, scope.key);
    });
  }

  release(scope: IdempotencyScope): Promise<void> {
    return settle(() => {
      this.#db
        .prepare(
          `DELETE FROM idempotency_records
           WHERE owner = ? AND route = ? AND key = ? AND status_code = 0`,
        )
        .run(scope.owner, scope.route, scope.key);
    });
  }

  purge(before: Instant, limit: number): Promise<number> {
    return settle(
      () =>
        this.#db
          .prepare(
            `DELETE FROM idempotency_records WHERE rowid IN (
               SELECT rowid FROM idempotency_records WHERE created_at < ?
               ORDER BY created_at LIMIT ?)`,
          )
          .run(before, Math.max(0, limit)).changes,
    );
  }
}
