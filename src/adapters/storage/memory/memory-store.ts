/**
 * The in-memory store: every storage port over plain maps, for tests and the library's ephemeral mode.
 * It is the reference semantics of the contract suite: the same unique keys, scoping and typed errors as
 * the databases, with nothing shared between processes and nothing kept after `close()`.
 */
import type {
  MigrationStatus,
  Store,
  StoreFactory,
  StoreOptions,
} from "../../../domain/ports/store.js";
import { MemoryCalendarRepository } from "./memory-calendar-repository.js";
import { MemoryIdempotencyRepository } from "./memory-idempotency-repository.js";
import { MemoryFleetSettings } from "./memory-fleet-settings.js";
import { MemoryReplicaRegistry } from "./memory-replica-registry.js";
import { MemoryRunRepository } from "./memory-run-repository.js";
import { MemoryTables } from "./memory-tables.js";
import { MemoryTaskRepository } from "./memory-task-repository.js";
import { MemoryTokenRepository } from "./memory-token-repository.js";

/** Memory has no schema: it is always current. */
const CURRENT: MigrationStatus = Object.freeze({
  applied: Object.freeze([]),
  pending: Object.freeze([]),
  current: true,
});

export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  readonly tasks: MemoryTaskRepository;
  readonly runs: MemoryRunRepository;
  readonly replicas: MemoryReplicaRegistry;
  readonly calendars: MemoryCalendarRepository;
  readonly apiTokens = new MemoryTokenRepository();
  readonly idempotency = new MemoryIdempotencyRepository();
  readonly fleet = new MemoryFleetSettings();
  readonly #tables = new MemoryTables();

  constructor(options: StoreOptions) {
    this.tasks = new MemoryTaskRepository(this.#tables, options.newId);
    this.runs = new MemoryRunRepository(this.#tables);
    this.replicas = new MemoryReplicaRegistry(this.#tables);
    this.calendars = new MemoryCalendarRepository(this.#tables);
  }

  migrate(): Promise<MigrationStatus> {
    return this.#tables.atomically(() => CURRENT);
  }

  migrationStatus(): Promise<MigrationStatus> {
    return this.#tables.atomically(() => CURRENT);
  }

  /** @throws when the store is closed */
  ping(): Promise<void> {
    return this.#tables.atomically(() => undefined);
  }

  /**
   * How many rows the store's scans and index walks have handed out so far (lookups by key are not
   * counted). A test can check with it that the cost of a replay's steps does not grow with its ledger.
   */
  get rowsScanned(): number {
    return this.#tables.rowsScanned;
  }

  /** Refuses every later call (the data goes with the object). Idempotent. */
  close(): Promise<void> {
    this.#tables.close();
    return Promise.resolve();
  }
}

/**
 * Builds an empty, current memory store.
 *
 * @example
 * const store = createMemoryStore({ newId: createIdGenerator() });
 */
export function createMemoryStore(options: StoreOptions): MemoryStore {
  return new MemoryStore(options);
}

/** An in-memory store: nothing survives the process (tests, `punctual/testing`). */
export function memoryStore(): StoreFactory {
  return { open: ({ newId }) => Promise.resolve(createMemoryStore({ newId })) };
}
