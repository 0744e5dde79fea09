/**
 * The SQLite store: every storage port on one better-sqlite3 connection to a file (shared by the
 * processes that open it) or to `:memory:`. Opening applies pending migrations. All work is synchronous
 * inside the port's promise; no transaction ever spans an `await`.
 */
import type {
  MigrationStatus,
  Store,
  SecretSealer,
  StoreOptions,
} from "../../../domain/ports/store.js";
import { CLEAR_SECRETS, resealed } from "../shared/secret-keyring.js";
import type { StoredSecrets } from "../shared/secret-keyring.js";
import { openSqliteDatabase, settle, SqliteTransactions } from "./sqlite-database.js";
import type { SqliteDatabase } from "./sqlite-database.js";
import { migrateSqlite, sqliteMigrationStatus } from "./sqlite-migrations.js";
import { SqliteCalendarRepository } from "./sqlite-calendar-repository.js";
import { SqliteIdempotencyRepository } from "./sqlite-idempotency-repository.js";
import { SqliteFleetSettings } from "./sqlite-fleet-settings.js";
import { SqliteReplicaRegistry } from "./sqlite-replica-registry.js";
import { SqliteRunRepository } from "./sqlite-run-repository.js";
import { SqliteStatements } from "./sqlite-statements.js";
import { SqliteTaskDefinitions } from "./sqlite-task-definitions.js";
import { SqliteTaskRepository } from "./sqlite-task-repository.js";
import { SqliteTokenRepository } from "./sqlite-token-repository.js";
import { isSqliteRefusal } from "./sqlite-errors.js";

export interface SqliteStoreOptions extends StoreOptions {
  /** A database file (created if missing) or `":memory:"`. */
  readonly path: string;
}

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly tasks: SqliteTaskRepository;
  readonly runs: SqliteRunRepository;
  readonly replicas: SqliteReplicaRegistry;
  readonly calendars: SqliteCalendarRepository;
  readonly apiTokens: SqliteTokenRepository;
  readonly idempotency: SqliteIdempotencyRepository;
  readonly fleet: SqliteFleetSettings;
  readonly #db: SqliteDatabase;
  readonly #secrets: SecretSealer;

  /** Takes a connection whose schema is already current (see `openSqliteStore`). */
  constructor(db: SqliteDatabase, options: StoreOptions) {
    this.#db = db;
    this.#secrets = options.secrets ?? CLEAR_SECRETS;
    const tx = new SqliteTransactions(db);
    const statements = new SqliteStatements(db, this.#secrets);
    // One cache for both: admission leaves the definitions it decoded for the claim that follows.
    const definitions = new SqliteTaskDefinitions(db, this.#secrets);
    this.tasks = new SqliteTaskRepository({
      db,
      tx,
      statements,
      definitions,
      newId: options.newId,
    });
    this.runs = new SqliteRunRepository({ db, tx, statements, definitions });
    this.replicas = new SqliteReplicaRegistry(db);
    this.calendars = new SqliteCalendarRepository({ db, tx });
    this.apiTokens = new SqliteTokenRepository(db);
    this.idempotency = new SqliteIdempotencyRepository(db);
    this.fleet = new SqliteFleetSettings(db);
  }

  migrate(): Promise<MigrationStatus> {
    return settle(() => migrateSqlite(this.#db));
  }

  /** Rewrites the secrets not in the current form, in one write transaction. */
  resealSecrets(): Promise<number> {
    return settle(() => {
      const db = this.#db;
      const read = db.prepare<[], StoredSecrets>(
        "SELECT id, webhook_secret, retiring_secret FROM tasks",
      );
      const write = db.prepare<[StoredSecrets]>(
        `UPDATE tasks SET webhook_secret = @webhook_secret, retiring_secret = @retiring_secret
         WHERE id = @id`,
      );
      return new SqliteTransactions(db).write(() => {
        const rows = resealed(read.all(), this.#secrets);
        for (const row of rows) write.run(row);
        return rows.length;
      });
    });
  }

  migrationStatus(): Promise<MigrationStatus> {
    return settle(() => sqliteMigrationStatus(this.#db));
  }

  /** @throws when the connection is closed */
  ping(): Promise<void> {
    return settle(() => {
      this.#db.prepare("SELECT 1").get();
    });
  }

  /** A constraint or a value SQLite does not take (`isSqliteRefusal`). */
  refuses(error: unknown): boolean {
    return isSqliteRefusal(error);
  }

  /** Closes the connection; later calls reject. Idempotent. */
  close(): Promise<void> {
    return settle(() => {
      if (this.#db.open) this.#db.close();
    });
  }
}

/**
 * Opens (creating if needed) a SQLite database and migrates it to the schema this code knows.
 *
 * @throws SqliteMigrationError when the database holds a migration newer than this code, or an edited one
 * @example
 * const store = await openSqliteStore({ path: "punctual.db", newId: createIdGenerator() });
 */
export function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  return settle(() => {
    const db = openSqliteDatabase(options.path);
    try {
      migrateSqlite(db);
      return new SqliteStore(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
  });
}
