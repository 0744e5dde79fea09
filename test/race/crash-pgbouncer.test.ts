/**
 * PostgreSQL through PgBouncer in transaction pooling mode (docs/operations.md#pgbouncer, issue 15):
 * `punctual worker --pg-pooler transaction` processes reach the server only through a PgBouncer of the
 * test's own, and the tasks are created through it too. A burst with polling alone (no LISTEN), and
 * the kill -9 scenario with LISTEN on a direct connection (`--listen-url`): the ledger must show one
 * decision per nominal time, no launch twice in one attempt, nothing missing.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { pgbouncerAvailable, startPgbouncer } from "../helpers/pgbouncer.js";
import type { RunningPgbouncer } from "../helpers/pgbouncer.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";

const FILE = "test/race/crash-pgbouncer.test.ts";
const runnable = pgbouncerAvailable(FILE) && (await raceTestsRunnable(FILE));

describe.skipIf(!runnable)("PostgreSQL replicas behind PgBouncer in transaction mode", () => {
  let dir = "";
  // One database per scenario: the workers use the default schema, and a scenario's tasks outlive it.
  let database: PostgresTestDatabase;
  let chaosDatabase: PostgresTestDatabase;
  let bouncer: RunningPgbouncer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-crash-pgb-"));
    mkdirSync(join(dir, "burst"));
    mkdirSync(join(dir, "chaos"));
    database = await createPostgresTestDatabase();
    chaosDatabase = await createPostgresTestDatabase();
    bouncer = await startPgbouncer(database.url ?? "");
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await bouncer.stop();
    await database.drop();
    await chaosDatabase.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens no LISTEN through the pooler: without a listen URL the store offers no wake-ups", async () => {
    const store = await postgres(bouncer.through(database.url ?? ""), {
      schema: "pooled_probe",
      pooler: "transaction",
    }).open({ newId: () => "probe" });
    try {
      expect(store.wakes).toBeUndefined();
      expect((await store.migrationStatus()).current).toBe(true);
    } finally {
      await store.close();
    }
  });

  it(
    "runs a burst through the pooler with polling alone, each occurrence once",
    { timeout: 120_000 },
    async () => {
      const direct = database.url ?? "";
      const pooled = bouncer.through(direct);
      const ledger = postgresLedger(direct);
      try {
        const { report, exits } = await runCrashScenario({
          title: "pgbouncer burst",
          dir: join(dir, "burst"),
          store: postgres(pooled, { pooler: "transaction" }),
          ledger,
          workerArgs: ["--database", pooled, "--pg-pooler", "transaction"],
          replicas: 2,
          onceTasks: 600,
          intervalTasks: 10,
          handlerMaxMs: 50,
          disturb: () => new Promise((resolve) => setTimeout(resolve, 12_000)),
        });
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        expect(report.executions).toBeGreaterThanOrEqual(600);
      } finally {
        await ledger.close();
      }
    },
  );

  it(
    "decides every occurrence once while a replica is killed every 2 s, LISTEN on a direct URL",
    { timeout: 150_000 },
    async () => {
      const direct = chaosDatabase.url ?? "";
      const pooled = bouncer.through(direct);
      const ledger = postgresLedger(direct);
      try {
        const { report, exits, fleet } = await runCrashScenario({
          title: "pgbouncer kill -9",
          dir: join(dir, "chaos"),
          store: postgres(pooled, { pooler: "transaction" }),
          ledger,
          workerArgs: ["--database", pooled, "--pg-pooler", "transaction", "--listen-url", direct],
          replicas: 3,
          onceTasks: 600,
          intervalTasks: 30,
          handlerMaxMs: 200,
          disturb: (replicas) => replicas.chaos(2000, 16_000),
        });
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(fleet.kills).toBeGreaterThanOrEqual(5);
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        expect(report.executions).toBeGreaterThan(300);
      } finally {
        await ledger.close();
      }
    },
  );
});
