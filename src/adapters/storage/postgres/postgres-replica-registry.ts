/** `ReplicaRegistry` on PostgreSQL: one upserted heartbeat row per replica, with its handler names. */
import type { Replica, ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { instantOf, record, text } from "./postgres-rows.js";
import { msToTimestamp, prepared, timestampToMs } from "./postgres-sql.js";

export class PostgresReplicaRegistry implements ReplicaRegistry {
  readonly #ctx: PostgresContext;
  readonly #upsert: PostgresStatement;
  readonly #list: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const at = msToTimestamp("$2::int8");
    const table = `${ctx.schema.quoted}.replicas`;
    this.#upsert = prepared(
      `INSERT INTO ${table} (id, started_at, heartbeat_at, handler_names)` +
        ` VALUES ($1::text, ${at}, ${at}, $3::text[])` +
        ` ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at,` +
        ` handler_names = excluded.handler_names`,
    );
    this.#list = prepared(
      `SELECT id, ${timestampToMs("started_at")} AS started_at,` +
        ` ${timestampToMs("heartbeat_at")} AS heartbeat_at, handler_names FROM ${table}` +
        ` WHERE heartbeat_at >= ${msToTimestamp("$1::int8")}` +
        ` ORDER BY heartbeat_at DESC, id LIMIT $2::int4`,
    );
  }

  async heartbeat(
    replicaId: string,
    now: Instant,
    handlerNames?: readonly string[],
  ): Promise<void> {
    await this.#ctx.pool.query(this.#upsert, [replicaId, now, handlerNames ?? null]);
  }

  async listReplicas(since: Instant, limit: number): Promise<readonly Replica[]> {
    const result = await this.#ctx.pool.query(this.#list, [since, limit]);
    return result.rows.map((value) => {
      const row = record(value);
      const names = row["handler_names"];
      return {
        id: text(row, "id"),
        startedAt: instantOf(row, "started_at"),
        heartbeatAt: instantOf(row, "heartbeat_at"),
        handlerNames: Array.isArray(names) ? names.map(String) : null,
      };
    });
  }
}
