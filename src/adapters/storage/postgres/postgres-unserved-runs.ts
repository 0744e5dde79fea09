/**
 * The no-handler sweep's find on PostgreSQL (docs/semantics.md#handler-runs-nobody-serves): queued runs of
 * handler tasks whose handler no live replica serves. It walks the queued runs only (`run_ready`) and
 * reads each one's task by primary key.
 */
import type { UnservedRun } from "../../../domain/ports/run-repository.js";
import { runId } from "../../../domain/ids.js";
import type { Instant } from "../../../domain/time.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { record, text } from "./postgres-rows.js";
import { msToTimestamp, prepared } from "./postgres-sql.js";

export class PostgresUnservedRuns {
  readonly #ctx: PostgresContext;
  readonly #find: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    this.#find = prepared(
      `SELECT r.run_id AS id, t.handler_name FROM ${ctx.schema.quoted}.run_ready AS r` +
        ` JOIN ${ctx.tasksTable} AS t ON t.id = r.task_id` +
        ` WHERE r.not_before < ${msToTimestamp("$1::int8")}` +
        ` AND t.handler_name IS NOT NULL AND t.handler_name <> ALL ($2::text[])` +
        ` ORDER BY r.not_before, r.run_id LIMIT $3::int4`,
    );
  }

  async find(
    dueBefore: Instant,
    served: readonly string[],
    limit: number,
  ): Promise<readonly UnservedRun[]> {
    const result = await this.#ctx.pool.query(this.#find, [dueBefore, served, Math.max(0, limit)]);
    return result.rows.map((value) => {
      const row = record(value);
      return { id: runId(text(row, "id")), handlerName: text(row, "handler_name") };
    });
  }
}
