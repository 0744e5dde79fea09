/**
 * The no-handler sweep's find on SQLite (docs/semantics.md#handler-runs-nobody-serves): queued runs of
 * handler tasks whose handler no live replica serves, reading the queued runs only (run_ready, migration 17).
 */
import type { UnservedRun } from "../../../domain/ports/run-repository.js";
import { runId } from "../../../domain/ids.js";
import type { Instant } from "../../../domain/time.js";
import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./sqlite-database.js";

type Params = [{ dueBefore: number; served: string; limit: number }];

export class SqliteUnservedRuns {
  readonly #find: Statement<Params, { id: string; handler_name: string }>;

  constructor(db: SqliteDatabase) {
    this.#find = db.prepare<Params, { id: string; handler_name: string }>(
      `SELECT q.run_id AS id, t.handler_name FROM run_ready q JOIN tasks t ON t.id = q.task_id
       WHERE q.not_before < @dueBefore AND t.handler_name IS NOT NULL
         AND t.handler_name NOT IN (SELECT value FROM json_each(@served))
       ORDER BY q.not_before, q.run_id LIMIT @limit`,
    );
  }

  find(dueBefore: Instant, served: readonly string[], limit: number): UnservedRun[] {
    const rows = this.#find.all({
      dueBefore,
      served: JSON.stringify(served),
      limit: Math.max(0, limit),
    });
    return rows.map((row) => ({ id: runId(row.id), handlerName: row.handler_name }));
  }
}
