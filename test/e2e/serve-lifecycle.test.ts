/**
 * `punctual serve` as a process at the edges of its life (docs/operations.md#what-happens-on-shutdown):
 * the API process logs "stopping" before "punctual stopped", and a busy port is refused before the
 * database file is created.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo, Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { startCli, stopCli, waitForOutput } from "./process.js";

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), "punctual-serve-lifecycle-"));
}, 240_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The `msg` of each JSON log line, in the order written. */
function messages(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      const msg = (JSON.parse(line) as { msg?: unknown }).msg;
      return typeof msg === "string" ? msg : "";
    });
}

describe("punctual serve's lifecycle", () => {
  it.each([["--no-coordinator"], ["with the coordinator"]])(
    "logs stopping before punctual stopped (%s)",
    async (mode) => {
      const db = join(dir, `order${mode}.db`);
      const args = ["serve", "--database", db, "--port", "0", "--log-level", "info"];
      const cli = startCli(mode === "--no-coordinator" ? [...args, mode] : args, { cwd: dir });
      await waitForOutput(cli, "punctual serving");
      expect((await stopCli(cli, "SIGTERM")).code).toBe(0);
      const said = messages(cli.output());
      const stopping = said.findIndex((msg) => msg.startsWith("stopping"));
      const stopped = said.indexOf("punctual stopped");
      expect(stopping, cli.output()).toBeGreaterThan(-1);
      expect(stopped, cli.output()).toBeGreaterThan(stopping);
    },
  );

  it("refuses a busy port before creating the database file", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    try {
      const port = (busy.address() as AddressInfo).port;
      const db = join(dir, "never-created.db");
      const cli = startCli(["serve", "--database", db, "--port", String(port)], { cwd: dir });
      const exit = await cli.exited;
      expect(exit.code, cli.output()).not.toBe(0);
      expect(cli.output()).toMatch(/EADDRINUSE|in use/);
      expect(existsSync(db)).toBe(false);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
