/**
 * API tokens in PostgreSQL (`api_tokens`, migration 0001): only the SHA-256 hash of a token is stored.
 */
import type { ApiToken, TokenRepository } from "../../../domain/ports/token-repository.js";
import { ownerId } from "../../../domain/ids.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import { instantOf, instantOrNull, record, text } from "./postgres-rows.js";
import { msToTimestamp, timestampToMs } from "./postgres-sql.js";

const COLUMNS = `id, owner, is_admin, label, ${timestampToMs("created_at")} AS created_at,
  ${timestampToMs("revoked_at")} AS revoked_at`;

function tokenFromRow(value: unknown): ApiToken {
  const row = record(value);
  const label = row["label"];
  return {
    id: text(row, "id"),
    owner: ownerId(text(row, "owner")),
    admin: row["is_admin"] === true,
    label: typeof label === "string" ? label : null,
    createdAt: instantOf(row, "created_at"),
    revokedAt: instantOrNull(row, "revoked_at"),
  };
}

export class PostgresTokenRepository implements TokenRepository {
  readonly #ctx: PostgresContext;
  readonly #table: string;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#table = `${ctx.schema.quoted}.api_tokens`;
  }

  async insertToken(token: ApiToken, tokenHash: string): Promise<void> {
    await this.#ctx.pool.query(
      `INSERT INTO ${this.#table} (id, token_hash, owner, is_admin, label, created_at, revoked_at)
       VALUES ($1::text, $2::text, $3::text, $4::bool, $5::text, ${msToTimestamp("$6::int8")},
               ${msToTimestamp("$7::int8")})`,
      [
        token.id,
        tokenHash,
        token.owner,
        token.admin,
        token.label,
        token.createdAt,
        token.revokedAt,
      ],
    );
  }

  async findTokenByHash(tokenHash: string): Promise<ApiToken | null> {
    const result = await this.#ctx.pool.query(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE token_hash = $1::text`,
      [tokenHash],
    );
    const row = result.rows[0];
    return row === undefined ? null : tokenFromRow(row);
  }

  async listTokens(): Promise<readonly ApiToken[]> {
    const result = await this.#ctx.pool.query(
      `SELECT ${COLUMNS} FROM ${this.#table} ORDER BY created_at, id`,
    );
    return result.rows.map(tokenFromRow);
  }

  async revokeToken(id: string, at: Instant): Promise<boolean> {
    const result = await this.#ctx.pool.query(
      `UPDATE ${this.#table} SET revoked_at = ${msToTimestamp("$1::int8")}
       WHERE id = $2::text AND revoked_at IS NULL`,
      [at, id],
    );
    return result.rowCount === 1;
  }
}
