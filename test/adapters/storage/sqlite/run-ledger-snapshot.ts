/**
 * What a SQLite migration test compares before and after migrating: every run row, and the rows of the
 * tables that place a run in the queue, the budget or a hold (docs/storage.md#the-run-model-on-sqlite).
 */
import type Database from "better-sqlite3";

export interface RunLedger {
  readonly runs: unknown[];
  readonly places: unknown[][];
}

export function runLedger(db: Pick<Database.Database, "prepare">): RunLedger {
  return {
    runs: db.prepare("SELECT * FROM runs ORDER BY id").all(),
    places: ["run_ready", "run_active", "run_holds"].map((table) =>
      db.prepare(`SELECT * FROM ${table} ORDER BY run_id`).all(),
    ),
  };
}
