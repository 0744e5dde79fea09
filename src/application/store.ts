/**
 * A store: one database (or memory) providing every storage port, built by an adapter factory and handed
 * to the service and the coordinator by the composition root.
 */
import type {
  CalendarRepository,
  ReplicaRegistry,
  RunRepository,
  TaskRepository,
} from "../domain/ports.js";
import type { IdempotencyRepository } from "./idempotency-repository.js";
import type { TokenRepository } from "./token-repository.js";

export interface MigrationStatus {
  /** Migration numbers applied in the database. */
  readonly applied: readonly number[];
  /** Migration numbers the code knows and the database has not applied. */
  readonly pending: readonly number[];
  /** True when nothing is pending and nothing unknown is applied. */
  readonly current: boolean;
}

/** What differs between stores, stated once (CONVENTIONS "SQL": capability flags, not dialect checks). */
export interface StoreCapabilities {
  /** Several processes can share the store (SQLite file, PostgreSQL). */
  readonly shared: boolean;
  /** Other replicas can be woken by the database (PostgreSQL LISTEN/NOTIFY). */
  readonly notifies: boolean;
  /** The store's clock can be read, to correct replica clock skew (PostgreSQL `now()`). */
  readonly hasClock: boolean;
}

export interface Store {
  readonly kind: "memory" | "sqlite" | "postgres";
  readonly capabilities: StoreCapabilities;
  readonly tasks: TaskRepository;
  readonly runs: RunRepository;
  readonly replicas: ReplicaRegistry;
  /** Named calendars (docs/schedules.md#calendars); absent in stores that do not keep them. */
  readonly calendars?: CalendarRepository;
  /** API tokens of the HTTP API (SPEC 8); absent in stores that do not keep them. */
  readonly apiTokens?: TokenRepository;
  /** `Idempotency-Key` records of the HTTP API; absent in stores that do not keep them. */
  readonly idempotency?: IdempotencyRepository;
  /** Applies pending migrations (under a lock); refuses a database newer than the code. */
  migrate(): Promise<MigrationStatus>;
  migrationStatus(): Promise<MigrationStatus>;
  /** Checks the database answers (for `/readyz`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Options every store factory takes. */
export interface StoreOptions {
  /** Mints time-ordered ids (later calls sort after earlier ones). */
  readonly newId: () => string;
}
