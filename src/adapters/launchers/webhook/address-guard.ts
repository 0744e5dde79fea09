/**
 * SSRF protection for webhook targets (docs/targets.md#ssrf-protection): only `https`, or hosts the operator
 * allow-listed (`PUNCTUAL_WEBHOOK_ALLOW`, an entry may name a port); every address in an IANA
 * special-purpose range (loopback, private, link-local, documentation, benchmarking, ...) is refused unless
 * allow-listed. The ranges come from ipaddr.js's maintained table; IPv4 carried inside IPv6 (mapped,
 * compatible, translated, NAT64, 6to4, Teredo) is decoded and judged as IPv4. Checked after DNS resolution;
 * the caller connects to the address returned.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

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

/**
 * Parses `PUNCTUAL_WEBHOOK_ALLOW`: comma-separated host names or IP addresses, each optionally with a port
 * (`hooks.internal:8443`, `[::1]:8080`); blanks ignored.
 */
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

/** One allow-list entry: a host (name or address) and, when it names one, the only port it opens. */
export interface AllowEntry {
  readonly host: string;
  readonly port: number | null;
}

/** Reads one allow-list entry: `host`, `host:port`, an IPv6 address, or `[v6]:port`. */
export function parseAllowEntry(entry: string): AllowEntry {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed?.[1] !== undefined) {
    return { host: normalizeHost(bracketed[1]), port: portOf(bracketed[2]) };
  }
  if (isIP(text) === 6) return { host: normalizeHost(text), port: null };
  const withPort = /^([^:]+):(\d{1,5})$/.exec(text);
  if (withPort?.[1] !== undefined) {
    return { host: normalizeHost(withPort[1]), port: portOf(withPort[2]) };
  }
  return { host: normalizeHost(text), port: null };
}

function portOf(text: string | undefined): number | null {
  if (text === undefined) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** The port a URL connects to (its explicit port, else its scheme's). */
function urlPort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "http:" ? 80 : 443;
}

/** Decides where a webhook URL may be sent. */
export class AddressGuard {
  readonly #allow: readonly AllowEntry[];
  readonly #resolve: HostResolver;

  constructor(allow: readonly string[], resolve: HostResolver = resolveWithDns) {
    this.#allow = allow.map(parseAllowEntry);
    this.#resolve = resolve;
  }

  #allows(host: string, port: number): boolean {
    return this.#allow.some((entry) => entry.host === host && (entry.port ?? port) === port);
  }

  /**
   * The address to connect to for `url`, checked after resolution.
   * @throws SsrfRefusal when the scheme or any resolved address is not allowed
   * @throws UnresolvedHost when the host does not resolve
   */
  async check(url: URL): Promise<ResolvedAddress> {
    const host = normalizeHost(url.hostname);
    const port = urlPort(url);
    const hostAllowed = this.#allows(host, port);
    const refusal = this.refusalBeforeLookup(url);
    if (refusal !== null) throw new SsrfRefusal(refusal);
    const addresses = await this.#addressesOf(host);
    for (const { address } of addresses) {
      const kind = forbiddenKind(address);
      if (kind !== null && !hostAllowed && !this.#allows(normalizeHost(address), port)) {
        throw new SsrfRefusal(
          `refused by SSRF protection: ${url.hostname} resolves to ${address}, a ${kind} address; ` +
            "allow-list the host (and port) in PUNCTUAL_WEBHOOK_ALLOW to call it",
        );
      }
    }
    // Every address passed: connect to the first, so a second resolution cannot swap it.
    const first = addresses[0];
    if (first === undefined) throw new UnresolvedHost(`${url.hostname} has no address`);
    return first;
  }

  /**
   * Why the guard would refuse `url` whatever its host resolves to, or null: a scheme other than https
   * (or http to an allow-listed host), an IP address in a special-purpose range, or a `localhost` name,
   * unless allow-listed. Checked at create and edit; names that resolve to such addresses are refused
   * at launch, where the answer is current.
   */
  refusalBeforeLookup(url: URL): string | null {
    const host = normalizeHost(url.hostname);
    const port = urlPort(url);
    const hostAllowed = this.#allows(host, port);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && hostAllowed)) {
      return (
        `refused by SSRF protection: ${url.protocol}//${url.host} is neither https nor an ` +
        "allow-listed host and port (PUNCTUAL_WEBHOOK_ALLOW)"
      );
    }
    if (hostAllowed) return null;
    const kind =
      isIP(host) !== 0
        ? forbiddenKind(host)
        : host === "localhost" || host.endsWith(".localhost")
          ? "loopback"
          : null;
    if (kind === null) return null;
    return (
      `refused by SSRF protection: ${url.hostname} is a ${kind} address; ` +
      "allow-list the host (and port) in PUNCTUAL_WEBHOOK_ALLOW to call it"
    );
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

/** ipaddr.js's IPv4 range names, in the words a refusal uses; `unicast` (any other address) is allowed. */
const V4_KINDS: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "private (shared CGNAT)",
  private: "private",
  reserved: "reserved",
  as112: "reserved (AS112)",
  amt: "reserved (AMT)",
};

/** ipaddr.js's IPv6 range names that carry no IPv4 to judge, in the words a refusal uses. */
const V6_KINDS: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  linkLocal: "link-local",
  multicast: "multicast",
  loopback: "loopback",
  uniqueLocal: "private (unique local)",
  deprecatedSiteLocal: "private (site-local)",
  discard: "reserved (discard-only)",
  benchmarking: "reserved (benchmarking)",
  amt: "reserved (AMT)",
  as112v6: "reserved (AS112)",
  deprecatedOrchid: "reserved (ORCHID)",
  orchid2: "reserved (ORCHIDv2)",
  droneRemoteIdProtocolEntityTags: "reserved (drone remote ID)",
  segmentRouting: "reserved (SRv6 SIDs)",
  reserved: "reserved",
};

/**
 * IANA special-purpose IPv6 ranges ipaddr.js 2.5 does not name yet: the dummy prefix (RFC 9780).
 * IPv4-compatible `::/96` is decoded instead (below).
 */
const V6_EXTRA: readonly (readonly [ipaddr.IPv6, number, string])[] = [
  [ipaddr.IPv6.parse("100:0:0:1::"), 64, "reserved (dummy prefix)"],
];

/**
 * Why an address must not be called without the operator's consent, or null for a public address.
 * Any range other than ipaddr.js's `unicast` is refused; IPv4 inside IPv6 is judged as that IPv4.
 */
export function forbiddenKind(address: string): string | null {
  const bare = address.split("%")[0] ?? "";
  const family = isIP(bare);
  if (family === 4) return forbiddenV4(ipaddr.IPv4.parse(bare));
  if (family === 6) return forbiddenV6(ipaddr.IPv6.parse(bare));
  return "malformed";
}

function forbiddenV4(address: ipaddr.IPv4): string | null {
  const range = address.range();
  if (range === "unicast") return null;
  return V4_KINDS[range] ?? `special-purpose (${range})`;
}

/** The IPv4 address in two 16-bit groups. */
function v4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The embedded IPv4's verdict, naming how it was carried. */
function embedded(carrier: string, v4: ipaddr.IPv4): string | null {
  const kind = forbiddenV4(v4);
  return kind === null ? null : `${kind} (IPv4 ${v4.toString()} in ${carrier})`;
}

function forbiddenV6(address: ipaddr.IPv6): string | null {
  const h = address.parts;
  const at = (i: number): number => h[i] ?? 0;
  const range = address.range();
  switch (range) {
    case "ipv4Mapped":
    case "rfc6145":
      return embedded("IPv4-mapped IPv6", v4Of(at(6), at(7)));
    case "rfc6052":
      // 64:ff9b::/96 (RFC 6052) carries the IPv4 in its last 32 bits. The local-use prefix
      // 64:ff9b:1::/48 (RFC 8215) is not globally reachable, and where its IPv4 sits depends on the
      // operator's prefix length: it is refused whole.
      if (at(2) !== 0) return "reserved (NAT64 local-use)";
      return embedded("NAT64", v4Of(at(6), at(7)));
    case "6to4":
      return embedded("6to4", v4Of(at(1), at(2)));
    case "teredo":
      // 2001:0:server:server:flags:port:~client:~client (RFC 4380): both IPv4 addresses are judged.
      return (
        embedded("Teredo (server)", v4Of(at(2), at(3))) ??
        embedded("Teredo (client)", v4Of(at(6) ^ 0xffff, at(7) ^ 0xffff))
      );
    case "unicast":
      break;
    default:
      return V6_KINDS[range] ?? `special-purpose (${range})`;
  }
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291): the first 96 bits are zero.
  if (h.slice(0, 6).every((group) => group === 0)) {
    return embedded("IPv4-compatible IPv6", v4Of(at(6), at(7)));
  }
  for (const [prefix, bits, kind] of V6_EXTRA) {
    if (address.match(prefix, bits)) return kind;
  }
  return null;
}
