/** `FleetSettings` on SQLite: the `fleet_settings` rows every process on the file shares (migration 7). */
import type { FleetSettings } from "../../../domain/ports/store.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./sqlite-database.js";
import { settle } from "./sqlite-database.js";

const BUDGET = "max_concurrent_runs";

type Write = Statement<[{ name: string; value: number; now: number }]>;

export class SqliteFleetSettings implements FleetSettings {
  readonly #db: SqliteDatabase;
  readonly #read: Statement<[string], { value: number }>;
  readonly #insert: Write;
  readonly #upsert: Write;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#read = db.prepare("SELECT value FROM fleet_settings WHERE name = ?");
    this.#insert = db.prepare(
      `INSERT INTO fleet_settings (name, value, set_at) VALUES (@name, @value, @now)
       ON CONFLICT (name) DO NOTHING`,
    );
    this.#upsert = db.prepare(
      `INSERT INTO fleet_settings (name, value, set_at) VALUES (@name, @value, @now)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value, set_at = excluded.set_at`,
    );
  }

  storedBudget(): Promise<number | null> {
    return settle(() => this.#read.get(BUDGET)?.value ?? null);
  }

  adoptBudget(budget: number, now: Instant): Promise<number> {
    return settle(() =>
      this.#db
        .transaction(() => {
          this.#insert.run({ name: BUDGET, value: budget, now });
          return this.#read.get(BUDGET)?.value ?? budget;
        })
        .immediate(),
    );
  }

  replaceBudget(budget: number, now: Instant): Promise<number | null> {
    return settle(() =>
      this.#db
        .transaction(() => {
          const previous = this.#read.get(BUDGET)?.value ?? null;
          this.#upsert.run({ name: BUDGET, value: budget, now });
          return previous;
        })
        .immediate(),
    );
  }
}
