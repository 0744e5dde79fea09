/**
 * The SSRF guard's address rules (docs/security.md): which addresses are refused without the operator's consent,
 * how the allow list is read, and that every resolved address is checked.
 */
import { describe, expect, it } from "vitest";
import {
  AddressGuard,
  forbiddenKind,
  normalizeHost,
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
    ["255.255.255.255", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fc00::1", "private (unique local)"],
    ["fd12:3456::1", "private (unique local)"],
    ["fe80::1", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::10.0.0.1", "private"],
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

  it("reports a name that does not resolve", async () => {
    const guard = new AddressGuard([], resolver({}));
    await expect(guard.check(new URL("https://nowhere.example/"))).rejects.toThrow(UnresolvedHost);
  });

  it("refuses schemes other than http and https", async () => {
    const guard = new AddressGuard(["localhost"], resolver({ localhost: ["127.0.0.1"] }));
    await expect(guard.check(new URL("file:///etc/passwd"))).rejects.toThrow(SsrfRefusal);
  });
});
