/** Replica heartbeats in memory: one row per replica, upserted. */
import type { ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import type { Instant } from "../../../domain/time.js";
import type { MemoryTables } from "./memory-tables.js";

export class MemoryReplicaRegistry implements ReplicaRegistry {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  heartbeat(replicaId: string, now: Instant): Promise<void> {
    return this.#tables.atomically(() => {
      const startedAt = this.#tables.replica(replicaId)?.startedAt ?? now;
      this.#tables.putReplica({ id: replicaId, startedAt, heartbeatAt: now });
    });
  }
}
