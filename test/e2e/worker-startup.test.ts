/**
 * `punctual worker` starts with the least work and takes SIGTERM at any moment
 * (docs/operations.md#on-a-loaded-host): it loads no HTTP stack (Fastify, prom-client, the HTTP adapter),
 * and a SIGTERM sent before it has even loaded its modules, or while it opens its store, ends it with
 * exit 0 well within the shutdown grace.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "./build.js";
import { startCli, stopCli, waitForOutput } from "./process.js";

/** A module loader hook that writes every module the process loads to stderr, one `[loaded] URL` a line. */
const RECORDER = `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("[loaded] " + r.url + "\\\\n"); return r; }'
));
`;

describe("punctual worker startup", () => {
  let dir = "";
  let recorder = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-worker-startup-"));
    writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
    recorder = join(dir, "recorder.mjs");
    writeFileSync(recorder, RECORDER);
    await ensureBuilt();
  }, 240_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads neither Fastify, prom-client nor the HTTP adapter", async () => {
    const cli = startCli(
      ["worker", "--handlers", "handlers.mjs", "--database", join(dir, "loads.db")],
      { cwd: dir, env: { NODE_OPTIONS: `--import ${pathToFileURL(recorder).href}` } },
    );
    await waitForOutput(cli, "punctual worker started");
    expect(await stopCli(cli, "SIGTERM")).toEqual({ code: 0, signal: null });
    const loaded = cli
      .output()
      .split("\n")
      .filter((line) => line.startsWith("[loaded] "));
    // The recorder works: the worker's own modules are listed.
    expect(loaded.some((line) => line.includes("/dist/cli/worker-command.js"))).toBe(true);
    const http = loaded.filter((line) =>
      /node_modules\/(fastify|prom-client|pino-pretty|pg)\/|\/dist\/adapters\/http\//.test(line),
    );
    expect(http).toEqual([]);
  });

  it.each([
    // main.js is resolved once bin/punctual.js holds signals and starts to load the program.
    ["while its modules load", "/dist/cli/main.js"],
    ["while it opens its store", "/dist/adapters/storage/sqlite/sqlite-store.js"],
  ])("ends with exit 0 on a SIGTERM %s", async (what, module) => {
    const cli = startCli(
      ["worker", "--handlers", "handlers.mjs", "--database", join(dir, `early-${what.length}.db`)],
      { cwd: dir, env: { NODE_OPTIONS: `--import ${pathToFileURL(recorder).href}` } },
    );
    await waitForOutput(cli, `${module}\n`);
    // On a loaded host the store may be open by the time the signal lands: then it is a plain stop.
    const startedBefore = cli.output().includes("punctual worker started");
    const sentAt = Date.now();
    const exit = await stopCli(cli, "SIGTERM", 15_000);
    expect(exit, cli.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - sentAt).toBeLessThan(10_000);
    if (!startedBefore && !cli.output().includes("punctual worker started")) {
      expect(cli.output()).toContain("(during startup)");
    }
    expect(cli.output()).toContain("punctual worker stopped");
  });
});
