/**
 * PostgreSQL migrations: the numbered, forward-only list and the runner. The runner applies each pending
 * migration in its own transaction under a transaction-scoped advisory lock, inserts each migration's
 * `schema_migrations` row before its SQL (so two racing processes can never both apply it), and refuses a
 * database that holds a migration this code does not know or whose checksum differs.
 */
import { createHash } from "node:crypto";
import type { MigrationStatus } from "../../../domain/ports/store.js";
import { POSTGRES_MIGRATION_0001 } from "./postgres-migration-0001.js";
import { POSTGRES_MIGRATION_0002 } from "./postgres-migration-0002.js";
import { POSTGRES_MIGRATION_0003 } from "./postgres-migration-0003.js";
import { POSTGRES_MIGRATION_0004 } from "./postgres-migration-0004.js";
import { POSTGRES_MIGRATION_0005 } from "./postgres-migration-0005.js";
import { POSTGRES_MIGRATION_0006 } from "./postgres-migration-0006.js";
import { POSTGRES_MIGRATION_0007 } from "./postgres-migration-0007.js";
import { POSTGRES_MIGRATION_0008 } from "./postgres-migration-0008.js";
import { POSTGRES_MIGRATION_0009 } from "./postgres-migration-0009.js";
import { POSTGRES_MIGRATION_0010 } from "./postgres-migration-0010.js";
import { POSTGRES_MIGRATION_0011 } from "./postgres-migration-0011.js";
import { POSTGRES_MIGRATION_0012 } from "./postgres-migration-0012.js";
import { POSTGRES_MIGRATION_0013 } from "./postgres-migration-0013.js";
import { POSTGRES_MIGRATION_0014 } from "./postgres-migration-0014.js";
import { POSTGRES_MIGRATION_0015 } from "./postgres-migration-0015.js";
import { POSTGRES_MIGRATION_0016 } from "./postgres-migration-0016.js";
import { POSTGRES_MIGRATION_0017 } from "./postgres-migration-0017.js";
import { POSTGRES_MIGRATION_0018 } from "./postgres-migration-0018.js";
import { POSTGRES_MIGRATION_0019 } from "./postgres-migration-0019.js";
import { POSTGRES_MIGRATION_0020 } from "./postgres-migration-0020.js";
import { POSTGRES_MIGRATION_0021 } from "./postgres-migration-0021.js";
import { POSTGRES_MIGRATION_0022 } from "./postgres-migration-0022.js";
import { POSTGRES_MIGRATION_0023 } from "./postgres-migration-0023.js";
import { POSTGRES_MIGRATION_0024 } from "./postgres-migration-0024.js";
import { POSTGRES_MIGRATION_0025 } from "./postgres-migration-0025.js";
import { POSTGRES_MIGRATION_0026 } from "./postgres-migration-0026.js";
import { POSTGRES_MIGRATION_0027 } from "./postgres-migration-0027.js";
import { POSTGRES_MIGRATION_0028 } from "./postgres-migration-0028.js";
import { POSTGRES_MIGRATION_0029 } from "./postgres-migration-0029.js";
import { POSTGRES_MIGRATION_0030 } from "./postgres-migration-0030.js";
import { POSTGRES_MIGRATION_0031 } from "./postgres-migration-0031.js";
import { POSTGRES_MIGRATION_0032 } from "./postgres-migration-0032.js";
import { POSTGRES_MIGRATION_0033 } from "./postgres-migration-0033.js";
import { POSTGRES_MIGRATION_0034 } from "./postgres-migration-0034.js";
import { POSTGRES_MIGRATION_0035 } from "./postgres-migration-0035.js";
import type { PostgresClient, PostgresPool, PostgresQueryable } from "./postgres-pool.js";
import { uniqueViolation } from "./postgres-errors.js";
import { integer, record, text } from "./postgres-rows.js";
import { MIGRATION_LOCK_KIND } from "./postgres-schema-name.js";
import type { SchemaName } from "./postgres-schema-name.js";
import { withTransaction } from "./with-transaction.js";

export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration, in order. Append only; never edit one that has shipped. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: "initial schema", sql: POSTGRES_MIGRATION_0001 },
  { version: 2, name: "index deleted tasks for retention", sql: POSTGRES_MIGRATION_0002 },
  { version: 3, name: "idempotency records by age", sql: POSTGRES_MIGRATION_0003 },
  { version: 4, name: "due tasks in admission order", sql: POSTGRES_MIGRATION_0004 },
  { version: 5, name: "excluded runs and calendars", sql: POSTGRES_MIGRATION_0005 },
  { version: 6, name: "budget slots for parallel claims", sql: POSTGRES_MIGRATION_0006 },
  { version: 7, name: "task keys and declared groups", sql: POSTGRES_MIGRATION_0007 },
  { version: 8, name: "runs failed without retry", sql: POSTGRES_MIGRATION_0008 },
  { version: 9, name: "runs across tasks", sql: POSTGRES_MIGRATION_0009 },
  { version: 10, name: "fleet settings", sql: POSTGRES_MIGRATION_0010 },
  { version: 11, name: "queue heads by owner", sql: POSTGRES_MIGRATION_0011 },
  { version: 12, name: "tasks whose stored fields do not parse", sql: POSTGRES_MIGRATION_0012 },
  { version: 13, name: "quotas and secret rotation", sql: POSTGRES_MIGRATION_0013 },
  { version: 14, name: "recent requested runs index", sql: POSTGRES_MIGRATION_0014 },
  { version: 15, name: "cheaper budget slots", sql: POSTGRES_MIGRATION_0015 },
  { version: 16, name: "less write-ahead log per fire", sql: POSTGRES_MIGRATION_0016 },
  {
    version: 17,
    name: "no task key lock per run, no self thread key",
    sql: POSTGRES_MIGRATION_0017,
  },
  {
    version: 18,
    name: "room on every page for a fire's next versions",
    sql: POSTGRES_MIGRATION_0018,
  },
  { version: 19, name: "no queue thread key for a run's own thread", sql: POSTGRES_MIGRATION_0019 },
  { version: 20, name: "recurrence schedules", sql: POSTGRES_MIGRATION_0020 },
  { version: 21, name: "active runs found through their slots", sql: POSTGRES_MIGRATION_0021 },
  { version: 22, name: "handler names by replica", sql: POSTGRES_MIGRATION_0022 },
  {
    version: 23,
    name: "a narrow task_state row for what a fire writes",
    sql: POSTGRES_MIGRATION_0023,
  },
  {
    version: 24,
    name: "a narrow queue and a ledger indexed on nothing the hot path changes",
    sql: POSTGRES_MIGRATION_0024,
  },
  { version: 25, name: "threads scoped by owner", sql: POSTGRES_MIGRATION_0025 },
  { version: 26, name: "runs per minute counted across replicas", sql: POSTGRES_MIGRATION_0026 },
  {
    version: 27,
    name: "calendars referenced by version, holidays by region",
    sql: POSTGRES_MIGRATION_0027,
  },
  {
    version: 28,
    name: "mutable run columns last, one slot key fewer, room for a fire's versions",
    sql: POSTGRES_MIGRATION_0028,
  },
  {
    version: 29,
    name: "a run from a moved occurrence says so",
    sql: POSTGRES_MIGRATION_0029,
  },
  {
    version: 30,
    name: "a run may be inserted already claimed, its slot bound",
    sql: POSTGRES_MIGRATION_0030,
  },
  {
    version: 31,
    name: "a budget slot is a lease row, inserted and deleted",
    sql: POSTGRES_MIGRATION_0031,
  },
  {
    version: 32,
    name: "a narrower lease; task_state's written columns last",
    sql: POSTGRES_MIGRATION_0032,
  },
  {
    version: 33,
    name: "the triggers on runs run only the statements a write needs",
    sql: POSTGRES_MIGRATION_0033,
  },
  {
    version: 34,
    name: "a task's history and its occurrence keys in one index",
    sql: POSTGRES_MIGRATION_0034,
  },
  {
    version: 35,
    name: "the owners' listing appended to, not split",
    sql: POSTGRES_MIGRATION_0035,
  },
];

/** The sha256 recorded for a migration (of its SQL text exactly as shipped). */
export function migrationChecksum(migration: PostgresMigration): string {
  return createHash("sha256").update(migration.sql).digest("hex");
}

/** Thrown when the database's migrations do not match this code: newer, unknown or edited. */
export class PostgresMigrationError extends Error {
  override readonly name = "PostgresMigrationError";
}

interface AppliedMigration {
  readonly version: number;
  readonly checksum: string;
}

/**
 * Applies every pending migration, each in its own transaction under the schema's transaction-scoped
 * advisory lock; returns the resulting status. A schema already current is only read, never locked. No session
 * state is left behind, so this works through a pooler in transaction mode (docs/operations.md#pgbouncer),
 * and a runner that dies mid-way leaves nothing applied and nothing locked.
 */
export async function migratePostgres(
  pool: PostgresPool,
  schema: SchemaName,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<MigrationStatus> {
  const before = await postgresMigrationStatus(pool, schema, migrations);
  if (before.current) return before;
  // One transaction per migration, each under the lock: a failing one leaves those before it applied.
  let more = true;
  while (more) more = await applyNextRetryingCatalogRace(pool, schema, migrations);
  return postgresMigrationStatus(pool, schema, migrations);
}

/** How many times a migration transaction is retried after losing a catalog race. */
const CATALOG_RACE_RETRIES = 3;

/**
 * `applyNext` in its own transaction, tried again when it lost a race on a system catalog's unique key
 * (`pg_namespace_nspname_index` on `CREATE SCHEMA IF NOT EXISTS`, or `pg_type`/`pg_class` on
 * `CREATE TABLE IF NOT EXISTS`). The advisory lock orders the runners, but a transaction that began before
 * the first runner committed can still miss the schema it created: an advisory lock does not make the
 * backend read the catalog changes committed while it waited, as a table lock would. Two replicas started
 * at once on an empty database through PgBouncer hit it in CI. A new transaction sees them.
 */
async function applyNextRetryingCatalogRace(
  pool: PostgresPool,
  schema: SchemaName,
  migrations: readonly PostgresMigration[],
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await withTransaction(pool, (client) => applyNext(client, schema, migrations));
    } catch (error) {
      const key = uniqueViolation(error);
      if (key === null || !key.startsWith("pg_") || attempt >= CATALOG_RACE_RETRIES) throw error;
    }
  }
}

/** What is applied and pending; `current` when the database matches this code exactly. */
export async function postgresMigrationStatus(
  db: PostgresQueryable,
  schema: SchemaName,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<MigrationStatus> {
  const exists = await db.query("SELECT to_regclass($1::text) IS NOT NULL AS present", [
    `${schema.quoted}.schema_migrations`,
  ]);
  const present = record(exists.rows[0])["present"] === true;
  const applied = present ? await readApplied(db, schema) : [];
  const appliedVersions = applied.map((m) => m.version);
  const known = new Set(migrations.map((m) => m.version));
  const pending = migrations.map((m) => m.version).filter((v) => !appliedVersions.includes(v));
  const unknown = appliedVersions.filter((v) => !known.has(v));
  const edited = applied.filter((m) => {
    const migration = migrations.find((candidate) => candidate.version === m.version);
    return migration !== undefined && migrationChecksum(migration) !== m.checksum;
  });
  return {
    applied: appliedVersions,
    pending,
    current: pending.length === 0 && unknown.length === 0 && edited.length === 0,
  };
}

/** Applies the first pending migration under the lock; false when none is pending. */
async function applyNext(
  client: PostgresClient,
  schema: SchemaName,
  migrations: readonly PostgresMigration[],
): Promise<boolean> {
  await client.query("SELECT pg_advisory_xact_lock($1::int4, $2::int4)", [
    MIGRATION_LOCK_KIND,
    schema.lockKey,
  ]);
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema.quoted}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${schema.quoted}.schema_migrations (
       version integer PRIMARY KEY,
       name text NOT NULL,
       checksum text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const applied = await readApplied(client, schema);
  verify(applied, migrations, schema);
  const done = new Set(applied.map((m) => m.version));
  const migration = migrations.find((m) => !done.has(m.version));
  if (migration === undefined) return false;
  // For this transaction only: the migration's unqualified names land in the schema.
  await client.query(`SET LOCAL search_path TO ${schema.quoted}`);
  // The row first: a second runner that got here anyway fails on the primary key, not halfway.
  await client.query(
    `INSERT INTO ${schema.quoted}.schema_migrations (version, name, checksum)
     VALUES ($1::int4, $2::text, $3::text)`,
    [migration.version, migration.name, migrationChecksum(migration)],
  );
  await client.query(migration.sql);
  return true;
}

async function readApplied(db: PostgresQueryable, schema: SchemaName): Promise<AppliedMigration[]> {
  const result = await db.query(
    `SELECT version, checksum FROM ${schema.quoted}.schema_migrations ORDER BY version`,
  );
  return result.rows.map((value) => {
    const row = record(value);
    return { version: integer(row, "version"), checksum: text(row, "checksum") };
  });
}

function verify(
  applied: readonly AppliedMigration[],
  migrations: readonly PostgresMigration[],
  schema: SchemaName,
): void {
  for (const row of applied) {
    const migration = migrations.find((m) => m.version === row.version);
    if (migration === undefined) {
      const latest = migrations.at(-1)?.version ?? 0;
      throw new PostgresMigrationError(
        `schema ${schema.name} has migration ${row.version}, newer than this punctual knows ` +
          `(latest ${latest}): upgrade punctual before starting it against this database`,
      );
    }
    if (migrationChecksum(migration) !== row.checksum) {
      throw new PostgresMigrationError(
        `schema ${schema.name}: migration ${row.version} (${migration.name}) differs from the one ` +
          `applied (checksum mismatch): a shipped migration was edited`,
      );
    }
  }
}
