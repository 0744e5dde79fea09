/**
 * The replica registry port (docs/architecture.md#ports): each replica's heartbeat row, with the handler
 * names it serves (docs/deploy.md#handler-names).
 */
import type { Instant } from "../time.js";

/** One replica's row: when it started, its last heartbeat, and the handlers it runs. */
export interface Replica {
  readonly id: string;
  readonly startedAt: Instant;
  readonly heartbeatAt: Instant;
  /**
   * The handler names it registered with its last heartbeat; null when it registered none (a replica
   * of a version before registration), which is read as "it may serve any".
   */
  readonly handlerNames: readonly string[] | null;
}

/** Replica liveness, for handler runs lost with their replica (docs/semantics.md#run-statuses). */
export interface ReplicaRegistry {
  /**
   * Records a heartbeat at `now`, and the handler names the replica serves (replacing those of its
   * previous beat). Absent names store none (null).
   */
  heartbeat(replicaId: string, now: Instant, handlerNames?: readonly string[]): Promise<void>;
  /**
   * Replicas whose last heartbeat is at or after `since`, latest heartbeat first (then by id), at most
   * `limit`.
   */
  listReplicas(since: Instant, limit: number): Promise<readonly Replica[]>;
}
