import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main, packageVersion } from "../../src/cli/main.js";

const manifest = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as {
  version: string;
};

describe("punctual --version", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("prints the package's version and exits 0", async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    expect(await main(["node", "punctual", "--version"])).toBe(0);
    expect(written.join("")).toBe(`${manifest.version}\n`);
    expect(packageVersion()).toBe(manifest.version);
  });
});
