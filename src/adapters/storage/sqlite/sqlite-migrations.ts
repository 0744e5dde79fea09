/**
 * SQLite migrations: the numbered, forward-only list and the runner. The runner applies every pending
 * migration in one `BEGIN IMMEDIATE` transaction (the database's single write lock), inserting each
 * migration's `schema_migrations` row before its SQL, and refuses a database that holds a migration this
 * code does not know or whose checksum differs. A second process migrating the same file waits for the
 * lock, then finds nothing pending.
 */
import { createHash } from "node:crypto";
import type { MigrationStatus } from "../../../domain/ports/store.js";
import type { SqliteDatabase } from "./sqlite-database.js";
import { SqliteTransactions } from "./sqlite-database.js";
import { SQLITE_MIGRATION_0001 } from "./sqlite-migration-0001.js";
import { SQLITE_MIGRATION_0002 } from "./sqlite-migration-0002.js";
import { SQLITE_MIGRATION_0003 } from "./sqlite-migration-0003.js";
import { SQLITE_MIGRATION_0004 } from "./sqlite-migration-0004.js";
import { SQLITE_MIGRATION_0005 } from "./sqlite-migration-0005.js";
import { SQLITE_MIGRATION_0006 } from "./sqlite-migration-0006.js";
import { SQLITE_MIGRATION_0007 } from "./sqlite-migration-0007.js";
import { SQLITE_MIGRATION_0008 } from "./sqlite-migration-0008.js";
import { SQLITE_MIGRATION_0009 } from "./sqlite-migration-0009.js";
import { SQLITE_MIGRATION_0010 } from "./sqlite-migration-0010.js";
import { SQLITE_MIGRATION_0011 } from "./sqlite-migration-0011.js";
import { SQLITE_MIGRATION_0012 } from "./sqlite-migration-0012.js";
import { SQLITE_MIGRATION_0013 } from "./sqlite-migration-0013.js";
import { SQLITE_MIGRATION_0014 } from "./sqlite-migration-0014.js";
import { SQLITE_MIGRATION_0015 } from "./sqlite-migration-0015.js";
import { SQLITE_MIGRATION_0016 } from "./sqlite-migration-0016.js";
import { SQLITE_MIGRATION_0017 } from "./sqlite-migration-0017.js";
import { SQLITE_MIGRATION_0018 } from "./sqlite-migration-0018.js";
import { SQLITE_MIGRATION_0019 } from "./sqlite-migration-0019.js";
import { SQLITE_MIGRATION_0020 } from "./sqlite-migration-0020.js";
import { SQLITE_MIGRATION_0021 } from "./sqlite-migration-0021.js";
import { SQLITE_MIGRATION_0022 } from "./sqlite-migration-0022.js";
import { SQLITE_MIGRATION_0023 } from "./sqlite-migration-0023.js";
import { SQLITE_MIGRATION_0024 } from "./sqlite-migration-0024.js";

export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration, in order. Append only; never edit one that has shipped. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  { version: 1, name: "initial schema", sql: SQLITE_MIGRATION_0001 },
  { version: 2, name: "idempotency records by age", sql: SQLITE_MIGRATION_0002 },
  { version: 3, name: "due tasks in admission order", sql: SQLITE_MIGRATION_0003 },
  { version: 4, name: "excluded runs and calendars", sql: SQLITE_MIGRATION_0004 },
  { version: 5, name: "task keys and declared groups", sql: SQLITE_MIGRATION_0005 },
  { version: 6, name: "runs failed without retry", sql: SQLITE_MIGRATION_0006 },
  { version: 7, name: "runs across tasks", sql: SQLITE_MIGRATION_0007 },
  { version: 8, name: "fleet settings", sql: SQLITE_MIGRATION_0008 },
  { version: 9, name: "queue heads by owner", sql: SQLITE_MIGRATION_0009 },
  { version: 10, name: "tasks whose stored fields do not parse", sql: SQLITE_MIGRATION_0010 },
  { version: 11, name: "quotas and secret rotation", sql: SQLITE_MIGRATION_0011 },
  { version: 12, name: "recent requested runs index", sql: SQLITE_MIGRATION_0012 },
  { version: 13, name: "recurrence schedules", sql: SQLITE_MIGRATION_0013 },
  { version: 14, name: "handler names by replica", sql: SQLITE_MIGRATION_0014 },
  { version: 15, name: "task state apart from its definition", sql: SQLITE_MIGRATION_0015 },
  { version: 16, name: "threads scoped by owner", sql: SQLITE_MIGRATION_0016 },
  {
    version: 17,
    name: "a narrow queue and a ledger indexed apart from status",
    sql: SQLITE_MIGRATION_0017,
  },
  {
    version: 18,
    name: "calendars referenced by version, holidays by region",
    sql: SQLITE_MIGRATION_0018,
  },
  {
    version: 19,
    name: "a run from a moved occurrence says so",
    sql: SQLITE_MIGRATION_0019,
  },
  {
    version: 20,
    name: "a task's definition row stamped on every write",
    sql: SQLITE_MIGRATION_0020,
  },
  {
    version: 21,
    name: "a task's history and its occurrence keys in one index",
    sql: SQLITE_MIGRATION_0021,
  },
  {
    version: 22,
    name: "the owner listing index ascending, appended to",
    sql: SQLITE_MIGRATION_0022,
  },
  {
    version: 23,
    name: "a task with no next run out of the due index",
    sql: SQLITE_MIGRATION_0023,
  },
  {
    version: 24,
    name: "closed value lists checked without a list built per row",
    sql: SQLITE_MIGRATION_0024,
  },
];

/** Thrown when the database's migrations do not match this code: newer, unknown or edited. */
export class SqliteMigrationError extends Error {
  override readonly name = "SqliteMigrationError";
}

/** The sha256 recorded for a migration (of its SQL text exactly as shipped). */
export function migrationChecksum(migration: SqliteMigration): string {
  return createHash("sha256").update(migration.sql).digest("hex");
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  checksum   TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT`;

interface AppliedMigration {
  readonly version: number;
  readonly checksum: string;
}

/** Applies every pending migration in one immediate transaction; returns the resulting status. */
export function migrateSqlite(
  db: SqliteDatabase,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
  appliedAt: number = Date.now(),
): MigrationStatus {
  // A database already current is only read: a replica starting never waits for the write lock
  // (docs/operations.md#on-a-loaded-host). Anything else goes through the locked, verifying path.
  const before = sqliteMigrationStatus(db, migrations);
  if (before.current) return before;
  new SqliteTransactions(db).write(() => {
    db.exec(CREATE_TABLE);
    const applied = readApplied(db);
    verify(db, applied, migrations);
    const done = new Set(applied.map((m) => m.version));
    const record = db.prepare(
      "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
    );
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      // The row first: a runner that got here anyway fails on the primary key, not halfway through.
      record.run(migration.version, migration.name, migrationChecksum(migration), appliedAt);
      db.exec(migration.sql);
    }
  });
  return sqliteMigrationStatus(db, migrations);
}

/** What is applied and pending; `current` when the database matches this code exactly. */
export function sqliteMigrationStatus(
  db: SqliteDatabase,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): MigrationStatus {
  const applied = new SqliteTransactions(db).read(() => (hasTable(db) ? readApplied(db) : []));
  const appliedVersions = applied.map((m) => m.version);
  const known = new Map(migrations.map((m) => [m.version, m]));
  const pending = migrations.map((m) => m.version).filter((v) => !appliedVersions.includes(v));
  const foreign = applied.filter((row) => {
    const migration = known.get(row.version);
    return migration === undefined || migrationChecksum(migration) !== row.checksum;
  });
  return {
    applied: appliedVersions,
    pending,
    current: pending.length === 0 && foreign.length === 0,
  };
}

function hasTable(db: SqliteDatabase): boolean {
  const row = db
    .prepare<[], { present: number }>(
      "SELECT count(*) AS present FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'",
    )
    .get();
  return row !== undefined && row.present > 0;
}

function readApplied(db: SqliteDatabase): AppliedMigration[] {
  return db
    .prepare<[], AppliedMigration>(
      "SELECT version, checksum FROM schema_migrations ORDER BY version",
    )
    .all();
}

function verify(
  db: SqliteDatabase,
  applied: readonly AppliedMigration[],
  migrations: readonly SqliteMigration[],
): void {
  for (const row of applied) {
    const migration = migrations.find((m) => m.version === row.version);
    if (migration === undefined) {
      const latest = migrations.at(-1)?.version ?? 0;
      throw new SqliteMigrationError(
        `${db.name} has migration ${row.version}, newer than this punctual knows ` +
          `(latest ${latest}): upgrade punctual before starting it against this database`,
      );
    }
    if (migrationChecksum(migration) !== row.checksum) {
      throw new SqliteMigrationError(
        `${db.name}: migration ${row.version} (${migration.name}) differs from the one applied ` +
          `(checksum mismatch): a shipped migration was edited`,
      );
    }
  }
}
