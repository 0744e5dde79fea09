/**
 * API tokens in memory, keyed by their hash (the SQL stores' unique index on `token_hash`).
 */
import type { ApiToken, TokenRepository } from "../../../domain/ports/token-repository.js";
import type { Instant } from "../../../domain/time.js";

export class MemoryTokenRepository implements TokenRepository {
  readonly #byHash = new Map<string, string>();
  readonly #tokens = new Map<string, ApiToken>();

  insertToken(token: ApiToken, tokenHash: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.#byHash.has(tokenHash) || this.#tokens.has(token.id)) {
        throw new Error("unique constraint api_tokens violated");
      }
      this.#byHash.set(tokenHash, token.id);
      this.#tokens.set(token.id, token);
      resolve();
    });
  }

  findTokenByHash(tokenHash: string): Promise<ApiToken | null> {
    const id = this.#byHash.get(tokenHash);
    return Promise.resolve(id === undefined ? null : (this.#tokens.get(id) ?? null));
  }

  listTokens(): Promise<readonly ApiToken[]> {
    return Promise.resolve([...this.#tokens.values()]);
  }

  revokeToken(id: string, at: Instant): Promise<boolean> {
    const token = this.#tokens.get(id);
    if (token === undefined || token.revokedAt !== null) return Promise.resolve(false);
    this.#tokens.set(id, { ...token, revokedAt: at });
    return Promise.resolve(true);
  }
}
