/**
 * The PostgreSQL store: every storage port over one `pg` pool (docs/architecture.md), shared by any number of replicas.
 * Opening it applies pending migrations under an advisory lock. It also offers the two optional ports
 * only a shared database has: the database's clock (`referenceClock`, for the runtime's skew
 * correction) and wake-ups over LISTEN/NOTIFY on the wake channel (`wakes`).
 */
import { isPostgresRefusal } from "./postgres-errors.js";
import { CLEAR_SECRETS, resealed } from "../shared/secret-keyring.js";
import type { StoredSecrets } from "../shared/secret-keyring.js";
import type { PostgresPooler } from "./postgres-pooler.js";
import pg from "pg";
import type {
  MigrationStatus,
  ReferenceClock,
  Store,
  StoreFactory,
  StoreOptions,
  WakeSource,
} from "../../../domain/ports/store.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import { measureOffsetMs } from "./postgres-clock-offset.js";
import { WAKE_CHANNEL, postgresContext } from "./postgres-context.js";
import type { PostgresContext } from "./postgres-context.js";
import { migratePostgres, postgresMigrationStatus } from "./postgres-migrations.js";
import { listen, notify } from "./postgres-notifications.js";
import type { ListenOptions, PostgresListener } from "./postgres-notifications.js";
import type { PostgresPool } from "./postgres-pool.js";
import { PostgresCalendarRepository } from "./postgres-calendar-repository.js";
import { PostgresIdempotencyRepository } from "./postgres-idempotency-repository.js";
import { PostgresFleetSettings } from "./postgres-fleet-settings.js";
import { PostgresReplicaRegistry } from "./postgres-replica-registry.js";
import { integer, record } from "./postgres-rows.js";
import { PostgresRunRepository } from "./postgres-run-repository.js";
import { schemaName } from "./postgres-schema-name.js";
import { PostgresTaskRepository } from "./postgres-task-repository.js";
import { PostgresTokenRepository } from "./postgres-token-repository.js";
import { withoutNamedStatements } from "./postgres-unnamed-pool.js";
import { PostgresWakeSource } from "./postgres-wake-source.js";

/** Connections of the LISTEN pool: the listener's, and one to listen again while it is replaced. */
const LISTEN_POOL_SIZE = 2;

export { WAKE_CHANNEL };

export interface PostgresStoreOptions extends StoreOptions {
  /** A connection string; the store then owns its pool and ends it on `close()`. */
  readonly url?: string;
  /** A pool the caller owns (a `pg.Pool`); `close()` leaves it open. Takes precedence over `url`. */
  readonly pool?: PostgresPool;
  /** The schema punctual's tables live in, created if missing. @default "punctual" */
  readonly schema?: string;
  /** Size of the pool the store creates from `url`. @default 10 */
  readonly poolSize?: number;
  /** Apply pending migrations while opening. @default true */
  readonly migrate?: boolean;
  /** NOTIFY `punctual_wake` when work is created or a launch slot frees. @default true */
  readonly notifications?: boolean;
  /** Errors of idle pooled connections (the pool drops them; the next query reports its own). */
  readonly onPoolError?: (error: Error) => void;
  /**
   * What stands between punctual and the server (docs/operations.md#pgbouncer). `transaction`: a pooler
   * in transaction mode such as PgBouncer, so no statement is prepared by name and LISTEN goes only to
   * `listenUrl` (without one, replicas find new work by polling at their tick).
   * @default "none"
   */
  readonly pooler?: PostgresPooler;
  /** A direct connection (not through a pooler) for LISTEN; the store opens one connection to it. */
  readonly listenUrl?: string;
  /**
   * How long opening a connection may take before it fails (docs/operations.md#database-timeouts).
   * Applies to the pools the store creates from `url` and `listenUrl`. @default 10000
   */
  readonly connectTimeoutMs?: number;
  /**
   * The longest a statement may run, or a transaction sit idle, on the server before it is cancelled
   * (`statement_timeout`, `idle_in_transaction_session_timeout`; not sent behind a transaction pooler,
   * which refuses them); the client gives up on an answer 2 s after it (`query_timeout`) and discards
   * the connection, so a partitioned replica notices. 0 sets none. @default 60000
   */
  readonly statementTimeoutMs?: number;
  /**
   * How often the LISTEN connection is asked a trivial query: one that does not answer within the
   * statement timeout (or 10 s when none is set) is replaced, and polling covers the gap. @default 10000
   */
  readonly listenCheckMs?: number;
}

/** `connectTimeoutMs` when not given. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** `statementTimeoutMs` when not given. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 60_000;
/** How much longer than the server's statement timeout the client waits for an answer. */
const CLIENT_TIMEOUT_MARGIN_MS = 2_000;
/** The first TCP keepalive probe after this much idleness (the kernel's count and interval follow). */
const KEEPALIVE_IDLE_MS = 10_000;

/** The poolers punctual knows how to work behind (`PUNCTUAL_PG_POOLER`). */
export { POSTGRES_POOLERS } from "./postgres-pooler.js";
export type { PostgresPooler } from "./postgres-pooler.js";

export interface PostgresStore extends Store {
  readonly kind: "postgres";
  resealSecrets(): Promise<number>;
  readonly calendars: PostgresCalendarRepository;
  /** Absent behind a transaction pooler without a `listenUrl`: replicas then poll. */
  readonly wakes?: WakeSource;
  readonly referenceClock: ReferenceClock;
  /** The database clock (`clock_timestamp()`) in epoch ms, to correct replica clock skew (docs/architecture.md#cadence). */
  dbNow(): Promise<Instant>;
  /**
   * Listens on `channel` on a dedicated connection; `onNotify` gets each payload.
   * @throws behind a transaction pooler without a `listenUrl` (LISTEN would be lost there)
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    options?: ListenOptions,
  ): Promise<PostgresListener>;
  /** Sends a notification on `channel` (outside any transaction). */
  notify(channel: string, payload?: string): Promise<void>;
}

/** Opens a PostgreSQL store from `url` or `pool` and migrates it (unless `migrate: false`). */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const schema = schemaName(options.schema);
  const owned = options.pool === undefined;
  const given = options.pool ?? createPool(options);
  const pooler = options.pooler ?? "none";
  const pool = pooler === "transaction" ? withoutNamedStatements(given) : given;
  const listenPool =
    options.listenUrl === undefined || options.listenUrl === ""
      ? pooler === "transaction"
        ? null
        : pool
      : createPool({
          ...options,
          url: options.listenUrl,
          poolSize: LISTEN_POOL_SIZE,
          pooler: "none",
        });
  const ctx = postgresContext({
    pool,
    schema,
    newId: options.newId,
    notifies: options.notifications ?? true,
    secrets: options.secrets ?? CLEAR_SECRETS,
  });
  const listeners = new Set<PostgresListener>();
  let closing: Promise<void> | null = null;
  const dbNow = async (): Promise<Instant> => {
    const result = await pool.query(
      "SELECT floor(extract(epoch from clock_timestamp()) * 1000)::int8 AS now",
    );
    return instant(integer(record(result.rows[0]), "now"));
  };
  const listenOn: PostgresStore["listen"] = async (channel, onNotify, listenOptions) => {
    if (listenPool === null) {
      throw new Error(
        "LISTEN through a transaction pooler would lose notifications: set a direct listen URL",
      );
    }
    const listener = await listen(listenPool, channel, onNotify, {
      checkEveryMs: options.listenCheckMs ?? 10_000,
      checkTimeoutMs: clientTimeoutMs(options) ?? 10_000,
      ...listenOptions,
    });
    listeners.add(listener);
    return {
      close: () => {
        listeners.delete(listener);
        return listener.close();
      },
    };
  };
  const store: PostgresStore = {
    kind: "postgres",
    tasks: new PostgresTaskRepository(ctx),
    runs: new PostgresRunRepository(ctx),
    replicas: new PostgresReplicaRegistry(ctx),
    calendars: new PostgresCalendarRepository(ctx),
    apiTokens: new PostgresTokenRepository(ctx),
    idempotency: new PostgresIdempotencyRepository(ctx),
    fleet: new PostgresFleetSettings(ctx),
    migrate: (): Promise<MigrationStatus> => migratePostgres(pool, schema),
    migrationStatus: () => postgresMigrationStatus(pool, schema),
    resealSecrets: () => resealPostgresSecrets(ctx),
    ping: async () => {
      await pool.query("SELECT 1");
    },
    refuses: isPostgresRefusal,
    dbNow,
    referenceClock: {
      // Several readings, the fastest kept (postgres-clock-offset.ts).
      measureOffsetMs: () => measureOffsetMs(dbNow),
    },
    listen: listenOn,
    ...(listenPool === null
      ? {}
      : {
          wakes: new PostgresWakeSource(
            listenOn,
            WAKE_CHANNEL,
            ctx.notifies ? (channel, payload) => notify(pool, channel, payload) : undefined,
          ),
        }),
    notify: (channel, payload) => notify(pool, channel, payload),
    close: () => {
      closing ??= (async () => {
        await Promise.all([...listeners].map((l) => l.close()));
        if (listenPool !== null && listenPool !== pool) await listenPool.end();
        if (owned) await pool.end();
      })();
      return closing;
    },
  };
  if (options.migrate ?? true) {
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

/** `postgres()`'s options: the schema, and what stands between punctual and the server. */
export interface PostgresOptions {
  /** @default "punctual" */
  readonly schema?: string;
  /** `transaction` behind PgBouncer in transaction mode (docs/operations.md#pgbouncer). @default "none" */
  readonly pooler?: PostgresPooler;
  /** A direct connection for LISTEN when the main one goes through a pooler. */
  readonly listenUrl?: string;
  /** docs/operations.md#database-timeouts. @default 10000 */
  readonly connectTimeoutMs?: number;
  /** docs/operations.md#database-timeouts; 0 for none. @default 60000 */
  readonly statementTimeoutMs?: number;
  /** docs/operations.md#database-timeouts. @default 10000 */
  readonly listenCheckMs?: number;
}

/** A PostgreSQL database, by connection string or a `pg.Pool` you own. */
export function postgres(
  target: string | PostgresPool,
  options: PostgresOptions = {},
): StoreFactory {
  return {
    open: ({ newId, secrets }) =>
      openPostgresStore({
        newId,
        ...(secrets === undefined ? {} : { secrets }),
        ...(typeof target === "string" ? { url: target } : { pool: target }),
        ...(options.schema === undefined ? {} : { schema: options.schema }),
        ...(options.pooler === undefined ? {} : { pooler: options.pooler }),
        ...(options.listenUrl === undefined ? {} : { listenUrl: options.listenUrl }),
        ...(options.connectTimeoutMs === undefined
          ? {}
          : { connectTimeoutMs: options.connectTimeoutMs }),
        ...(options.statementTimeoutMs === undefined
          ? {}
          : { statementTimeoutMs: options.statementTimeoutMs }),
        ...(options.listenCheckMs === undefined ? {} : { listenCheckMs: options.listenCheckMs }),
      }),
  };
}

function createPool(options: PostgresStoreOptions): PostgresPool {
  if (options.url === undefined) {
    throw new TypeError("openPostgresStore needs a `url` or a `pool`");
  }
  const statementMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const clientMs = clientTimeoutMs(options);
  // Server-side limits travel as startup parameters, which a transaction pooler refuses.
  const serverLimits = statementMs > 0 && (options.pooler ?? "none") !== "transaction";
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    types: { getTypeParser: postgresTypeParser },
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    ...(clientMs === null ? {} : { query_timeout: clientMs }),
    ...(serverLimits
      ? { statement_timeout: statementMs, idle_in_transaction_session_timeout: statementMs }
      : {}),
  });
  const onError = options.onPoolError;
  // Without a listener an idle connection's error would crash the process; the pool discards that client.
  pool.on("error", (error) => onError?.(error));
  // Every connection gets its own listener too: see with-transaction.ts (pg-pool's is removed on checkout).
  pool.on("connect", (client) => {
    client.on("error", (error) => onError?.(error));
  });
  return pool;
}

/** How long the client waits for a statement's answer, or null when no statement timeout is set. */
function clientTimeoutMs(options: PostgresStoreOptions): number | null {
  const statementMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return statementMs > 0 ? statementMs + CLIENT_TIMEOUT_MARGIN_MS : null;
}

const INT8_OID = 20;
const defaultTypeParser = pg.types.getTypeParser as (
  oid: number,
  format?: string,
) => (value: string) => unknown;

/**
 * node-postgres's parsers, except that an `int8` that fits a double exactly arrives as a number: every
 * instant is read as epoch milliseconds in an `int8`, and the default parser checked each one with a
 * regular expression and handed back a string to convert again. A pool passed in by the caller keeps
 * its own parsers: rows are read the same either way (strings are converted, numbers taken as they are).
 */
export function postgresTypeParser(oid: number, format?: string): (value: string) => unknown {
  if (oid === INT8_OID && format !== "binary") return parseInt8;
  return defaultTypeParser(oid, format);
}

function parseInt8(value: string): number | string {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/**
 * Rewrites the secrets not in the current form. Each row is written only if its secrets are still the
 * ones read (a rotation in between wins), so no task row is locked while the rest are read.
 */
async function resealPostgresSecrets(ctx: PostgresContext): Promise<number> {
  const result = await ctx.pool.query(
    `SELECT id, webhook_secret, retiring_secret FROM ${ctx.tasksTable}`,
  );
  const stored = result.rows as StoredSecrets[];
  const rows = resealed(stored, ctx.secrets);
  if (rows.length === 0) return 0;
  const before = new Map(stored.map((row) => [row.id, row]));
  const written = await ctx.pool.query(
    `UPDATE ${ctx.tasksTable} AS t SET webhook_secret = u.secret, retiring_secret = u.retiring
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
         AS u(id, secret, retiring, old_secret, old_retiring)
      WHERE t.id = u.id AND t.webhook_secret = u.old_secret
        AND t.retiring_secret IS NOT DISTINCT FROM u.old_retiring`,
    [
      rows.map((row) => row.id),
      rows.map((row) => row.webhook_secret),
      rows.map((row) => row.retiring_secret),
      rows.map((row) => before.get(row.id)?.webhook_secret ?? null),
      rows.map((row) => before.get(row.id)?.retiring_secret ?? null),
    ],
  );
  return written.rowCount ?? 0;
}
