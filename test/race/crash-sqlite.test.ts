/**
 * Crash and replica test on SQLite (issue 6, docs/semantics.md#guarantees, docs/architecture.md#cadence): two `punctual worker` processes share one
 * database file; 300 once tasks come due within about 10 s and 20 interval tasks fire every second while a
 * worker is SIGKILLed every 2 s and restarted. The run ledger must show one decision per nominal time, no
 * launch twice in one attempt, and nothing missing or unexplained.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite.js";
import { ensureBuilt } from "../e2e/build.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { sqliteLedger } from "./crash/ledger-source.js";
import type { LedgerSource } from "./crash/ledger-source.js";

describe("two SQLite processes on one file under SIGKILL", () => {
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-crash-sqlite-"));
    await ensureBuilt();
  }, 240_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "decides every occurrence once and launches none twice while a process is killed every 2 s",
    { timeout: 150_000 },
    async () => {
      const file = join(dir, "punctual.db");
      // The ledger is opened once the workers have created the file.
      let ledger: LedgerSource | null = null;
      const source: LedgerSource = {
        read: () => (ledger ??= sqliteLedger(file)).read(),
        progress: () => (ledger ??= sqliteLedger(file)).progress(),
        close: () => ledger?.close() ?? Promise.resolve(),
      };
      try {
        const { report, exits, fleet } = await runCrashScenario({
          title: "sqlite",
          dir,
          store: sqlite(file),
          ledger: source,
          workerArgs: ["--database", file],
          replicas: 2,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 200,
          disturb: (f) => f.chaos(2000, 24_000),
        });
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(fleet.kills).toBeGreaterThanOrEqual(8);
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        expect(report.executions).toBeGreaterThan(150);
      } finally {
        await source.close();
      }
    },
  );
});
