/** Replica heartbeats in memory: one row per replica, upserted, with the handler names it serves. */
import type { Replica, ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import type { Instant } from "../../../domain/time.js";
import type { MemoryTables } from "./memory-tables.js";

export class MemoryReplicaRegistry implements ReplicaRegistry {
  readonly #tables: MemoryTables;

  constructor(tables: MemoryTables) {
    this.#tables = tables;
  }

  heartbeat(replicaId: string, now: Instant, handlerNames?: readonly string[]): Promise<void> {
    return this.#tables.atomically(() => {
      const startedAt = this.#tables.replica(replicaId)?.startedAt ?? now;
      this.#tables.putReplica({
        id: replicaId,
        startedAt,
        heartbeatAt: now,
        handlerNames: handlerNames === undefined ? null : [...handlerNames],
      });
    });
  }

  listReplicas(since: Instant, limit: number): Promise<readonly Replica[]> {
    const rows = [...this.#tables.replicas()]
      .filter((row) => row.heartbeatAt >= since)
      .sort((a, b) => b.heartbeatAt - a.heartbeatAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit);
    return Promise.resolve(rows.map((row) => ({ ...row })));
  }
}
