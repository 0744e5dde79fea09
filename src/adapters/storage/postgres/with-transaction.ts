/**
 * The one transaction helper (CONVENTIONS "Async"): BEGIN, the work, COMMIT, or ROLLBACK on any error, on one
 * pooled client that is always released (and destroyed when the transaction could not be closed cleanly).
 */
import type { PostgresClient, PostgresPool } from "./postgres-pool.js";

/** Clients whose transaction could not be closed: their connection state is unknown. */
const brokenClients = new WeakSet<PostgresClient>();

/**
 * How the hot-path transactions (admission, claims, batched run changes) begin: every join they make is
 * a lookup of a few hundred rows by key, but with statistics that lag a burst (a queue that went from
 * empty to 10,000 runs in a second) or on a table that is still small, the planner preferred hashing a
 * whole table to probing its primary key, and a 250-row update read 5,000 rows (measured: about 8 ms
 * instead of 1 ms per statement). Set in the same round trip as BEGIN, for that transaction only.
 */
const KEYED_BEGIN = "BEGIN; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off";

export interface TransactionOptions {
  /** The transaction's joins are all lookups by key: plan them as such (see KEYED_BEGIN). */
  readonly keyedJoins?: boolean;
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

/** `withTransaction` for the hot path, whose joins are all lookups by key (see KEYED_BEGIN). */
export function withKeyedTransaction<T>(
  pool: PostgresPool,
  work: (client: PostgresClient) => Promise<T>,
  first?: string,
): Promise<T> {
  return withTransaction(
    pool,
    work,
    first === undefined ? { keyedJoins: true } : { keyedJoins: true, first },
  );
}

/** Runs `work` in a transaction on `client`, which the caller owns (the migration runner holds one). */
export async function inTransaction<T>(
  client: PostgresClient,
  work: (client: PostgresClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  try {
    const begin = options.keyedJoins === true ? KEYED_BEGIN : "BEGIN";
    await client.query(options.first === undefined ? begin : `${begin}; ${options.first}`);
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
