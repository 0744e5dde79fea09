/**
 * API tokens (docs/security.md): made by the CLI (or `npm start`'s first run), shown once, stored only as hashes,
 * revocable. `authenticate` turns a bearer token into the actor it acts as.
 */
import { NotFoundError, ValidationError } from "../../domain/errors.js";
import type { OwnerId } from "../../domain/ids.js";
import type { Instant } from "../../domain/time.js";
import type { Actor } from "./actor.js";
import type { ApiToken, TokenRepository } from "../../domain/ports/token-repository.js";

export interface TokenServiceDeps {
  readonly tokens: TokenRepository;
  /** A fresh random secret (at least 128 bits), e.g. `pct_` + 43 base64url characters. */
  readonly newSecret: () => string;
  /** A one-way hash of a secret (SHA-256, hex). */
  readonly hash: (secret: string) => string;
  readonly newId: () => string;
}

const OWNER_PATTERN = /^[A-Za-z0-9._@-]{1,128}$/;

export interface AuthenticatedToken {
  readonly token: ApiToken;
  readonly actor: Actor;
}

export class TokenService {
  readonly #deps: TokenServiceDeps;

  constructor(deps: TokenServiceDeps) {
    this.#deps = deps;
  }

  /** Makes a token; the returned `secret` is never stored and cannot be shown again. */
  async create(
    input: { owner: string; admin?: boolean; label?: string | null },
    now: Instant,
  ): Promise<{ token: ApiToken; secret: string }> {
    if (!OWNER_PATTERN.test(input.owner)) {
      throw ValidationError.of("owner", "must be 1 to 128 letters, digits or . _ @ -");
    }
    if (input.label !== undefined && input.label !== null && input.label.length > 200) {
      throw ValidationError.of("label", "must be at most 200 characters");
    }
    const secret = this.#deps.newSecret();
    const token: ApiToken = {
      id: this.#deps.newId(),
      owner: input.owner as OwnerId,
      admin: input.admin ?? false,
      label: input.label ?? null,
      createdAt: now,
      revokedAt: null,
    };
    await this.#deps.tokens.insertToken(token, this.#deps.hash(secret));
    return { token, secret };
  }

  list(): Promise<readonly ApiToken[]> {
    return this.#deps.tokens.listTokens();
  }

  /** @throws not_found when no unrevoked token has this id */
  async revoke(id: string, now: Instant): Promise<void> {
    if (!(await this.#deps.tokens.revokeToken(id, now))) throw new NotFoundError("token", id);
  }

  /** The actor a bearer secret acts as, or null when it is unknown or revoked. */
  async authenticate(secret: string): Promise<AuthenticatedToken | null> {
    if (secret.length === 0 || secret.length > 512) return null;
    const token = await this.#deps.tokens.findTokenByHash(this.#deps.hash(secret));
    if (token === null || token.revokedAt !== null) return null;
    return { token, actor: { owner: token.owner, admin: token.admin } };
  }

  /** True when at least one unrevoked token exists (`npm start` makes one otherwise). */
  async hasActiveToken(): Promise<boolean> {
    return (await this.#deps.tokens.listTokens()).some((t) => t.revokedAt === null);
  }
}
