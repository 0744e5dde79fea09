/**
 * Recovery in seconds on PostgreSQL (issue 15 item 1, docs/operations.md#what-happens-on-a-crash): the
 * worker holding claims is SIGKILLed mid-burst with the default 60 s lease and a 2 s liveness timeout;
 * its runs must run on the survivor long before the lease (test/race/crash/failover-scenario.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { runFailoverScenario } from "./crash/failover-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";

const runnable = await raceTestsRunnable("test/race/crash-failover-postgres.test.ts");

describe.skipIf(!runnable)("a PostgreSQL worker killed while it holds claims", () => {
  let dir = "";
  let database: PostgresTestDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-failover-pg-"));
    database = await createPostgresTestDatabase();
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "has its runs executed by the survivor after the liveness timeout, not the lease",
    { timeout: 120_000 },
    async () => {
      const url = database.url ?? "";
      const ledger = postgresLedger(url);
      try {
        const result = await runFailoverScenario({
          title: "postgres",
          dir,
          store: postgres(url),
          ledger,
          workerArgs: ["--database", url],
          tasks: 40,
        });
        expect(result.exits.map((e) => e.exit)).toEqual([{ code: 0, signal: null }]);
        expect(result.stranded).toBeGreaterThan(0);
        expect(result.duplicates).toBe(0);
        expect(result.notSucceeded).toEqual([]);
      } finally {
        await ledger.close();
      }
    },
  );
});
