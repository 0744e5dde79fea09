/**
 * Opening a SQLite connection with the settings every punctual connection needs (WAL, a busy timeout,
 * foreign keys), and the one way to run a transaction on it: synchronously, inside better-sqlite3's
 * transaction wrapper, never across an `await`.
 */
import Database from "better-sqlite3";
import { createPrivateFile, restrictFileModes } from "./sqlite-file-mode.js";

export type SqliteDatabase = Database.Database;

/**
 * How long a connection waits for another one's write lock before failing with SQLITE_BUSY. Writers hold
 * it for one admission or claim batch (milliseconds), so 5 s only runs out when something is stuck.
 */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Switches a new file to WAL. Two processes opening one new file race for the switch, and SQLite answers
 * SQLITE_BUSY at once (without its busy handler) to the loser: wait a moment and try again (seen in CI
 * with two processes migrating one file).
 */
function enableWal(db: Database.Database): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      if (db.pragma("journal_mode", { simple: true }) === "wal") return;
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === "SQLITE_BUSY";
      if (!busy || attempt >= 100) throw error;
      Atomics.wait(pause, 0, 0, 25);
    }
  }
}

/** Opens `path` (a file, created if missing, or `:memory:`) and applies the connection settings. */
export function openSqliteDatabase(path: string): SqliteDatabase {
  createPrivateFile(path);
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // WAL: readers never block the writer; NORMAL is durable across application crashes in WAL mode
    // (a power loss may drop the last transactions, never corrupt the file).
    enableWal(db);
    db.pragma("synchronous = NORMAL");
    // Checkpoint every ~40 MB of WAL instead of ~4 MB: each checkpoint syncs the database file, and at
    // the default a single-run commit cost 200 us against 135 us (measured on 6,000 claims' writes).
    db.pragma("wal_autocheckpoint = 10000");
    db.pragma("journal_size_limit = 67108864");
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma("foreign_keys = ON");
    // WAL mode has made the -wal and -shm files by now: check all three (docs/security.md#secrets-at-rest).
    restrictFileModes(path);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Statements prepared once per SQL text (the listings build their text from the filters given, so a few
 * shapes recur): `get` prepares a text the first time it is asked for.
 */
export class StatementCache<P extends unknown[], R> {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, Database.Statement<P, R>>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  get(sql: string): Database.Statement<P, R> {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare<P, R>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** Transactions on one connection. Every function passed here is synchronous (better-sqlite3 enforces it). */
export class SqliteTransactions {
  readonly #db: SqliteDatabase;
  readonly #run: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#run = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * A write transaction: `BEGIN IMMEDIATE` takes the database's single write lock up front (waiting up to
   * the busy timeout), so every read inside it is already serialised against every other writer.
   */
  write<T>(fn: () => T): T {
    // The wrapper returns what `fn` returned; its type is lost only through better-sqlite3's signature.
    return this.#run.immediate(fn) as T;
  }

  /** A read transaction: several statements see one snapshot. */
  read<T>(fn: () => T): T {
    return this.#run.deferred(fn) as T;
  }

  /** A savepoint inside the current transaction: if `fn` throws, only its writes are undone. */
  savepoint<T>(fn: () => T): T {
    if (!this.#db.inTransaction) throw new Error("sqlite: a savepoint outside a transaction");
    return this.#run(fn) as T;
  }
}

/** Runs synchronous store work as the port's promise: a throw becomes a rejection. */
export function settle<T>(fn: () => T): Promise<T> {
  return new Promise<T>((resolve) => {
    resolve(fn());
  });
}
