/**
 * `punctual/client` as shipped: the package's export resolves in the built `dist/`, and the client's
 * built files import only each other, so a program that uses it loads none of the scheduler's code.
 */
import { execFile } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, ensureBuilt } from "./build.js";

beforeAll(async () => {
  await ensureBuilt();
}, 240_000);

describe("the punctual/client package export", () => {
  it("resolves by the package's name", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const m = await import("punctual/client"); console.log(Object.keys(m).sort().join(" "));',
      ],
      { cwd: ROOT, timeout: 30_000 },
    );
    expect(stdout).toBe("PunctualApiError PunctualClient PunctualConnectionError\n");
  });

  it("imports only its own files at run time", () => {
    const dist = join(ROOT, "dist");
    const files = [
      join(dist, "client.js"),
      ...readdirSync(join(dist, "client"))
        .filter((name) => name.endsWith(".js"))
        .map((name) => join(dist, "client", name)),
    ];
    const specifiers = files.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?from "([^"]+)"/gm)].map(
        (m) => m[1] ?? "",
      ),
    );
    expect(specifiers.length).toBeGreaterThan(0);
    for (const specifier of specifiers) expect(specifier).toMatch(/^\.\/(client\/)?[a-z-]+\.js$/);
  });
});
