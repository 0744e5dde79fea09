/**
 * A per-token rate limit (docs/security.md): a token bucket in memory, per replica. A request takes one token; an
 * empty bucket answers 429 with `Retry-After` (whole seconds until a token is back).
 */

export interface RateLimitOptions {
  /** Requests allowed in a burst. @default 100 */
  readonly burst?: number;
  /** Tokens added back per second. @default 20 */
  readonly perSecond?: number;
}

/** The limit when none is configured. */
export const RATE_LIMIT_DEFAULTS: Required<RateLimitOptions> = { burst: 100, perSecond: 20 };

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #burst: number;
  readonly #perSecond: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions = {}) {
    this.#burst = options.burst ?? RATE_LIMIT_DEFAULTS.burst;
    this.#perSecond = options.perSecond ?? RATE_LIMIT_DEFAULTS.perSecond;
  }

  /** Takes one token for `key` at `nowMs`: 0 when allowed, otherwise the seconds to wait. */
  take(key: string, nowMs: number): number {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, at: nowMs };
    const elapsed = Math.max(0, nowMs - bucket.at) / 1000;
    bucket.tokens = Math.min(this.#burst, bucket.tokens + elapsed * this.#perSecond);
    bucket.at = nowMs;
    if (this.#buckets.size > 10_000 && !this.#buckets.has(key)) this.#buckets.clear();
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perSecond));
  }
}
