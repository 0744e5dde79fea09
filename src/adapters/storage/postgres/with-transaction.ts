/**
 * The one transaction helper (CONVENTIONS "Async"): BEGIN, the work, COMMIT, or ROLLBACK on any error, on one
 * pooled client that is always released (and destroyed when the transaction could not be closed cleanly).
 */
import type { PostgresClient, PostgresPool } from "./postgres-pool.js";

/** Clients whose transaction could not be closed: their connection state is unknown. */
const brokenClients = new WeakSet<PostgresClient>();

export interface TransactionOptions {
  /**
   * A statement without parameters run in the same round trip as BEGIN (a lock taken first thing):
   * each statement of one simple query takes its own snapshot, so the statements after it see what was
   * committed before it returned.
   */
  readonly first?: string;
}

/** Runs `work` in a transaction on a client checked out of `pool`. */
export async function withTransaction<T>(
  pool: PostgresPool,
  work: (client: PostgresClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  // pg-pool drops its own error listener while a client is checked out: a server-side FATAL (database
  // shut down) arriving between queries would then be an unhandled 'error' event that kills the process.
  // The failed query reports the error; the listener only keeps the process alive and marks the client.
  const onError = (): void => {
    brokenClients.add(client);
  };
  client.on("error", onError);
  try {
    return await inTransaction(client, work, options);
  } finally {
    client.off("error", onError);
    releaseClient(client);
  }
}

/** Runs `work` in a transaction on `client`, which the caller owns (the migration runner holds one). */
export async function inTransaction<T>(
  client: PostgresClient,
  work: (client: PostgresClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  try {
    await client.query(options.first === undefined ? "BEGIN" : `BEGIN; ${options.first}`);
  } catch (error) {
    brokenClients.add(client);
    throw error;
  }
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    try {
      await client.query("ROLLBACK");
    } catch {
      // The work's error is the one to report; the connection is discarded on release.
      brokenClients.add(client);
    }
    throw error;
  }
  try {
    await client.query("COMMIT");
  } catch (error) {
    brokenClients.add(client);
    throw error;
  }
  return result;
}

/** Returns `client` to its pool, destroying it when a transaction on it could not be closed. */
export function releaseClient(client: PostgresClient): void {
  client.release(brokenClients.has(client));
}
