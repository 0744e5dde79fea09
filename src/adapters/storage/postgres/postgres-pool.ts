/**
 * The few methods of a PostgreSQL pool and its clients the store uses, as structural types: a `pg.Pool`
 * fits them, and so does a test double over PGlite. Nothing here imports `pg`.
 */

export interface PostgresQueryResult {
  readonly rows: readonly unknown[];
  readonly rowCount: number | null;
}

/**
 * A statement prepared once per connection under `name` (`pg`'s named statements): the server parses it
 * once per connection and may reuse its plan, instead of parsing and planning its text at every call.
 */
export interface PostgresStatement {
  readonly name: string;
  readonly text: string;
}

/** Anything that runs one statement with `$n` parameters. */
export interface PostgresQueryable {
  query(statement: string | PostgresStatement, values?: unknown[]): Promise<PostgresQueryResult>;
}

/** A server notification delivered to a listening connection. */
export interface PostgresNotification {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/** One connection checked out of the pool; `release(true)` destroys it instead of reusing it. */
export interface PostgresClient extends PostgresQueryable {
  release(destroy?: Error | boolean): void;
  on(event: "notification", listener: (message: PostgresNotification) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
}

export interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresClient>;
  end(): Promise<void>;
}
