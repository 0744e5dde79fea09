/**
 * A per-token rate limit (docs/security.md): a token bucket in memory, per replica. A request takes one token; an
 * empty bucket answers 429 with `Retry-After` (whole seconds until a token is back). The same buckets,
 * keyed by client address (`addressKey`), limit the callback routes and throttle failed attempts.
 */
import ipaddr from "ipaddr.js";

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

  /** The seconds until `key` has a token at `nowMs` (0: it has one), taking none. */
  waitFor(key: string, nowMs: number): number {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return 0;
    const elapsed = Math.max(0, nowMs - bucket.at) / 1000;
    const tokens = Math.min(this.#burst, bucket.tokens + elapsed * this.#perSecond);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.#perSecond));
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

/** The per-address limits (docs/security.md#callback-routes). */
export interface AddressLimitOptions {
  /** The callback routes, per address. @default 300 burst, 100 per second */
  readonly callbacks?: RateLimitOptions;
  /** Failed attempts (401, a callback's 404), per address. @default 30 burst, 1 per second */
  readonly failures?: RateLimitOptions;
}

/**
 * The bucket a client address counts against: an IPv4 address (an IPv4-mapped one as its IPv4), or an
 * IPv6 address's /64 (one host commonly holds a whole /64, so its addresses share one bucket).
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
}
