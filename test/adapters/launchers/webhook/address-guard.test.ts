/**
 * The SSRF guard's address rules (docs/security.md): which addresses are refused without the operator's consent,
 * how the allow list is read, and that every resolved address is checked.
 */
import { describe, expect, it } from "vitest";
import {
  AddressGuard,
  forbiddenKind,
  normalizeHost,
  parseAllowEntry,
  parseAllowList,
  SsrfRefusal,
  UnresolvedHost,
} from "../../../../src/adapters/launchers/webhook/address-guard.js";
import type { HostResolver } from "../../../../src/adapters/launchers/webhook/address-guard.js";

const resolver =
  (table: Record<string, string[]>): HostResolver =>
  (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) return Promise.reject(new Error(`ENOTFOUND ${hostname}`));
    return Promise.resolve(
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  };

describe("forbiddenKind", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private (shared CGNAT)"],
    ["169.254.169.254", "link-local"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fc00::1", "private (unique local)"],
    ["fd12:3456::1", "private (unique local)"],
    ["fe80::1", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 in IPv4-mapped IPv6)"],
    ["::ffff:7f00:1", "loopback (IPv4 127.0.0.1 in IPv4-mapped IPv6)"],
    ["::ffff:a9fe:a9fe", "link-local (IPv4 169.254.169.254 in IPv4-mapped IPv6)"],
    ["64:ff9b::10.0.0.1", "private (IPv4 10.0.0.1 in NAT64)"],
  ])("refuses %s as %s", (address, kind) => {
    expect(forbiddenKind(address)).toBe(kind);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "192.169.0.1",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
  ])("lets the public address %s through", (address) => {
    expect(forbiddenKind(address)).toBeNull();
  });
});

/**
 * Every entry of IANA's special-purpose address registries (iana-ipv4-special-registry and
 * iana-ipv6-special-registry), plus multicast and site-local: its first and last address are refused.
 */
const IANA_SPECIAL: readonly (readonly [range: string, first: string, last: string])[] = [
  ["0.0.0.0/8 this network", "0.0.0.0", "0.255.255.255"],
  ["10.0.0.0/8 private", "10.0.0.0", "10.255.255.255"],
  ["100.64.0.0/10 shared address space", "100.64.0.0", "100.127.255.255"],
  ["127.0.0.0/8 loopback", "127.0.0.0", "127.255.255.255"],
  ["169.254.0.0/16 link local", "169.254.0.0", "169.254.255.255"],
  ["172.16.0.0/12 private", "172.16.0.0", "172.31.255.255"],
  ["192.0.0.0/24 IETF protocol assignments", "192.0.0.0", "192.0.0.255"],
  ["192.0.0.0/29 IPv4 service continuity", "192.0.0.0", "192.0.0.7"],
  ["192.0.0.8/32 IPv4 dummy address", "192.0.0.8", "192.0.0.8"],
  ["192.0.0.9/32 port control protocol anycast", "192.0.0.9", "192.0.0.9"],
  ["192.0.0.10/32 TURN anycast", "192.0.0.10", "192.0.0.10"],
  ["192.0.0.170/32 NAT64/DNS64 discovery", "192.0.0.170", "192.0.0.171"],
  ["192.0.2.0/24 TEST-NET-1", "192.0.2.0", "192.0.2.255"],
  ["192.31.196.0/24 AS112-v4", "192.31.196.0", "192.31.196.255"],
  ["192.52.193.0/24 AMT", "192.52.193.0", "192.52.193.255"],
  ["192.88.99.0/24 deprecated 6to4 relay anycast", "192.88.99.0", "192.88.99.255"],
  ["192.168.0.0/16 private", "192.168.0.0", "192.168.255.255"],
  ["192.175.48.0/24 direct delegation AS112", "192.175.48.0", "192.175.48.255"],
  ["198.18.0.0/15 benchmarking", "198.18.0.0", "198.19.255.255"],
  ["198.51.100.0/24 TEST-NET-2", "198.51.100.0", "198.51.100.255"],
  ["203.0.113.0/24 TEST-NET-3", "203.0.113.0", "203.0.113.255"],
  ["224.0.0.0/4 multicast", "224.0.0.0", "239.255.255.255"],
  ["240.0.0.0/4 reserved", "240.0.0.0", "255.255.255.254"],
  ["255.255.255.255/32 limited broadcast", "255.255.255.255", "255.255.255.255"],
  ["::1/128 loopback", "::1", "::1"],
  ["::/128 unspecified", "::", "::"],
  ["::ffff:0:0/96 IPv4-mapped (of a forbidden IPv4)", "::ffff:0.0.0.0", "::ffff:10.255.255.255"],
  ["::/96 IPv4-compatible (of a forbidden IPv4)", "::127.0.0.1", "::192.168.0.1"],
  ["::ffff:0:0:0/96 IPv4-translated (of a forbidden IPv4)", "::ffff:0:7f00:1", "::ffff:0:a00:1"],
  [
    "64:ff9b::/96 IPv4-IPv6 translation (of a forbidden IPv4)",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
  ],
  [
    "64:ff9b:1::/48 local-use IPv4/IPv6 translation",
    "64:ff9b:1::",
    "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
  ],
  ["100::/64 discard-only", "100::", "100::ffff:ffff:ffff:ffff"],
  ["100:0:0:1::/64 dummy IPv6 prefix", "100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff"],
  ["2001::/23 IETF protocol assignments", "2001:100::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"],
  [
    "2001::/32 Teredo (of a forbidden server)",
    "2001:0:7f00:1::",
    "2001:0:a00:1:ffff:ffff:ffff:ffff",
  ],
  [
    "2001::/32 Teredo (of a forbidden client)",
    "2001:0:808:808::80ff:fffe",
    "2001:0:808:808:0:0:f5ff:fffe",
  ],
  ["2001:1::1/128 port control protocol anycast", "2001:1::1", "2001:1::1"],
  ["2001:1::2/128 TURN anycast", "2001:1::2", "2001:1::2"],
  ["2001:1::3/128 DNS-SD service registration anycast", "2001:1::3", "2001:1::3"],
  ["2001:2::/48 benchmarking", "2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"],
  ["2001:3::/32 AMT", "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["2001:4:112::/48 AS112-v6", "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff"],
  ["2001:10::/28 deprecated ORCHID", "2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["2001:20::/28 ORCHIDv2", "2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["2001:30::/28 drone remote ID", "2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["2001:db8::/32 documentation", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"],
  [
    "2002::/16 6to4 (of a forbidden IPv4)",
    "2002:7f00:1::",
    "2002:c0a8:ffff:ffff:ffff:ffff:ffff:ffff",
  ],
  [
    "2620:4f:8000::/48 direct delegation AS112",
    "2620:4f:8000::",
    "2620:4f:8000:ffff:ffff:ffff:ffff:ffff",
  ],
  ["3fff::/20 documentation", "3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["5f00::/16 segment routing SIDs", "5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["fc00::/7 unique local", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["fe80::/10 link-local", "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["fec0::/10 deprecated site-local", "fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
  ["ff00::/8 multicast", "ff00::", "ff0e::1"],
];

describe("every IANA special-purpose range", () => {
  it.each(IANA_SPECIAL)("refuses %s (%s .. %s)", (_range, first, last) => {
    expect(forbiddenKind(first)).not.toBeNull();
    expect(forbiddenKind(last)).not.toBeNull();
  });

  it.each([
    ["::ffff:8.8.8.8", "IPv4-mapped"],
    ["64:ff9b::808:808", "NAT64"],
    ["2002:808:808::1", "6to4"],
    ["2001:0:808:808::f7f7:f7f7", "Teredo (server and client 8.8.8.8)"],
    ["192.0.1.1", "just past 192.0.0.0/24"],
    ["198.20.0.1", "just past 198.18.0.0/15"],
    ["2001:db9::1", "just past 2001:db8::/32"],
    ["100:0:0:2::1", "just past 100::/64 and 100:0:0:1::/64"],
  ])("lets %s through (%s to a public address)", (address) => {
    expect(forbiddenKind(address)).toBeNull();
  });

  it("names the IPv4 it decoded", () => {
    expect(forbiddenKind("2002:7f00:1::")).toBe("loopback (IPv4 127.0.0.1 in 6to4)");
    expect(forbiddenKind("2001:0:808:808::80ff:fffe")).toBe(
      "loopback (IPv4 127.0.0.1 in Teredo (client))",
    );
    expect(forbiddenKind("64:ff9b:1::7f00:1")).toBe("reserved (NAT64 local-use)");
  });
});

describe("parseAllowList and normalizeHost", () => {
  it("reads comma-separated hosts and addresses, ignoring blanks", () => {
    expect(parseAllowList(" hooks.internal , 127.0.0.1,,[::1] ")).toEqual([
      "hooks.internal",
      "127.0.0.1",
      "[::1]",
    ]);
    expect(parseAllowList(undefined)).toEqual([]);
  });

  it("compares hosts without case, brackets or a trailing dot", () => {
    expect(normalizeHost("Hooks.Internal.")).toBe("hooks.internal");
    expect(normalizeHost("[0:0:0:0:0:0:0:1]")).toBe("::1");
  });
});

describe("AddressGuard", () => {
  it("refuses plain http unless the host is allow-listed", async () => {
    const guard = new AddressGuard([], resolver({ "example.com": ["93.184.216.34"] }));
    await expect(guard.check(new URL("http://example.com/hook"))).rejects.toThrow(SsrfRefusal);
    await expect(guard.check(new URL("https://example.com/hook"))).resolves.toEqual({
      address: "93.184.216.34",
      family: 4,
    });
    const allowing = new AddressGuard(
      ["example.com"],
      resolver({ "example.com": ["93.184.216.34"] }),
    );
    await expect(allowing.check(new URL("http://example.com/hook"))).resolves.toMatchObject({
      address: "93.184.216.34",
    });
  });

  it("refuses a name that resolves to a private address, and any name with one such address", async () => {
    const guard = new AddressGuard(
      [],
      resolver({ "evil.example": ["10.0.0.7"], "mixed.example": ["93.184.216.34", "127.0.0.1"] }),
    );
    await expect(guard.check(new URL("https://evil.example/"))).rejects.toThrow(
      /10\.0\.0\.7, a private/,
    );
    await expect(guard.check(new URL("https://mixed.example/"))).rejects.toThrow(/127\.0\.0\.1/);
  });

  it("refuses private address literals, in any notation the URL parser accepts", async () => {
    const guard = new AddressGuard([], resolver({}));
    for (const url of [
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://[::1]/",
      "https://[::ffff:10.0.0.1]/",
    ]) {
      await expect(guard.check(new URL(url))).rejects.toThrow(SsrfRefusal);
    }
  });

  it("lets an allow-listed host or address through to a private address", async () => {
    const table = { "hooks.internal": ["10.0.0.5"], "other.internal": ["10.0.0.5"] };
    const byHost = new AddressGuard(["hooks.internal"], resolver(table));
    await expect(byHost.check(new URL("http://hooks.internal:8080/"))).resolves.toMatchObject({
      address: "10.0.0.5",
    });
    await expect(byHost.check(new URL("https://other.internal/"))).rejects.toThrow(SsrfRefusal);
    const byAddress = new AddressGuard(["10.0.0.5"], resolver(table));
    await expect(byAddress.check(new URL("https://other.internal/"))).resolves.toMatchObject({
      address: "10.0.0.5",
    });
  });

  it("lets an allow-list entry with a port open that port only", async () => {
    const table = { "hooks.internal": ["10.0.0.5"] };
    const guard = new AddressGuard(["hooks.internal:8080", "[::1]:9000"], resolver(table));
    await expect(guard.check(new URL("http://hooks.internal:8080/"))).resolves.toMatchObject({
      address: "10.0.0.5",
    });
    await expect(guard.check(new URL("http://hooks.internal:8081/"))).rejects.toThrow(SsrfRefusal);
    await expect(guard.check(new URL("https://hooks.internal/"))).rejects.toThrow(SsrfRefusal);
    await expect(guard.check(new URL("http://[::1]:9000/"))).resolves.toMatchObject({
      address: "::1",
    });
    await expect(guard.check(new URL("http://[::1]:9001/"))).rejects.toThrow(SsrfRefusal);
    const byAddress = new AddressGuard(["10.0.0.5:443"], resolver(table));
    await expect(byAddress.check(new URL("https://hooks.internal/"))).resolves.toMatchObject({
      address: "10.0.0.5",
    });
    await expect(byAddress.check(new URL("https://hooks.internal:8443/"))).rejects.toThrow(
      SsrfRefusal,
    );
  });

  it("reads allow-list entries with and without ports", () => {
    expect(parseAllowEntry("Hooks.Internal:8080")).toEqual({ host: "hooks.internal", port: 8080 });
    expect(parseAllowEntry("hooks.internal")).toEqual({ host: "hooks.internal", port: null });
    expect(parseAllowEntry("[::1]:9000")).toEqual({ host: "::1", port: 9000 });
    expect(parseAllowEntry("[::1]")).toEqual({ host: "::1", port: null });
    expect(parseAllowEntry("fe80::1")).toEqual({ host: "fe80::1", port: null });
  });

  it("reports a name that does not resolve", async () => {
    const guard = new AddressGuard([], resolver({}));
    await expect(guard.check(new URL("https://nowhere.example/"))).rejects.toThrow(UnresolvedHost);
  });

  it("refuses schemes other than http and https", async () => {
    const guard = new AddressGuard(["localhost"], resolver({ localhost: ["127.0.0.1"] }));
    await expect(guard.check(new URL("file:///etc/passwd"))).rejects.toThrow(SsrfRefusal);
  });
});
