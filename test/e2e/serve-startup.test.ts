/**
 * `punctual serve` claims before it loads its HTTP stack (docs/operations.md#starting-replicas), and a
 * SIGTERM in that window, or while its modules load, stops it gracefully
 * (docs/operations.md#what-happens-on-shutdown): the run its first claim launched is drained (it ends,
 * or is handed back), never left running under a replica that is gone.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/composition.js";
import { storeFromDatabaseUrl } from "../../src/composition-stores.js";
import { ensureBuilt } from "./build.js";
import { bundleLoadLine, LOAD_RECORDER } from "./load-recorder.js";
import { startCli, stopCli } from "./process.js";

/** The handler holds its run long enough for a stop to find it running: workload, not a wait. */
const HANDLERS = `
export default {
  slow: async () => {
    process.stderr.write("[handler] started\\n");
    await new Promise((resolve) => setTimeout(resolve, 3000));
    process.stderr.write("[handler] done\\n");
  },
};
`;

/** Creates a once task on `slow` and resolves once it is due; returns its id. */
async function dueTask(database: string): Promise<string> {
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(database),
    handlers: { slow: () => Promise.resolve() },
  });
  try {
    const runAt = Math.ceil((Date.now() + 1000) / 1000) * 1000;
    const { task } = await scheduler.tasks.create({
      title: "first claim",
      schedule: { type: "once", run_at: new Date(runAt).toISOString() },
      target: { kind: "handler", name: "slow" },
    });
    // Due before the server starts, as the backlog of a restarted replica is.
    while (Date.now() <= runAt) await new Promise((resolve) => setTimeout(resolve, 50));
    return task.id;
  } finally {
    await scheduler.stop();
  }
}

describe("punctual serve startup", () => {
  let dir = "";
  let recorder = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-serve-startup-"));
    writeFileSync(join(dir, "handlers.mjs"), HANDLERS);
    recorder = join(dir, "recorder.mjs");
    writeFileSync(recorder, LOAD_RECORDER);
    await ensureBuilt();
  }, 240_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = (database: string) =>
    startCli(["serve", "--handlers", "handlers.mjs", "--database", database, "--port", "0"], {
      cwd: dir,
      env: { NODE_OPTIONS: `--import ${pathToFileURL(recorder).href}` },
    });

  it.each([
    // main.js is resolved once bin/punctual.js holds signals and starts to load the program.
    ["while its modules load", "dist/cli/main.js"],
    // The coordinator runs (its first claim launched), the HTTP stack is not built yet.
    ["while it loads the HTTP app", "dist/adapters/http/http-app.js"],
  ])("stops gracefully on a SIGTERM %s", async (what, module) => {
    const database = join(dir, `early-${what.length}.db`);
    const taskId = await dueTask(database);
    // Opened before the server starts: the read at the moment the module loads is one query.
    const reader = createScheduler({ store: storeFromDatabaseUrl(database) });
    await reader.runtime();
    let runsAtLoad: number;
    try {
      const cli = serve(database);
      const line = bundleLoadLine(module);
      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (cli.output().includes(line)) resolve();
        };
        cli.child.stdout?.on("data", check);
        cli.child.stderr?.on("data", check);
      });
      runsAtLoad = (await reader.tasks.runs(taskId)).items.length;
      // stopCli fails when the process has not exited 15 s after the signal: the bound, not a timing.
      const exit = await stopCli(cli, "SIGTERM", 15_000);
      const output = cli.output();
      expect(exit, output).toEqual({ code: 0, signal: null });
      expect(output).toContain("punctual stopped");
      // Drained: whatever the first claim launched ended or was handed back, nothing is left running.
      const statuses = (await reader.tasks.runs(taskId)).items.map((run) => run.status);
      // The coordinator's first claim round ends before the HTTP app is even asked for: the due
      // task's run exists by then.
      if (module.includes("/http/")) expect(runsAtLoad, output).toBe(1);
      // Drained: whatever the first claim launched ended or was handed back, nothing is left running.
      expect(statuses.filter((status) => status === "running" || status === "launching")).toEqual(
        [],
      );
      if (output.includes("[handler] started")) expect(output).toContain("[handler] done");
    } finally {
      await reader.stop();
    }
  });
});
