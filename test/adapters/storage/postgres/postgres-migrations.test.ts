import { afterAll, describe, expect, it } from "vitest";
import {
  POSTGRES_MIGRATIONS,
  PostgresMigrationError,
  migratePostgres,
  postgresMigrationStatus,
} from "../../../../src/adapters/storage/postgres/postgres-migrations.js";
import { POSTGRES_MIGRATION_0001 } from "../../../../src/adapters/storage/postgres/postgres-migration-0001.js";
import type {
  PostgresClient,
  PostgresPool,
} from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import {
  MIGRATION_LOCK_KIND,
  schemaName,
} from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { RUN_REASONS, RUN_STATUSES, RUN_TRIGGERS } from "../../../../src/domain/run.js";
import { SCHEDULE_TYPES } from "../../../../src/domain/schedule/schedule-types.js";
import { TARGET_KINDS } from "../../../../src/domain/target.js";
import { TASK_STATUSES } from "../../../../src/domain/task.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import { holdLock } from "../../../helpers/postgres-barrier.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

/** The values of the CHECK constraint on `column`, as written by the latest migration that sets it. */
function checkList(column: string): string[] {
  const pattern = new RegExp(`CHECK \\(${column} IN \\(([^)]*)\\)\\)`);
  const latest = [...POSTGRES_MIGRATIONS].reverse().find((m) => pattern.test(m.sql));
  const match = pattern.exec(latest?.sql ?? POSTGRES_MIGRATION_0001);
  if (match === null) throw new Error(`no CHECK on ${column}`);
  return [...match[1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
}

describe("postgres migrations", () => {
  it("keeps every CHECK list equal to the domain's as-const list", () => {
    expect(checkList("schedule_type")).toEqual([...SCHEDULE_TYPES]);
    expect(checkList("target_kind")).toEqual([...TARGET_KINDS]);
    expect(checkList("status")).toEqual([...TASK_STATUSES]);
    expect(checkList("trigger")).toEqual([...RUN_TRIGGERS]);
    expect(checkList("reason")).toEqual([...RUN_REASONS]);
    const runStatus = /runs_status_check\s+CHECK \(status IN \(([^)]*)\)\)/.exec(
      POSTGRES_MIGRATION_0001,
    );
    expect([...runStatus![1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])).toEqual([
      ...RUN_STATUSES,
    ]);
  });

  it("numbers migrations from 1 without gaps", () => {
    const versions = POSTGRES_MIGRATIONS.map((m) => m.version);
    const last = Math.max(...versions);
    expect(versions).toEqual(Array.from({ length: last }, (_, i) => i + 1));
  });

  it("creates every named index of the logical schema", async () => {
    const schema = database.freshSchema();
    const store = await database.openStore({ schema });
    const result = await database
      .pool()
      .query("SELECT indexname FROM pg_indexes WHERE schemaname = $1::text", [schema]);
    const names = result.rows.map((row) => (row as { indexname: string }).indexname);
    expect(names).toEqual(
      expect.arrayContaining([
        "task_state_due_idx",
        "task_state_pkey",
        "tasks_owner_idx",
        "tasks_thread_idx",
        "runs_occurrence_uq",
        "runs_manual_key_uq",
        "runs_owner_listing_idx",
        "runs_queued_at_idx",
        "runs_owner_requested_idx",
        "run_ready_owner_queue_idx",
        "run_ready_task_idx",
        "run_ready_thread_queue_idx",
        "run_holds_thread_idx",
        "run_holds_task_idx",
        "claim_slots_thread_uq",
        "claim_slots_task_uq",
        "api_tokens_token_hash_uq",
        "idempotency_records_pkey",
      ]),
    );
    // Dropped by migration 21: active runs are found through their slots.
    expect(names).not.toContain("runs_claim_expiry_idx");
    expect(names).not.toContain("runs_deadline_idx");
    // Folded into runs_occurrence_uq by migration 34.
    expect(names).not.toContain("runs_history_idx");
    expect(names).not.toContain("runs_scheduled_occurrence_uq");
    expect(names).not.toContain("runs_backfill_occurrence_uq");
    // Dropped by migration 24: no index of runs names a column a fire changes.
    const runIndexes = await database
      .pool()
      .query(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1::text AND tablename = 'runs'",
        [schema],
      );
    for (const row of runIndexes.rows as { indexname: string; indexdef: string }[]) {
      expect(row.indexdef, row.indexname).not.toMatch(
        /status|claim_|launched_at|finished_at|deadline_at/,
      );
    }
    await store.close();
  });

  const ALL = POSTGRES_MIGRATIONS.map((m) => m.version);
  const NEXT = Math.max(...ALL) + 1;

  it("reports everything pending on an empty schema and applies it once", async () => {
    const schema = schemaName(database.freshSchema());
    const pool = database.pool();
    await expect(postgresMigrationStatus(pool, schema)).resolves.toEqual({
      applied: [],
      pending: ALL,
      current: false,
    });
    await expect(migratePostgres(pool, schema)).resolves.toEqual({
      applied: ALL,
      pending: [],
      current: true,
    });
    await expect(migratePostgres(pool, schema)).resolves.toMatchObject({ current: true });
  });

  it("lets racing processes migrate the same schema: each migration is applied once", async () => {
    const schema = schemaName(database.freshSchema());
    const pools = Array.from({ length: 4 }, () => database.pool(1));
    const statuses = await Promise.all(pools.map((pool) => migratePostgres(pool, schema)));
    for (const status of statuses)
      expect(status).toEqual({ applied: ALL, pending: [], current: true });
    const rows = await database
      .pool()
      .query(`SELECT count(*)::int4 AS n FROM ${schema.quoted}.schema_migrations`);
    expect(rows.rows[0]).toEqual({ n: ALL.length });
  });

  it("forced: two real migrators both wait at the migration lock of an empty schema, then each migration is applied once", async () => {
    const schema = schemaName(database.freshSchema());
    const pools = [database.pool(1), database.pool(1)];
    // The coordinating connection holds the schema's migration lock: both migrators are seen waiting
    // on it before their first step, so they contend for every migration from the same start.
    const barrier = await holdLock(
      database.url!,
      "SELECT pg_advisory_xact_lock($1::int4, $2::int4)",
      [MIGRATION_LOCK_KIND, schema.lockKey],
    );
    try {
      const racing = Promise.all(pools.map((pool) => migratePostgres(pool, schema)));
      await barrier.waitForWaiters(2, "advisory");
      await barrier.release();
      for (const status of await racing) {
        expect(status).toEqual({ applied: ALL, pending: [], current: true });
      }
    } finally {
      await barrier.close();
    }
    const rows = await database
      .pool()
      .query(`SELECT version FROM ${schema.quoted}.schema_migrations ORDER BY version`);
    expect(rows.rows.map((r) => (r as { version: number }).version)).toEqual(ALL);
  });

  it("retries a migration transaction that lost a catalog race, and no other unique violation", async () => {
    // What the server raised in CI when two replicas started at once on an empty database through
    // PgBouncer: the second runner's CREATE SCHEMA IF NOT EXISTS, run after it waited for the lock,
    // missed the schema the first had just committed.
    const failing = (constraint: string, match: string, times: number): PostgresPool => {
      const pool = database.pool(1);
      let left = times;
      const fail = (text: string): void => {
        if (left > 0 && text.startsWith(match)) {
          left--;
          throw Object.assign(new Error("duplicate key value violates unique constraint"), {
            code: "23505",
            constraint,
          });
        }
      };
      return {
        query: (statement, values) => pool.query(statement, values),
        end: () => pool.end(),
        connect: async () => {
          const client = await pool.connect();
          return {
            query: async (statement, values) => {
              fail(typeof statement === "string" ? statement : statement.text);
              return client.query(statement, values);
            },
            release: (destroy) => {
              client.release(destroy);
            },
            on: (event: "error", listener: (error: Error) => void) => client.on(event, listener),
            off: (event, listener) => client.off(event, listener),
          } as PostgresClient;
        },
      };
    };
    const raced = schemaName(database.freshSchema());
    const racing = failing("pg_namespace_nspname_index", "CREATE SCHEMA IF NOT EXISTS", 2);
    await expect(migratePostgres(racing, raced)).resolves.toEqual({
      applied: ALL,
      pending: [],
      current: true,
    });
    const other = schemaName(database.freshSchema());
    const clash = failing("schema_migrations_pkey", "INSERT INTO", 1);
    await expect(migratePostgres(clash, other)).rejects.toMatchObject({
      constraint: "schema_migrations_pkey",
    });
  });

  it("refuses a database that holds a migration newer than the code knows", async () => {
    const schema = schemaName(database.freshSchema());
    const pool = database.pool();
    await migratePostgres(pool, schema);
    await pool.query(
      `INSERT INTO ${schema.quoted}.schema_migrations (version, name, checksum) VALUES (999, 'future', 'x')`,
    );
    await expect(migratePostgres(pool, schema)).rejects.toThrow(PostgresMigrationError);
    await expect(migratePostgres(pool, schema)).rejects.toThrow(/migration 999, newer/);
    await expect(postgresMigrationStatus(pool, schema)).resolves.toMatchObject({ current: false });
  });

  it("refuses a database whose applied migration has another checksum", async () => {
    const schema = schemaName(database.freshSchema());
    const pool = database.pool();
    await migratePostgres(pool, schema);
    await pool.query(`UPDATE ${schema.quoted}.schema_migrations SET checksum = 'edited'`);
    await expect(migratePostgres(pool, schema)).rejects.toThrow(/checksum mismatch/);
    await expect(postgresMigrationStatus(pool, schema)).resolves.toMatchObject({
      applied: ALL,
      pending: [],
      current: false,
    });
  });

  it("rolls a failing migration back entirely, its schema_migrations row included", async () => {
    const schema = schemaName(database.freshSchema());
    const pool = database.pool();
    const broken = [
      ...POSTGRES_MIGRATIONS,
      { version: NEXT, name: "broken", sql: "CREATE TABLE half (id int); SELECT 1/0;" },
    ];
    await expect(migratePostgres(pool, schema, broken)).rejects.toThrow(/division by zero/);
    await expect(postgresMigrationStatus(pool, schema, broken)).resolves.toEqual({
      applied: ALL,
      pending: [NEXT],
      current: false,
    });
    const half = await pool.query("SELECT to_regclass($1::text) AS t", [`${schema.quoted}.half`]);
    expect(half.rows[0]).toEqual({ t: null });
  });

  it("opens a store without migrating when asked, and refuses invalid schema names", async () => {
    const schema = database.freshSchema();
    const store = await database.openStore({ schema, migrate: false });
    await expect(store.migrationStatus()).resolves.toEqual({
      applied: [],
      pending: ALL,
      current: false,
    });
    await expect(store.migrate()).resolves.toMatchObject({ current: true });
    await store.close();
    await expect(database.openStore({ schema: 'x"; DROP TABLE tasks; --' })).rejects.toThrow(
      RangeError,
    );
  });
});
