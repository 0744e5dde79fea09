/**
 * PostgreSQL for tests. Uses `PUNCTUAL_TEST_DATABASE_URL`, else the local server
 * (`postgres://postgres@127.0.0.1:5432/postgres`); each test file gets its own fresh database
 * `punctual_t_<random>`, dropped afterwards, and each store a fresh schema in it. Without a reachable server
 * (and `CI` unset) the contract suite runs on PGlite (one in-process connection: it checks SQL, not
 * concurrency) and the race tests are skipped, each saying so; under `CI` an unreachable server fails.
 */
import { randomBytes } from "node:crypto";
import type { PGlite as PgliteClass } from "@electric-sql/pglite";
import pg from "pg";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import type {
  PostgresClient,
  PostgresPool,
  PostgresQueryResult,
  PostgresStatement,
} from "../../src/adapters/storage/postgres/postgres-pool.js";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
} from "../../src/adapters/storage/postgres/postgres-migrations.js";
import { schemaName } from "../../src/adapters/storage/postgres/postgres-schema-name.js";
import {
  RUN_TABLES_0024,
  RUN_TRIGGERS_0024,
  SLOT_TASK_0024,
} from "../../src/adapters/storage/postgres/postgres-migration-0024.js";
import { openPostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type {
  PostgresStore,
  PostgresStoreOptions,
} from "../../src/adapters/storage/postgres/postgres-store.js";

export const ADMIN_URL =
  process.env.PUNCTUAL_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

let reachable: Promise<boolean> | null = null;

/** Whether the PostgreSQL server answers (asked once per process). Under `CI`, an unreachable one throws. */
export function postgresServerReachable(): Promise<boolean> {
  reachable ??= probe().then((ok) => {
    if (!ok && (process.env.CI ?? "") !== "") {
      throw new Error(
        `CI: PostgreSQL is unreachable at ${redact(ADMIN_URL)}; it must not be skipped`,
      );
    }
    return ok;
  });
  return reachable;
}

async function probe(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    // Unreachable is an answer here, not a failure: the caller decides (PGlite, skip, or fail under CI).
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}

export interface PostgresTestDatabase {
  readonly kind: "server" | "pglite";
  /** The database's URL (server only). */
  readonly url: string | null;
  /** A pool on this database: a new `pg.Pool` (server), or the one PGlite connection. */
  pool(max?: number): PostgresPool;
  /** A fresh schema name, unique in this database. */
  freshSchema(): string;
  /** Opens a migrated store: in a fresh schema unless `schema` is given; pool shared unless `ownPool`. */
  openStore(
    options?: Partial<PostgresStoreOptions> & { readonly ownPool?: boolean },
  ): Promise<PostgresStore>;
  /**
   * Opens a migrated store on this database's one recycled schema, emptied first: as fresh as a new
   * schema for a test that runs alone, without paying for a migration per test (the contract suite).
   */
  openEmptyStore(): Promise<PostgresStore>;
  /** Ends every pool it opened and drops the database. */
  drop(): Promise<void>;
}

/** Every table of the schema, children first, for emptying a recycled schema. */
const TABLES = [
  "claim_slots",
  "runs",
  "task_state",
  "tasks",
  "replicas",
  "api_tokens",
  "idempotency_records",
  "calendars",
  "calendar_versions",
  "fleet_settings",
];

/** `openEmptyStore` for a database whose stores open with `open` on the shared pool `pool`. */
function recycler(
  open: (schema: string) => Promise<PostgresStore>,
  pool: PostgresPool,
): () => Promise<PostgresStore> {
  let schema: string | null = null;
  return async () => {
    if (schema === null) {
      schema = nextSchema();
      return open(schema);
    }
    const quoted = `"${schema}"`;
    await pool.query(TABLES.map((table) => `DELETE FROM ${quoted}.${table};`).join(" "));
    return open(schema);
  };
}

let pgliteNoticeShown = false;

/** A database left at an older schema, for a migration's upgrade test. */
export interface OlderSchema {
  readonly pool: PostgresPool;
  readonly schema: string;
  /** The schema's name, quoted for SQL text. */
  readonly quoted: string;
  /**
   * A store on it that applies no migration: the rows it writes are the older code's. Below schema 23 the
   * store's task state is bridged (`bridgeTaskState`) until it is closed, when the state moves back into
   * the `tasks` columns of that schema.
   */
  readonly store: PostgresStore;
  /** Applies every migration up to the newest. */
  readonly migrate: () => Promise<unknown>;
  /** Takes back the run queue lent to an older schema (`withRunQueueTables`): the bare older schema. */
  readonly withoutRunQueue: () => Promise<void>;
}

/** A fresh schema migrated up to `version` only, with a store on it that migrates nothing. */
export async function schemaAtVersion(
  database: PostgresTestDatabase,
  version: number,
): Promise<OlderSchema> {
  const pool = database.pool(2);
  const schema = database.freshSchema();
  await migratePostgres(
    pool,
    schemaName(schema),
    POSTGRES_MIGRATIONS.filter((m) => m.version <= version),
  );
  const quoted = `"${schema}"`;
  const bridged = version < TASK_STATE_VERSION;
  if (bridged) await bridgeTaskState(pool, quoted);
  // Today's store reads and writes the run queue (migration 24): lent to an older schema until the
  // store closes or the schema migrates.
  const lent = version < 24 ? await withRunQueueTables(pool, quoted) : null;
  // Today's store joins calendar versions into its task reads (migration 27): lent likewise.
  const lentCalendars =
    version < CALENDAR_VERSIONS_VERSION ? await withCalendarVersions(pool, quoted) : null;
  // Today's store leaves a scheduled run's derived idempotency key NULL (migration 28): the column is
  // lent nullable to an older schema, and the keys are written back (as that schema's code wrote them)
  // when the store closes or the schema migrates.
  const keysLent = version < NULLABLE_KEY_VERSION;
  if (keysLent) {
    await pool.query(`ALTER TABLE ${quoted}.runs ALTER COLUMN idempotency_key DROP NOT NULL`);
  }
  // Today's store reads and writes a run's moved marker (migration 29): the column is lent to an older
  // schema and taken back before it migrates.
  const movedLent = version < MOVED_MARKER_VERSION;
  if (movedLent) await pool.query(`ALTER TABLE ${quoted}.runs ADD COLUMN moved boolean`);
  // Today's store inserts a lease per claim and never frees a slot row (migration 31): an older schema's
  // unbound slot rows go, and its triggers' freeing of a slot (an update to NULL) deletes the row, until
  // the schema migrates or the store is taken back.
  const leasesLent =
    version < LEASE_VERSION && (await tableExists(pool, quoted, "claim_slots"))
      ? await withLeases(pool, quoted)
      : null;
  // Today's store writes narrow leases (migration 32: `exclusive`, `thread_id` NULL for a run on its own
  // thread) and reads them by `COALESCE(thread_id, run_id)` and `exclusive`: lent likewise.
  const narrowLent =
    version < NARROW_LEASE_VERSION && (await tableExists(pool, quoted, "claim_slots"))
      ? await withNarrowLeases(pool, quoted)
      : null;
  const returnKeys = async (): Promise<void> => {
    if (!keysLent) return;
    await pool.query(
      `UPDATE ${quoted}.runs SET idempotency_key = 'punctual:' || task_id || ':' || trigger || ':'` +
        ` || (extract(epoch FROM scheduled_for) * 1000)::int8 WHERE idempotency_key IS NULL`,
    );
    await pool.query(`ALTER TABLE ${quoted}.runs ALTER COLUMN idempotency_key SET NOT NULL`);
  };
  let returned = false;
  const teardown = async (): Promise<void> => {
    await returnKeys();
    if (returned) return;
    returned = true;
    if (narrowLent !== null) await narrowLent();
    if (leasesLent !== null) await leasesLent();
    if (lent !== null) await lent();
    if (lentCalendars !== null) await lentCalendars();
    if (movedLent) await pool.query(`ALTER TABLE ${quoted}.runs DROP COLUMN moved`);
  };
  const opened = await openPostgresStore({
    newId: createIdGenerator(),
    pool,
    schema,
    migrate: false,
  });
  const close = async () => {
    await opened.close();
    if (bridged) await unbridgeTaskState(pool, quoted);
    await returnKeys();
  };
  const store: PostgresStore =
    bridged || keysLent
      ? new Proxy(opened, {
          get(target, property) {
            if (property === "close") return close;
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === "function" ? (value as () => unknown).bind(target) : value;
          },
        })
      : opened;
  return {
    pool,
    schema,
    quoted,
    store,
    migrate: async () => {
      await teardown();
      return migratePostgres(pool, schemaName(schema));
    },
    withoutRunQueue: teardown,
  };
}

/** The migration that made a budget slot a lease row (docs/storage.md#the-run-model-on-postgresql). */
const LEASE_VERSION = 31;

/**
 * Lends schema `quoted` (older than migration 31) today's slot leases: its unbound slot rows are deleted,
 * and a slot its triggers free (an update of the row to NULL) is deleted. Returns the teardown, which
 * drops the trigger (the rows stay as leases: migration 31 keeps the bound ones only).
 */
async function withLeases(pool: PostgresPool, quoted: string): Promise<() => Promise<void>> {
  await pool.query(
    `DELETE FROM ${quoted}.claim_slots WHERE run_id IS NULL;` +
      ` CREATE FUNCTION ${quoted}.claim_slots_lent_release() RETURNS trigger LANGUAGE plpgsql AS $fn$` +
      ` BEGIN DELETE FROM ${quoted}.claim_slots WHERE slot = NEW.slot AND run_id IS NULL;` +
      ` RETURN NULL; END $fn$;` +
      ` CREATE TRIGGER claim_slots_lent_release AFTER UPDATE ON ${quoted}.claim_slots FOR EACH ROW` +
      ` WHEN (NEW.run_id IS NULL) EXECUTE FUNCTION ${quoted}.claim_slots_lent_release()`,
  );
  return async () => {
    await pool.query(
      `DROP TRIGGER claim_slots_lent_release ON ${quoted}.claim_slots;` +
        ` DROP FUNCTION ${quoted}.claim_slots_lent_release()`,
    );
  };
}

/** The migration that narrowed the lease row (docs/storage.md#the-run-model-on-postgresql). */
const NARROW_LEASE_VERSION = 32;

/**
 * Lends schema `quoted` (older than migration 32) today's narrow lease columns: an `exclusive` flag, and a
 * `thread_id` today's store may insert NULL (a run on a thread of its own). A trigger writes each lease as
 * that schema keeps it (its thread id, and its task in `task_id` if exclusive), so its keys and triggers
 * work as before. Returns the teardown, which takes the flag and trigger back (the rows stay).
 */
async function withNarrowLeases(pool: PostgresPool, quoted: string): Promise<() => Promise<void>> {
  const nullable = await pool.query(
    `SELECT is_nullable FROM information_schema.columns WHERE table_schema = $1::text` +
      ` AND table_name = 'claim_slots' AND column_name = 'thread_id'`,
    [quoted.slice(1, -1)],
  );
  const wasNotNull = (nullable.rows[0] as { is_nullable: string }).is_nullable === "NO";
  await pool.query(
    `ALTER TABLE ${quoted}.claim_slots ADD COLUMN exclusive boolean NOT NULL DEFAULT false,` +
      ` ALTER COLUMN thread_id DROP NOT NULL;` +
      ` UPDATE ${quoted}.claim_slots SET exclusive = task_id IS NOT NULL;` +
      ` CREATE FUNCTION ${quoted}.claim_slots_lent_narrow() RETURNS trigger LANGUAGE plpgsql AS $fn$` +
      ` BEGIN IF TG_OP = 'INSERT' AND NEW.exclusive THEN NEW.task_id := NEW.run_task_id; END IF;` +
      ` NEW.exclusive := NEW.task_id IS NOT NULL;` +
      ` IF NEW.run_id IS NOT NULL THEN NEW.thread_id := COALESCE(NEW.thread_id, NEW.run_id); END IF;` +
      ` RETURN NEW; END $fn$;` +
      ` CREATE TRIGGER claim_slots_lent_narrow BEFORE INSERT OR UPDATE ON ${quoted}.claim_slots` +
      ` FOR EACH ROW EXECUTE FUNCTION ${quoted}.claim_slots_lent_narrow()`,
  );
  return async () => {
    await pool.query(
      `DROP TRIGGER claim_slots_lent_narrow ON ${quoted}.claim_slots;` +
        ` DROP FUNCTION ${quoted}.claim_slots_lent_narrow();` +
        ` ALTER TABLE ${quoted}.claim_slots DROP COLUMN exclusive` +
        (wasNotNull ? `, ALTER COLUMN thread_id SET NOT NULL` : ""),
    );
  };
}

/** The migration that added the marker of a run from a moved occurrence (docs/schedules.md#moved-occurrences). */
const MOVED_MARKER_VERSION = 29;

/** Whether schema `quoted` (an identifier already quoted) has table `name`. */
async function tableExists(pool: PostgresPool, quoted: string, name: string): Promise<boolean> {
  const found = await pool.query("SELECT to_regclass($1::text) IS NOT NULL AS present", [
    `${quoted}.${name}`,
  ]);
  return (found.rows[0] as { present: boolean }).present;
}

/** The migration that stored calendars as references (docs/storage.md#calendar-versions). */
const CALENDAR_VERSIONS_VERSION = 27;

/**
 * Lends an older schema migration 27's `calendar_versions` table (and the holiday columns of
 * `calendars`, where it has that table), which today's store reads; the function returned takes them back.
 */
export async function withCalendarVersions(
  pool: PostgresPool,
  quoted: string,
): Promise<() => Promise<void>> {
  const hasCalendars = await tableExists(pool, quoted, "calendars");
  const columns = ["holiday_region text", "holiday_from_year integer", "holiday_to_year integer"];
  await pool.query(
    `CREATE TABLE ${quoted}.calendar_versions (owner text NOT NULL, name text NOT NULL,` +
      ` version integer NOT NULL, items text NOT NULL, PRIMARY KEY (owner, name, version));` +
      (hasCalendars
        ? ` ALTER TABLE ${quoted}.calendars ${columns.map((c) => `ADD COLUMN ${c}`).join(", ")};`
        : ""),
  );
  return async () => {
    await pool.query(
      `DROP TABLE ${quoted}.calendar_versions;` +
        (hasCalendars
          ? ` ALTER TABLE ${quoted}.calendars DROP COLUMN holiday_region,` +
            ` DROP COLUMN holiday_from_year, DROP COLUMN holiday_to_year;`
          : ""),
    );
  };
}

/** The migration that moved what a fire writes into `task_state` (docs/storage.md#tasks-and-task_state). */
const TASK_STATE_VERSION = 23;

/** The migration from which a scheduled run's derived idempotency key may be stored NULL. */
const NULLABLE_KEY_VERSION = 28;

/** The task state columns that `tasks` held before schema 23 (each copied back if that schema has it). */
const OLDER_TASK_STATE_COLUMNS = [
  "version",
  "status",
  "next_run_at",
  "decided_through",
  "admitted_count",
  "run_count",
  "defect_at",
  "last_run_at",
  "last_run_id",
  "last_error",
];

/**
 * Lets today's store write tasks on a schema older than 23, whose `tasks` rows still hold their state: a
 * `task_state` table as migration 23 makes it, and the state columns of `tasks` nullable, until
 * `unbridgeTaskState` moves the state back where that schema keeps it. Upgrade tests use it so that their
 * rows are made by the store, as the older code made them, rather than by hand.
 */
export async function bridgeTaskState(pool: PostgresPool, quoted: string): Promise<void> {
  await pool.query(
    `CREATE TABLE ${quoted}.task_state (
       task_id text PRIMARY KEY REFERENCES ${quoted}.tasks (id) ON DELETE CASCADE,
       version integer NOT NULL, status text NOT NULL, next_run_at timestamptz,
       decided_through timestamptz NOT NULL, admitted_count bigint NOT NULL DEFAULT 0,
       run_count bigint NOT NULL DEFAULT 0, defect_at timestamptz, last_run_at timestamptz,
       last_run_id text, last_error text,
       due_at timestamptz GENERATED ALWAYS AS
         (CASE WHEN status = 'enabled' AND defect_at IS NULL THEN next_run_at END) STORED)`,
  );
  await pool.query(
    `ALTER TABLE ${quoted}.tasks ALTER COLUMN version DROP NOT NULL,` +
      ` ALTER COLUMN status DROP NOT NULL, ALTER COLUMN decided_through DROP NOT NULL`,
  );
}

/** Ends `bridgeTaskState`: the state back in the `tasks` columns the schema has, `task_state` gone. */
export async function unbridgeTaskState(pool: PostgresPool, quoted: string): Promise<void> {
  const present = await pool.query(
    `SELECT column_name FROM information_schema.columns` +
      ` WHERE table_schema = $1::text AND table_name = 'tasks'`,
    [quoted.slice(1, -1)],
  );
  const names = new Set((present.rows as { column_name: string }[]).map((r) => r.column_name));
  const sets = OLDER_TASK_STATE_COLUMNS.filter((c) => names.has(c)).map((c) => `${c} = s.${c}`);
  await pool.query(
    `UPDATE ${quoted}.tasks AS t SET ${sets.join(", ")} FROM ${quoted}.task_state AS s` +
      ` WHERE s.task_id = t.id`,
  );
  await pool.query(
    `ALTER TABLE ${quoted}.tasks ALTER COLUMN version SET NOT NULL,` +
      ` ALTER COLUMN status SET NOT NULL, ALTER COLUMN decided_through SET NOT NULL`,
  );
  await pool.query(`DROP TABLE ${quoted}.task_state`);
}

/**
 * Every task as one JSON object, whatever the schema: the `tasks` row, with its `task_state` columns (but
 * the key and the generated `due_at`) merged in from schema 23 on, so rows read before and after that
 * migration compare equal. Ordered by id.
 */
export async function taskRows(pool: PostgresPool, quoted: string): Promise<readonly unknown[]> {
  const merged = (await tableExists(pool, quoted, "task_state"))
    ? `to_jsonb(t) || (to_jsonb(s) - 'task_id' - 'due_at') AS row FROM ${quoted}.tasks AS t` +
      ` JOIN ${quoted}.task_state AS s ON s.task_id = t.id`
    : `to_jsonb(t) AS row FROM ${quoted}.tasks AS t`;
  return (await pool.query(`SELECT ${merged} ORDER BY t.id`)).rows;
}

/** A fresh database for one test file (PGlite when no server is reachable and `CI` is unset). */
export async function createPostgresTestDatabase(): Promise<PostgresTestDatabase> {
  if (await postgresServerReachable()) return createServerDatabase();
  if (!pgliteNoticeShown) {
    pgliteNoticeShown = true;
    console.warn(
      `[punctual] PostgreSQL unreachable at ${redact(ADMIN_URL)}: the PostgreSQL contract suite runs on ` +
        "PGlite (one connection); the multi-connection race tests are SKIPPED.",
    );
  }
  return createPgliteDatabase();
}

let schemaCounter = 0;
function nextSchema(): string {
  schemaCounter++;
  return `s${schemaCounter}_${randomBytes(3).toString("hex")}`;
}

async function createServerDatabase(): Promise<PostgresTestDatabase> {
  const name = `punctual_t_${randomBytes(6).toString("hex")}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pools: pg.Pool[] = [];
  const newPool = (max = 4): pg.Pool => {
    const pool = new pg.Pool({ connectionString: url.toString(), max });
    pool.on("error", () => undefined);
    pools.push(pool);
    return pool;
  };
  const shared = newPool(8);
  const open = (schema: string) =>
    openPostgresStore({ newId: createIdGenerator(), schema, pool: shared });
  return {
    kind: "server",
    url: url.toString(),
    pool: newPool,
    freshSchema: nextSchema,
    openStore: (options = {}) =>
      openPostgresStore({
        newId: createIdGenerator(),
        schema: nextSchema(),
        ...options,
        pool: options.pool ?? (options.ownPool === true ? newPool() : shared),
      }),
    openEmptyStore: recycler(open, shared),
    drop: async () => {
      await Promise.all(pools.map((pool) => pool.end()));
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createPgliteDatabase(): Promise<PostgresTestDatabase> {
  // A computed specifier: import-x's cycle walker overflows its stack on PGlite's bundled dist.
  const specifier: string = "@electric-sql/pglite";
  const { PGlite } = (await import(specifier)) as PgliteModule;
  const db = new PGlite();
  const session = new PgliteSession(db);
  return {
    kind: "pglite",
    url: null,
    pool: () => session,
    freshSchema: nextSchema,
    openStore: (options = {}) =>
      openPostgresStore({
        newId: createIdGenerator(),
        schema: nextSchema(),
        ...options,
        pool: session,
      }),
    openEmptyStore: recycler(
      (schema) => openPostgresStore({ newId: createIdGenerator(), schema, pool: session }),
      session,
    ),
    drop: () => db.close(),
  };
}

interface PgliteModule {
  readonly PGlite: typeof PgliteClass;
}

interface PgliteLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; affectedRows?: number }>;
  exec(text: string): Promise<{ rows: unknown[]; affectedRows?: number }[]>;
}

/**
 * PGlite's single connection as a pool: `connect()` waits until the previous client is released, so a
 * transaction never interleaves with another caller's statements.
 */
class PgliteSession implements PostgresPool {
  readonly #db: PgliteLike;
  #tail: Promise<void> = Promise.resolve();

  constructor(db: PgliteLike) {
    this.#db = db;
  }

  async connect(): Promise<PostgresClient> {
    const release = await this.#acquire();
    let released = false;
    return {
      query: (text, values) => this.#run(text, values),
      release: () => {
        if (!released) {
          released = true;
          release();
        }
      },
      on: () => undefined,
      off: () => undefined,
    };
  }

  async query(
    statement: string | PostgresStatement,
    values?: unknown[],
  ): Promise<PostgresQueryResult> {
    const release = await this.#acquire();
    try {
      return await this.#run(statement, values);
    } finally {
      release();
    }
  }

  end(): Promise<void> {
    return Promise.resolve();
  }

  async #acquire(): Promise<() => void> {
    const previous = this.#tail;
    let release: () => void = () => undefined;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  }

  async #run(
    statement: string | PostgresStatement,
    values?: unknown[],
  ): Promise<PostgresQueryResult> {
    const text = typeof statement === "string" ? statement : statement.text;
    // Statements without parameters may hold several commands (migrations): the simple protocol.
    if (values === undefined || values.length === 0) {
      const results = await this.#db.exec(text);
      const last = results.at(-1);
      return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? null };
    }
    const result = await this.#db.query(text, values);
    return { rows: result.rows, rowCount: result.affectedRows ?? null };
  }
}

/** Opens `count` stores on one schema, each on its own pool: separate connections, true concurrency. */
export async function openReplicaStores(
  database: PostgresTestDatabase,
  count: number,
  schema: string = database.freshSchema(),
): Promise<PostgresStore[]> {
  // Opening concurrently also races their migrations on the same schema.
  return Promise.all(
    Array.from({ length: count }, () => database.openStore({ schema, ownPool: true })),
  );
}

/**
 * Whether this file's multi-connection race tests can run: true with a server; otherwise prints a visible
 * line saying they are skipped (under `CI` an unreachable server throws instead).
 */
export async function raceTestsRunnable(file: string): Promise<boolean> {
  if (await postgresServerReachable()) return true;
  console.warn(
    `[punctual] SKIPPED ${file}: multi-connection race tests need a PostgreSQL server (none reachable).`,
  );
  return false;
}

/**
 * Lets today's store write rows on a schema older than migration 24, as migration tests of older
 * migrations do (migration 6's test adds later columns the same way): the run queue, hold tables, the
 * slots' task column and the triggers that keep them, added to schema `quoted` (with a bare
 * `claim_slots` when the schema predates it). Returns the teardown that leaves the schema exactly at its
 * version again; the runs' rows it kept are what migration 24 reads.
 */
export async function withRunQueueTables(
  pool: PostgresPool,
  quoted: string,
): Promise<() => Promise<void>> {
  const hadSlots = await tableExists(pool, quoted, "claim_slots");
  const bare =
    `CREATE TABLE claim_slots (slot integer PRIMARY KEY, run_id text, thread_scope text,` +
    ` thread_id text, task_id text, owner text, claimed_by text);`;
  // One simple query, so one session: the triggers' functions keep the schema as their search path.
  await pool.query(
    `SET search_path TO ${quoted}; ${hadSlots ? "" : bare} ${RUN_TABLES_0024} ${SLOT_TASK_0024}` +
      ` ${RUN_TRIGGERS_0024}; RESET search_path`,
  );
  return async () => {
    await pool.query(
      `DROP TRIGGER runs_inserted ON ${quoted}.runs; DROP TRIGGER runs_moved ON ${quoted}.runs;` +
        ` DROP TRIGGER runs_deleted ON ${quoted}.runs; DROP FUNCTION ${quoted}.runs_inserted();` +
        ` DROP FUNCTION ${quoted}.runs_moved(); DROP FUNCTION ${quoted}.runs_deleted();` +
        ` DROP TABLE ${quoted}.run_ready; DROP TABLE ${quoted}.run_holds;` +
        (hadSlots
          ? ` ALTER TABLE ${quoted}.claim_slots DROP COLUMN run_task_id`
          : ` DROP TABLE ${quoted}.claim_slots`),
    );
  };
}

/** A budget slot's lease as every schema can be compared on (`leaseRows`). */
export interface LeaseRow {
  readonly slot: number;
  readonly run_id: string | null;
  readonly thread_scope: string | null;
  readonly thread_id: string | null;
  /** The run's task if the run is exclusive (the task key's), else null. */
  readonly task_id: string | null;
  readonly owner: string | null;
}

/**
 * The rows of `claim_slots` in schema `quoted` (`where`: a condition on them), by slot, in one shape
 * whatever the schema's version: migration 32 stores `thread_id` NULL for a run on its own thread and
 * an `exclusive` flag instead of `task_id`, and drops `claimed_by` (the run keeps its own), so a
 * migration's test compares the leases before and after it on what every version keeps.
 */
export async function leaseRows(
  pool: PostgresPool,
  quoted: string,
  where = "true",
): Promise<LeaseRow[]> {
  const result = await pool.query(
    `SELECT to_jsonb(s) AS row FROM ${quoted}.claim_slots AS s WHERE ${where} ORDER BY s.slot`,
  );
  return result.rows.map((value) => {
    const row = (value as { row: Record<string, unknown> }).row;
    const runId = (row["run_id"] ?? null) as string | null;
    const narrow = !("task_id" in row);
    return {
      slot: row["slot"] as number,
      run_id: runId,
      thread_scope: (row["thread_scope"] ?? null) as string | null,
      thread_id: ((row["thread_id"] ?? null) as string | null) ?? runId,
      task_id: (narrow
        ? row["exclusive"] === true
          ? row["run_task_id"]
          : null
        : (row["task_id"] ?? null)) as string | null,
      owner: (row["owner"] ?? null) as string | null,
    };
  });
}
