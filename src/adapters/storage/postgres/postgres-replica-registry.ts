/** `ReplicaRegistry` on PostgreSQL: one upserted heartbeat row per replica. */
import type { ReplicaRegistry } from "../../../domain/ports/replica-registry.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { msToTimestamp, prepared } from "./postgres-sql.js";

export class PostgresReplicaRegistry implements ReplicaRegistry {
  readonly #ctx: PostgresContext;
  readonly #upsert: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const at = msToTimestamp("$2::int8");
    this.#upsert = prepared(
      `INSERT INTO ${ctx.schema.quoted}.replicas (id, started_at, heartbeat_at)` +
        ` VALUES ($1::text, ${at}, ${at})` +
        ` ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
    );
  }

  async heartbeat(replicaId: string, now: Instant): Promise<void> {
    await this.#ctx.pool.query(this.#upsert, [replicaId, now]);
  }
}
