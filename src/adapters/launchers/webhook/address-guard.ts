/**
 * SSRF protection for webhook targets (docs/security.md): only `https`, or hosts the operator allow-listed
 * (`PUNCTUAL_WEBHOOK_ALLOW`); loopback, private, link-local, unspecified, multicast and reserved addresses
 * are refused unless allow-listed. Checked after DNS resolution; the caller connects to the address returned.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";

/** One resolved address, as `dns.lookup` gives it. */
export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Resolves a host name to all its addresses (`dns.lookup` with `all: true` by default). */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The destination refused by the guard: nothing was sent. */
export class SsrfRefusal extends Error {
  override readonly name = "SsrfRefusal";
}

/** A host that could not be resolved: nothing was sent. */
export class UnresolvedHost extends Error {
  override readonly name = "UnresolvedHost";
}

export const resolveWithDns: HostResolver = async (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

/** Parses `PUNCTUAL_WEBHOOK_ALLOW`: comma-separated host names or IP addresses (blanks ignored). */
export function parseAllowList(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** Lower case, without IPv6 brackets or a trailing dot; IP addresses in the URL parser's canonical form. */
export function normalizeHost(host: string): string {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  try {
    if (isIP(bare) === 6) return new URL(`http://[${bare}]`).hostname.slice(1, -1);
    if (isIP(bare) === 4) return new URL(`http://${bare}`).hostname;
  } catch {
    return bare;
  }
  return bare;
}

/** Decides where a webhook URL may be sent. */
export class AddressGuard {
  readonly #allow: ReadonlySet<string>;
  readonly #resolve: HostResolver;

  constructor(allow: readonly string[], resolve: HostResolver = resolveWithDns) {
    this.#allow = new Set(allow.map(normalizeHost));
    this.#resolve = resolve;
  }

  /**
   * The address to connect to for `url`, checked after resolution.
   * @throws SsrfRefusal when the scheme or any resolved address is not allowed
   * @throws UnresolvedHost when the host does not resolve
   */
  async check(url: URL): Promise<ResolvedAddress> {
    const host = normalizeHost(url.hostname);
    const hostAllowed = this.#allow.has(host);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && hostAllowed)) {
      throw new SsrfRefusal(
        `refused by SSRF protection: ${url.protocol}//${url.host} is neither https nor an ` +
          "allow-listed host (PUNCTUAL_WEBHOOK_ALLOW)",
      );
    }
    const addresses = await this.#addressesOf(host);
    for (const { address } of addresses) {
      const kind = forbiddenKind(address);
      if (kind !== null && !hostAllowed && !this.#allow.has(normalizeHost(address))) {
        throw new SsrfRefusal(
          `refused by SSRF protection: ${url.hostname} resolves to ${address}, a ${kind} address; ` +
            "allow-list the host in PUNCTUAL_WEBHOOK_ALLOW to call it",
        );
      }
    }
    // Every address passed: connect to the first, so a second resolution cannot swap it.
    const first = addresses[0];
    if (first === undefined) throw new UnresolvedHost(`${url.hostname} has no address`);
    return first;
  }

  async #addressesOf(host: string): Promise<readonly ResolvedAddress[]> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family }];
    try {
      return await this.#resolve(host);
    } catch (error) {
      throw new UnresolvedHost(`could not resolve ${host}`, { cause: error });
    }
  }
}

/** Why an address must not be called without the operator's consent, or null for a public address. */
export function forbiddenKind(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return forbiddenV4(v4Octets(address));
  if (family === 6) return forbiddenV6(v6Hextets(address));
  return "malformed";
}

function v4Octets(address: string): number[] {
  return address.split(".").map(Number);
}

function forbiddenV4(octets: readonly number[]): string | null {
  const [a = 0, b = 0] = octets;
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private (shared CGNAT)";
  if (a === 169 && b === 254) return "link-local";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "reserved";
  return null;
}

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail becomes two groups). */
function v6Hextets(address: string): number[] {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = v4Octets(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string): number[] =>
    part === "" ? [] : part.split(":").map((group) => parseInt(group, 16));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0);
  return [...left, ...zeros, ...right];
}

function forbiddenV6(h: readonly number[]): string | null {
  const at = (i: number): number => h[i] ?? 0;
  const embedded = (): number[] => [at(6) >> 8, at(6) & 0xff, at(7) >> 8, at(7) & 0xff];
  const firstSixZero = h.slice(0, 6).every((group) => group === 0);
  if (firstSixZero && at(6) === 0 && at(7) === 0) return "unspecified";
  if (firstSixZero && at(6) === 0 && at(7) === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d): judge the IPv4.
  const mapped = h.slice(0, 5).every((group) => group === 0) && at(5) === 0xffff;
  const nat64 = at(0) === 0x64 && at(1) === 0xff9b && h.slice(2, 6).every((group) => group === 0);
  if (mapped || firstSixZero || nat64) return forbiddenV4(embedded());
  if ((at(0) & 0xfe00) === 0xfc00) return "private (unique local)";
  if ((at(0) & 0xffc0) === 0xfe80) return "link-local";
  if ((at(0) & 0xffc0) === 0xfec0) return "private (site-local)";
  if ((at(0) & 0xff00) === 0xff00) return "multicast";
  return null;
}
