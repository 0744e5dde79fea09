/**
 * A pool that sends every statement unnamed (docs/operations.md#pgbouncer): behind a pooler in
 * transaction mode, consecutive transactions of one client may run on different server connections, so a
 * statement prepared by name on one is unknown on the next. The text goes with every call instead.
 */
import type {
  PostgresClient,
  PostgresNotification,
  PostgresPool,
  PostgresQueryResult,
  PostgresStatement,
} from "./postgres-pool.js";

function textOf(statement: string | PostgresStatement): string {
  return typeof statement === "string" ? statement : statement.text;
}

type Listener = ((message: PostgresNotification) => void) | ((error: Error) => void);

class UnnamedClient implements PostgresClient {
  readonly #client: PostgresClient;

  constructor(client: PostgresClient) {
    this.#client = client;
  }

  query(statement: string | PostgresStatement, values?: unknown[]): Promise<PostgresQueryResult> {
    return this.#client.query(textOf(statement), values);
  }

  release(destroy?: Error | boolean): void {
    this.#client.release(destroy);
  }

  on(event: "notification", listener: (message: PostgresNotification) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "notification" | "error", listener: Listener): unknown {
    // The overloads pair each event with its listener's type; the union only passes them through.
    return event === "error"
      ? this.#client.on(event, listener as (error: Error) => void)
      : this.#client.on(event, listener as (message: PostgresNotification) => void);
  }

  off(event: "error", listener: (error: Error) => void): unknown {
    return this.#client.off(event, listener);
  }
}

/** `pool` with the statements' names dropped, for a pooler in transaction mode. */
export function withoutNamedStatements(pool: PostgresPool): PostgresPool {
  const wrapped = new WeakMap<PostgresClient, PostgresClient>();
  return {
    query: (statement, values) => pool.query(textOf(statement), values),
    connect: async () => {
      const client = await pool.connect();
      const unnamed = wrapped.get(client) ?? new UnnamedClient(client);
      wrapped.set(client, unnamed);
      return unnamed;
    },
    end: () => pool.end(),
  };
}
