/**
 * A store: one database (or memory) providing every storage port, built by an adapter factory and handed
 * to the service and the coordinator by the composition root.
 */
import type { CalendarRepository } from "./calendar-repository.js";
import type { ReplicaRegistry } from "./replica-registry.js";
import type { RunRepository } from "./run-repository.js";
import type { TaskRepository } from "./task-repository.js";
import type { Instant } from "../time.js";
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

/**
 * Wake-ups other replicas send through the database (PostgreSQL LISTEN/NOTIFY), so that a replica acts on
 * new work at once instead of at its next tick.
 */
export interface WakeSource {
  /**
   * Calls `onWake` whenever another replica signals new work (with a hint when only runs changed), and keeps doing so across lost connections
   * (waking once more after each reconnect). `onLost` hears each lost connection (with its cause) before
   * it is replaced. Resolves once listening, with a function that stops.
   * @throws when the first connection cannot listen
   */
  subscribe(
    onWake: (hint?: WakeHint, from?: string) => void,
    onLost?: (error: Error) => void,
  ): Promise<() => Promise<void>>;
  /**
   * Tells every listening replica that `from` (a replica id) queued more runs than it claims at once, so
   * that the idle ones claim the rest now rather than at their next pass (docs/architecture.md#cadence):
   * they hear `queued` with `from`, and the sender ignores its own. Absent: a store that cannot send.
   */
  announceQueued?(from: string): Promise<void>;
}

/**
 * What a wake-up says of its cause, when the store can tell: `runs` when only runs changed (launch slots
 * freed, a run queued again), so a claim is what may be useful; `queued` when a replica's admission
 * queued more runs than it claims at once (`announceQueued`), so a claim is what is useful; none when
 * new work may be due.
 */
export type WakeHint = "runs" | "queued";

/** A clock shared by every replica (the database's), to correct this machine's skew. */
export interface ReferenceClock {
  /** `reference - local` in ms, measured now against this machine's uncorrected wall clock. */
  measureOffsetMs(): Promise<number>;
}

/**
 * Settings one fleet shares, stored once in its database, so that replicas started with different
 * values never apply two (docs/operations.md#sizing-the-budget): the global budget.
 */
export interface FleetSettings {
  /** The global budget stored, or null when none is stored yet. */
  storedBudget(): Promise<number | null>;
  /** Stores `budget` unless one is stored already (the first replica's); answers the one stored. */
  adoptBudget(budget: number, now: Instant): Promise<number>;
  /** Stores `budget` in place of any stored (`migrate --max-concurrent-runs`); answers the previous. */
  replaceBudget(budget: number, now: Instant): Promise<number | null>;
}

/**
 * Every storage port, plus what only some databases offer. A store offers an optional port by having it:
 * that is the one way the composition and the runtime learn what a store can do (docs/architecture.md#stores),
 * never by asking which store it is.
 */
export interface Store {
  /** For messages and diagnostics only: nothing branches on it outside the adapters. */
  readonly kind: "memory" | "sqlite" | "postgres";
  readonly tasks: TaskRepository;
  readonly runs: RunRepository;
  readonly replicas: ReplicaRegistry;
  /** Named calendars (docs/schedules.md#calendars); absent in stores that do not keep them. */
  readonly calendars?: CalendarRepository;
  /** API tokens of the HTTP API (docs/security.md); absent in stores that do not keep them. */
  readonly apiTokens?: TokenRepository;
  /** `Idempotency-Key` records of the HTTP API; absent in stores that do not keep them. */
  readonly idempotency?: IdempotencyRepository;
  /** Wake-ups from other replicas (PostgreSQL); absent where there are none to hear. */
  readonly wakes?: WakeSource;
  /** The database's clock (PostgreSQL); absent where every replica shares one machine's clock. */
  readonly referenceClock?: ReferenceClock;
  /** The fleet's shared settings; absent where a store keeps none (each replica's own value applies). */
  readonly fleet?: FleetSettings;
  /** Applies pending migrations (under a lock); refuses a database newer than the code. */
  migrate(): Promise<MigrationStatus>;
  /**
   * Rewrites every stored signing secret not in the sealer's current form (sealed under an older key,
   * or in clear when a key is now configured); returns how many tasks it rewrote. Absent where
   * nothing is stored on disk (the memory store).
   * @throws when a secret was sealed under a key the sealer does not have
   */
  resealSecrets?(): Promise<number>;
  migrationStatus(): Promise<MigrationStatus>;
  /** Checks the database answers (for `/readyz`). */
  ping(): Promise<void>;
  /**
   * Whether `error`, thrown by a write, is a refusal that will not go away (a constraint, a value the
   * database does not take) rather than an outage: the write queue fails that one write instead of
   * retrying it (docs/storage.md#writes-the-store-refuses). Absent: `isRefusal` below decides alone.
   */
  refuses?(error: unknown): boolean;
  close(): Promise<void>;
}

/**
 * How a database store keeps the tasks' signing secrets (docs/security.md#secrets-at-rest): in clear, or
 * sealed under the operator's key. Synchronous: a store seals and opens as it maps rows.
 */
export interface SecretSealer {
  /** The stored form of a secret (the secret itself when no key is configured). */
  seal(secret: string): string;
  /**
   * The secret a stored value holds.
   * @throws when it was sealed under a key this sealer does not have
   */
  open(stored: string): string;
  /** Whether a stored value is in the form `seal` gives now (else a reseal rewrites it). */
  isCurrent(stored: string): boolean;
}

/** Options every store factory takes. */
export interface StoreOptions {
  /** Mints time-ordered ids (later calls sort after earlier ones). */
  readonly newId: () => string;
  /** How signing secrets are stored. @default in clear */
  readonly secrets?: SecretSealer;
}

/** How to open a store; made by `sqlite()`, `postgres()` or `memoryStore()`. */
export interface StoreFactory {
  /** Opens the store (a database applies pending migrations as it opens). */
  open(options: StoreOptions): Promise<Store>;
}

/**
 * Whether a failed write will fail again, whatever the store (docs/storage.md#writes-the-store-refuses):
 * the store says so (`refuses`), or the value could not even be prepared for it (JavaScript's own
 * `RangeError`, `TypeError`: too deep, a cycle, a BigInt). Anything else is taken for an outage.
 */
export function isRefusal(store: Pick<Store, "refuses">, error: unknown): boolean {
  if (error instanceof RangeError || error instanceof TypeError) return true;
  return store.refuses?.(error) ?? false;
}
