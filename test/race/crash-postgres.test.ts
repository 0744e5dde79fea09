/**
 * Crash and replica test on PostgreSQL (issue 6, docs/semantics.md#guarantees, docs/architecture.md#cadence): three `punctual worker` processes share a
 * fresh database; 1,000 once tasks come due within about 10 s and 50 interval tasks fire every second
 * while a worker is SIGKILLed every 2 s and restarted. The run ledger must show one decision per nominal
 * time, no launch twice in one attempt, and nothing missing or unexplained.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";

const runnable = await raceTestsRunnable("test/race/crash-postgres.test.ts");

describe.skipIf(!runnable)("three PostgreSQL replicas under SIGKILL", () => {
  let dir = "";
  let database: PostgresTestDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-crash-pg-"));
    database = await createPostgresTestDatabase();
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "decides every occurrence once and launches none twice while a replica is killed every 2 s",
    { timeout: 150_000 },
    async () => {
      const url = database.url ?? "";
      const ledger = postgresLedger(url);
      try {
        const result = await runCrashScenario({
          title: "postgres",
          dir,
          store: postgres(url),
          ledger,
          workerArgs: ["--database", url],
          replicas: 3,
          onceTasks: 1000,
          intervalTasks: 50,
          handlerMaxMs: 200,
          disturb: (fleet) => fleet.chaos(2000, 24_000),
        });
        const { report, exits, fleet } = result;
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(fleet.kills).toBeGreaterThanOrEqual(8);
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        // Most runs executed; the others died with a killed replica and say so.
        expect(report.executions).toBeGreaterThan(500);
      } finally {
        await ledger.close();
      }
    },
  );
});
