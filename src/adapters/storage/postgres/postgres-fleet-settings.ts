/** `FleetSettings` on PostgreSQL: the `fleet_settings` rows every replica shares (migration 9). */
import type { FleetSettings } from "../../../domain/ports/store.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { integer, record } from "./postgres-rows.js";
import { msToTimestamp, prepared } from "./postgres-sql.js";

const BUDGET = "max_concurrent_runs";

export class PostgresFleetSettings implements FleetSettings {
  readonly #ctx: PostgresContext;
  readonly #read: PostgresStatement;
  readonly #adopt: PostgresStatement;
  readonly #replace: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    const table = `${ctx.schema.quoted}.fleet_settings`;
    const at = msToTimestamp("$3::int8");
    this.#read = prepared(`SELECT value::int8 AS value FROM ${table} WHERE name = $1::text`);
    // One statement: the row inserted, or the one a concurrent first replica inserted, is answered.
    this.#adopt = prepared(
      `WITH inserted AS (INSERT INTO ${table} (name, value, set_at) VALUES ($1::text, $2::int8, ${at})` +
        ` ON CONFLICT (name) DO NOTHING RETURNING value)` +
        ` SELECT value::int8 AS value FROM inserted` +
        ` UNION ALL SELECT value::int8 FROM ${table} WHERE name = $1::text` +
        ` AND NOT EXISTS (SELECT 1 FROM inserted)`,
    );
    this.#replace = prepared(
      `WITH previous AS (SELECT value FROM ${table} WHERE name = $1::text FOR UPDATE),` +
        ` written AS (INSERT INTO ${table} (name, value, set_at) VALUES ($1::text, $2::int8, ${at})` +
        ` ON CONFLICT (name) DO UPDATE SET value = excluded.value, set_at = excluded.set_at)` +
        ` SELECT (SELECT value::int8 FROM previous) AS value`,
    );
  }

  async storedBudget(): Promise<number | null> {
    const result = await this.#ctx.pool.query(this.#read, [BUDGET]);
    return result.rows.length === 0 ? null : integer(record(result.rows[0]), "value");
  }

  async adoptBudget(budget: number, now: Instant): Promise<number> {
    // Two first replicas at once: the loser's insert does nothing and, in the same snapshot, may not see
    // the winner's row yet; asking again then finds it.
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await this.#ctx.pool.query(this.#adopt, [BUDGET, budget, now]);
      if (result.rows.length > 0) return integer(record(result.rows[0]), "value");
    }
    return (await this.storedBudget()) ?? budget;
  }

  async replaceBudget(budget: number, now: Instant): Promise<number | null> {
    const result = await this.#ctx.pool.query(this.#replace, [BUDGET, budget, now]);
    const row = record(result.rows[0]);
    return row.value === null ? null : integer(row, "value");
  }
}
