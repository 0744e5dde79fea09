/**
 * The PostgreSQL store behind a network that silently drops its packets (docs/operations.md#database-timeouts):
 * a TCP proxy the test controls blackholes the store's connections (no reset: nothing answers). A
 * statement then fails within the statement timeout plus 2 s instead of hanging until TCP gives up, and
 * the connection is discarded, so the next statement opens a new one; a LISTEN connection that stops
 * answering is found by its check, reported, and replaced, and wake-ups arrive again through the new one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import {
  WAKE_CHANNEL,
  openPostgresStore,
} from "../../../../src/adapters/storage/postgres/postgres-store.js";
import type { PostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { waitFor } from "../../../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../../helpers/postgres.js";
import { startTcpProxy } from "../../../helpers/tcp-proxy.js";
import type { TcpProxy } from "../../../helpers/tcp-proxy.js";

const runnable = await raceTestsRunnable(
  "test/adapters/storage/postgres/postgres-partition.test.ts",
);

/** The server-side statement timeout the store is given; the client waits 2 s more. */
const STATEMENT_TIMEOUT_MS = 1000;

describe.skipIf(!runnable)("the PostgreSQL store behind a silent network", () => {
  let database: PostgresTestDatabase;
  let proxy: TcpProxy;
  let direct: PostgresStore;
  let proxied: PostgresStore;

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    const url = new URL(database.url ?? "");
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const schema = database.freshSchema();
    direct = await database.openStore({ schema, ownPool: true });
    proxied = await openPostgresStore({
      url: proxy.url(database.url ?? ""),
      schema,
      newId: createIdGenerator(),
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      listenCheckMs: 200,
    });
  }, 60_000);

  afterAll(async () => {
    proxy.heal();
    await proxied.close();
    await direct.close();
    await proxy.close();
    await database.drop();
  });

  it("fails a statement within the timeout and answers again on a new connection once healed", async () => {
    await proxied.ping();
    proxy.blackhole();
    const started = Date.now();
    const error = await proxied.ping().then(
      () => null,
      (e: unknown) => e,
    );
    const tookMs = Date.now() - started;
    expect(error).toBeInstanceOf(Error);
    expect(tookMs).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
    // The client's own bound: the server cannot answer through the blackhole.
    expect(tookMs).toBeLessThan(STATEMENT_TIMEOUT_MS + 2000 + 3000);
    proxy.heal();
    await proxied.ping();
  });

  it("replaces a LISTEN connection that stopped answering, and hears wake-ups through the new one", async () => {
    let wakes = 0;
    const lost: Error[] = [];
    const stop = await proxied.wakes!.subscribe(
      () => {
        wakes++;
      },
      (error) => {
        lost.push(error);
      },
    );
    try {
      await direct.notify(WAKE_CHANNEL);
      await waitFor(() => (wakes > 0 ? true : undefined), {
        timeoutMs: 10_000,
        what: "a wake-up through the proxy",
      });
      const acceptedBefore = proxy.accepted;
      // Only the connections open now go silent (a NAT table flushed): a new one gets through.
      proxy.blackhole({ existing: true });
      await waitFor(() => (lost.length > 0 ? true : undefined), {
        timeoutMs: 10_000,
        what: "the silent LISTEN connection to be reported",
      });
      expect(lost[0]?.message).toMatch(/did not answer a check/);
      await waitFor(() => (proxy.accepted > acceptedBefore ? true : undefined), {
        timeoutMs: 10_000,
        what: "a new LISTEN connection",
      });
      // Listening again: a notification sent now wakes it (the reconnect wakes it once on its own).
      const wakesBefore = wakes;
      await waitFor(
        async () => {
          await direct.notify(WAKE_CHANNEL);
          return wakes > wakesBefore + 1 ? true : undefined;
        },
        { timeoutMs: 15_000, what: "a wake-up through the new LISTEN connection" },
      );
      expect(lost).toHaveLength(1);
    } finally {
      proxy.heal();
      await stop();
    }
  });
});
