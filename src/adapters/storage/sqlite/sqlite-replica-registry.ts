/** Replica heartbeats on SQLite: one row per replica, upserted (its first heartbeat is its start). */
import type { ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./sqlite-database.js";
import { settle } from "./sqlite-database.js";

export class SqliteReplicaRegistry implements ReplicaRegistry {
  readonly #heartbeat: Statement<[{ id: string; now: number }]>;

  constructor(db: SqliteDatabase) {
    this.#heartbeat = db.prepare<[{ id: string; now: number }]>(
      `INSERT INTO replicas (id, started_at, heartbeat_at) VALUES (@id, @now, @now)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
    );
  }

  heartbeat(replicaId: string, now: Instant): Promise<void> {
    return settle(() => {
      this.#heartbeat.run({ id: replicaId, now });
    });
  }
}
