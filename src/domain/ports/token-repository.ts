/**
 * API tokens (docs/security.md): the port that stores them. Only a token's SHA-256 hash is ever stored; the token
 * itself is shown once, when it is made. Tokens are not a scheduling concept, so the port lives here,
 * not in the domain.
 */
import type { OwnerId } from "../ids.js";
import type { Instant } from "../time.js";

/** A stored token, without its secret. */
export interface ApiToken {
  readonly id: string;
  readonly owner: OwnerId;
  /** An admin token sees every owner's tasks and runs. */
  readonly admin: boolean;
  readonly label: string | null;
  readonly createdAt: Instant;
  readonly revokedAt: Instant | null;
}

export interface TokenRepository {
  /** Stores a new token by the hash of its secret. */
  insertToken(token: ApiToken, tokenHash: string): Promise<void>;
  /** The token whose secret hashes to `tokenHash` (revoked or not), or null. */
  findTokenByHash(tokenHash: string): Promise<ApiToken | null>;
  /** Every token, oldest first. */
  listTokens(): Promise<readonly ApiToken[]>;
  /** Marks a token revoked; false when no unrevoked token has this id. */
  revokeToken(id: string, at: Instant): Promise<boolean>;
}
