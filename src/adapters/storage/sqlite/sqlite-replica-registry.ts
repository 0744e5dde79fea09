/**
 * Replica heartbeats on SQLite: one row per replica, upserted (its first heartbeat is its start), with the
 * handler names it serves as a JSON array.
 */
import type { Replica, ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import { instant } from "../../../domain/time.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./sqlite-database.js";
import { settle } from "./sqlite-database.js";

interface ReplicaRow {
  readonly id: string;
  readonly started_at: number;
  readonly heartbeat_at: number;
  readonly handler_names: string | null;
}

export class SqliteReplicaRegistry implements ReplicaRegistry {
  readonly #heartbeat: Statement<[{ id: string; now: number; names: string | null }]>;
  readonly #list: Statement<[{ since: number; limit: number }], ReplicaRow>;

  constructor(db: SqliteDatabase) {
    this.#heartbeat = db.prepare<[{ id: string; now: number; names: string | null }]>(
      `INSERT INTO replicas (id, started_at, heartbeat_at, handler_names)
       VALUES (@id, @now, @now, @names)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at,
         handler_names = excluded.handler_names`,
    );
    this.#list = db.prepare<[{ since: number; limit: number }], ReplicaRow>(
      `SELECT id, started_at, heartbeat_at, handler_names FROM replicas
       WHERE heartbeat_at >= @since ORDER BY heartbeat_at DESC, id LIMIT @limit`,
    );
  }

  heartbeat(replicaId: string, now: Instant, handlerNames?: readonly string[]): Promise<void> {
    const names = handlerNames === undefined ? null : JSON.stringify(handlerNames);
    return settle(() => {
      this.#heartbeat.run({ id: replicaId, now, names });
    });
  }

  listReplicas(since: Instant, limit: number): Promise<readonly Replica[]> {
    return settle(() =>
      this.#list.all({ since, limit }).map((row) => ({
        id: row.id,
        startedAt: instant(row.started_at),
        heartbeatAt: instant(row.heartbeat_at),
        handlerNames: namesOf(row.handler_names),
      })),
    );
  }
}

function namesOf(stored: string | null): readonly string[] | null {
  if (stored === null) return null;
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.map(String) : null;
}
