/**
 * API tokens in SQLite (`api_tokens`, migration 0001): only the SHA-256 hash of a token is stored.
 */
import type { ApiToken, TokenRepository } from "../../../domain/ports/token-repository.js";
import { ownerId } from "../../../domain/ids.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import { settle } from "./sqlite-database.js";
import type { SqliteDatabase } from "./sqlite-database.js";

interface TokenRow {
  readonly id: string;
  readonly owner: string;
  readonly is_admin: number;
  readonly label: string | null;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

const COLUMNS = "id, owner, is_admin, label, created_at, revoked_at";

function tokenFromRow(row: TokenRow): ApiToken {
  return {
    id: row.id,
    owner: ownerId(row.owner),
    admin: row.is_admin === 1,
    label: row.label,
    createdAt: instant(row.created_at),
    revokedAt: row.revoked_at === null ? null : instant(row.revoked_at),
  };
}

export class SqliteTokenRepository implements TokenRepository {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  insertToken(token: ApiToken, tokenHash: string): Promise<void> {
    return settle(() => {
      this.#db
        .prepare(
          `INSERT INTO api_tokens (id, token_hash, owner, is_admin, label, created_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          token.id,
          tokenHash,
          token.owner,
          token.admin ? 1 : 0,
          token.label,
          token.createdAt,
          token.revokedAt,
        );
    });
  }

  findTokenByHash(tokenHash: string): Promise<ApiToken | null> {
    return settle(() => {
      const row = this.#db
        .prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`)
        .get(tokenHash) as TokenRow | undefined;
      return row === undefined ? null : tokenFromRow(row);
    });
  }

  listTokens(): Promise<readonly ApiToken[]> {
    return settle(() =>
      (
        this.#db
          .prepare(`SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`)
          .all() as TokenRow[]
      ).map(tokenFromRow),
    );
  }

  revokeToken(id: string, at: Instant): Promise<boolean> {
    return settle(
      () =>
        this.#db
          .prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
          .run(at, id).changes === 1,
    );
  }
}
