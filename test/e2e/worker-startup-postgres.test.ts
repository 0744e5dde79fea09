/**
 * A SIGTERM while `punctual worker` or `punctual serve` is still starting on PostgreSQL (issue 33,
 * docs/operations.md#what-happens-on-shutdown): while its first connection hangs (a blackholed network)
 * and while it waits for the migration lock another session holds. Either way the process stops cleanly
 * (exit 0, `punctual worker stopped` or `punctual stopped`) and promptly, without waiting for the
 * connect timeout or the lock.
 * Each wait is on an observable event (the proxy's accepted connection, the lock's waiter in `pg_locks`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MIGRATION_LOCK_KIND,
  schemaName,
} from "../../src/adapters/storage/postgres/postgres-schema-name.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
import { ensureBuilt } from "./build.js";
import { startCli, stopCli, waitFor } from "./process.js";

const runnable = await raceTestsRunnable("test/e2e/worker-startup-postgres.test.ts");

/** `--shutdown-grace`; a stop that gave up would take this plus 5 s. */
const GRACE_S = 2;
/** Clean and prompt: well under the connect timeout (10 s) and the grace plus 5 s. */
const PROMPT_MS = 6000;

/** What each command logs once started, and once stopped. */
const COMMANDS = [
  { command: "worker", started: "punctual worker started", stopped: "punctual worker stopped" },
  { command: "serve", started: "punctual serving", stopped: "punctual stopped" },
] as const;

describe.skipIf(!runnable).each(COMMANDS)(
  "a SIGTERM while punctual $command starts on PostgreSQL",
  ({ command, started, stopped }) => {
    let dir = "";
    let database: PostgresTestDatabase;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "punctual-start-signal-"));
      writeFileSync(join(dir, "handlers.mjs"), "export default { noop: () => ({}) };\n");
      database = await createPostgresTestDatabase();
      await ensureBuilt();
    }, 240_000);

    afterAll(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const launch = (url: string) =>
      startCli(
        [
          command,
          "--handlers",
          "handlers.mjs",
          "--database",
          url,
          "--shutdown-grace",
          `${String(GRACE_S)}s`,
          ...(command === "serve" ? ["--port", "0"] : []),
        ],
        { cwd: dir },
      );

    const stopsPromptly = async (cli: ReturnType<typeof launch>): Promise<void> => {
      const sentAt = Date.now();
      const exit = await stopCli(cli, "SIGTERM", 20_000);
      const ms = Date.now() - sentAt;
      expect(exit, cli.output()).toEqual({ code: 0, signal: null });
      expect(cli.output()).not.toContain(started);
      expect(cli.output()).toContain("(during startup)");
      expect(cli.output()).toContain(stopped);
      expect(ms, cli.output()).toBeLessThan(PROMPT_MS);
    };

    it("while its first connection hangs", { timeout: 60_000 }, async () => {
      const url = new URL(database.url ?? "");
      const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      try {
        proxy.blackhole();
        const cli = launch(proxy.url(database.url ?? ""));
        await waitFor(() => (proxy.accepted > 0 ? true : undefined), {
          timeoutMs: 30_000,
          what: `${command} to connect`,
          describe: cli.output,
        });
        await stopsPromptly(cli);
      } finally {
        await proxy.close();
      }
    });

    it("while it waits for the migration lock", { timeout: 60_000 }, async () => {
      const admin = new pg.Client({ connectionString: database.url ?? "" });
      await admin.connect();
      try {
        await admin.query("BEGIN");
        await admin.query("SELECT pg_advisory_xact_lock($1::int4, $2::int4)", [
          MIGRATION_LOCK_KIND,
          schemaName(undefined).lockKey,
        ]);
        const cli = launch(database.url ?? "");
        await waitFor(
          async () => {
            const { rows } = await admin.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_locks
              WHERE locktype = 'advisory' AND NOT granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            );
            return Number(rows[0]?.n ?? 0) > 0 ? true : undefined;
          },
          {
            timeoutMs: 30_000,
            what: `${command} to wait for the migration lock`,
            describe: cli.output,
          },
        );
        await stopsPromptly(cli);
        await admin.query("ROLLBACK");
      } finally {
        await admin.end();
      }
    });
  },
);
