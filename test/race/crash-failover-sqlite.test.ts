/**
 * Recovery in seconds on SQLite (issue 15 item 1, docs/operations.md#what-happens-on-a-crash): of two
 * processes on one file, the one holding claims is SIGKILLed mid-burst with the default 60 s lease and
 * a 2 s liveness timeout; its runs must run on the survivor long before the lease
 * (test/race/crash/failover-scenario.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite.js";
import { ensureBuilt } from "../e2e/build.js";
import { runFailoverScenario } from "./crash/failover-scenario.js";
import { sqliteLedger } from "./crash/ledger-source.js";
import type { LedgerSource } from "./crash/ledger-source.js";

describe("a SQLite worker killed while it holds claims", () => {
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-failover-sqlite-"));
    await ensureBuilt();
  }, 240_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "has its runs executed by the survivor after the liveness timeout, not the lease",
    { timeout: 120_000 },
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
        const result = await runFailoverScenario({
          title: "sqlite",
          dir,
          store: sqlite(file),
          ledger: source,
          workerArgs: ["--database", file],
          tasks: 40,
        });
        expect(result.exits.map((e) => e.exit)).toEqual([{ code: 0, signal: null }]);
        expect(result.stranded).toBeGreaterThan(0);
        expect(result.duplicates).toBe(0);
        expect(result.notSucceeded).toEqual([]);
      } finally {
        await source.close();
      }
    },
  );
});
