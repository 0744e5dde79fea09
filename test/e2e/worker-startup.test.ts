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
import { ROOT, ensureBuilt } from "./build.js";
import { bundleLoadLine, bundleManifest, LOAD_RECORDER } from "./load-recorder.js";
import { startCli, stopCli, waitForOutput } from "./process.js";

describe("punctual worker startup", () => {
  let dir = "";
  let recorder = "";
  let manifest: ReadonlyMap<string, readonly string[]> = new Map();

  /** The modules (paths from the package's root) behind the URLs the recorder listed. */
  const modulesOf = (loaded: readonly string[]): string[] =>
    loaded.flatMap((line) => {
      const path = line.replace(/^\[loaded\] file:\/\//, "");
      const chunk = /\/dist\/cli-bundle\/([^/]+)$/.exec(path)?.[1];
      if (chunk !== undefined) return [...(manifest.get(chunk) ?? [])];
      return path.startsWith(`${ROOT}/`) ? [path.slice(ROOT.length + 1)] : [path];
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-worker-startup-"));
    writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
    recorder = join(dir, "recorder.mjs");
    writeFileSync(recorder, LOAD_RECORDER);
    await ensureBuilt();
    manifest = bundleManifest();
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
    const loaded = modulesOf(
      cli
        .output()
        .split("\n")
        .filter((line) => line.startsWith("[loaded] ")),
    );
    // The recorder works: the worker's own modules are listed.
    expect(loaded).toContain("dist/cli/worker-command.js");
    expect(loaded).toContain("dist/adapters/storage/sqlite/sqlite-store.js");
    const http = loaded.filter((path) =>
      /node_modules\/(fastify|prom-client|pino-pretty|pg)\/|^dist\/adapters\/http\//.test(path),
    );
    expect(http).toEqual([]);
  });

  it.each([
    // main.js is resolved once bin/punctual.js holds signals and starts to load the program.
    ["while its modules load", "dist/cli/main.js"],
    ["while it opens its store", "dist/adapters/storage/sqlite/sqlite-store.js"],
  ])("ends with exit 0 on a SIGTERM %s", async (what, module) => {
    const cli = startCli(
      ["worker", "--handlers", "handlers.mjs", "--database", join(dir, `early-${what.length}.db`)],
      { cwd: dir, env: { NODE_OPTIONS: `--import ${pathToFileURL(recorder).href}` } },
    );
    await waitForOutput(cli, bundleLoadLine(module));
    // On a loaded host the store may be open by the time the signal lands: then it is a plain stop.
    const startedBefore = cli.output().includes("punctual worker started");
    // stopCli fails when the process has not exited 15 s after the signal: the bound, not a timing.
    const exit = await stopCli(cli, "SIGTERM", 15_000);
    expect(exit, cli.output()).toEqual({ code: 0, signal: null });
    if (!startedBefore && !cli.output().includes("punctual worker started")) {
      expect(cli.output()).toContain("(during startup)");
    }
    expect(cli.output()).toContain("punctual worker stopped");
  });
});
