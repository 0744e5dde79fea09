/**
 * The CLI as a process: `--version`, and a reader that stops reading early (`punctual ... | head`),
 * which must end the command quietly rather than with an unhandled EPIPE.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, ensureBuilt } from "./build.js";
import { startCli } from "./process.js";

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

describe("the punctual command's output", () => {
  it("prints the package's version", async () => {
    const cli = startCli(["--version"], { cwd: tmpdir() });
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(cli.output()).toBe(`${manifest.version}\n`);
  });

  it("exits 0 without a stack trace when its reader goes away", async () => {
    const cli = startCli(["--help"], { cwd: tmpdir() });
    // The reader closes before the command writes a byte: every write then meets EPIPE.
    cli.child.stdout?.destroy();
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.output()).not.toContain("EPIPE");
  });
});
