/**
 * Identity from a trusted authenticating proxy (docs/security.md#auth-proxy), as Grafana's auth proxy:
 * when configured, a request without a bearer token whose `header` names a user is that user's, as owner,
 * provided the request provably comes from the proxy: it carries the shared secret in `secretHeader`, or
 * its peer address is one of `from`. Anything else falls through to the bearer token (and a 401). The
 * proxy must strip the user header from what clients send; punctual cannot tell.
 */
import { timingSafeEqual } from "node:crypto";
import { BlockList, isIP } from "node:net";
import type { FastifyRequest } from "fastify";

export interface AuthProxyOptions {
  /** The header naming the user (e.g. `X-Forwarded-User`). */
  readonly header: string;
  /** A header carrying a secret only the proxy knows, and that secret. */
  readonly secretHeader?: { readonly name: string; readonly secret: string };
  /** Peer addresses (IP, or IP/prefix) the proxy connects from. */
  readonly from?: readonly string[];
}

/** The owner a user header may name: what token owners may be (token-service.ts). */
const OWNER = /^[A-Za-z0-9._@-]{1,128}$/;

/** @throws Error naming the setting that is wrong */
export function checkedAuthProxy(options: AuthProxyOptions): AuthProxyOptions {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(options.header)) {
    throw new Error(`--auth-proxy-header must be a header name, not "${options.header}"`);
  }
  if (options.secretHeader === undefined && (options.from ?? []).length === 0) {
    throw new Error(
      "--auth-proxy-header needs --auth-proxy-secret-header (with $PUNCTUAL_AUTH_PROXY_SECRET) or --auth-proxy-from",
    );
  }
  if (options.secretHeader !== undefined && options.secretHeader.secret.length < 16) {
    throw new Error("$PUNCTUAL_AUTH_PROXY_SECRET must be at least 16 characters");
  }
  blockListOf(options.from ?? []);
  return options;
}

function blockListOf(addresses: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of addresses) {
    const [address = "", prefix] = entry.split("/");
    const family = isIP(address);
    if (family === 0) throw new Error(`--auth-proxy-from must be an IP address, not "${entry}"`);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) {
      list.addAddress(address, type);
    } else {
      const bits = Number(prefix);
      if (!/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) {
        throw new Error(`--auth-proxy-from has a bad prefix length in "${entry}"`);
      }
      list.addSubnet(address, bits, type);
    }
  }
  return list;
}

/** Reads the proxy's user from requests; `ownerOf` answers null when the request is not the proxy's. */
export class AuthProxy {
  readonly #header: string;
  readonly #secretHeader: { readonly name: string; readonly secret: Buffer } | null;
  readonly #from: BlockList | null;

  constructor(options: AuthProxyOptions) {
    checkedAuthProxy(options);
    this.#header = options.header.toLowerCase();
    this.#secretHeader =
      options.secretHeader === undefined
        ? null
        : {
            name: options.secretHeader.name.toLowerCase(),
            secret: Buffer.from(options.secretHeader.secret),
          };
    this.#from = (options.from ?? []).length === 0 ? null : blockListOf(options.from ?? []);
  }

  /** The owner the proxy names, or null (no user header, not from the proxy, or not an owner name). */
  ownerOf(request: FastifyRequest): string | null {
    const user = request.headers[this.#header];
    if (typeof user !== "string" || !OWNER.test(user.trim())) return null;
    return this.#trusted(request) ? user.trim() : null;
  }

  #trusted(request: FastifyRequest): boolean {
    if (this.#secretHeader !== null) {
      const sent = request.headers[this.#secretHeader.name];
      if (typeof sent === "string") {
        const given = Buffer.from(sent);
        const secret = this.#secretHeader.secret;
        if (given.length === secret.length && timingSafeEqual(given, secret)) return true;
      }
    }
    const remote = request.socket.remoteAddress;
    if (this.#from === null || remote === undefined) return false;
    const peer = /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(remote) ? remote.slice(7) : remote;
    const family = isIP(peer);
    if (family === 0) return false;
    return this.#from.check(peer, family === 4 ? "ipv4" : "ipv6");
  }
}
