/**
 * The tasks due at an instant, read ahead of it by an idle replica
 * (docs/decisions.md#an-idle-replica-reads-the-next-instants-definitions-ahead-of-it): the due set as
 * admission reads it (`task_state_due_idx`, in `due_at` order), without a lock and narrow (each task's
 * state and its definition's stamp); the definitions not held at their stamp are read and decoded into
 * `TaskDefinitions` in one statement, where the admission at that instant finds them.
 */
import type { Task } from "../../../domain/task.js";
import type { Instant } from "../../../domain/time.js";
import {
  CLAIM_STAMP_COLUMN,
  CLAIM_STATE_NAMES,
  claimStateJoin,
  claimStateColumns,
} from "./postgres-claimed-run.js";
import type { PostgresContext } from "./postgres-context.js";
import type { PostgresStatement } from "./postgres-pool.js";
import { record } from "./postgres-rows.js";
import { msToTimestamp, prepared } from "./postgres-sql.js";

export class PostgresDueAhead {
  readonly #ctx: PostgresContext;
  readonly #due: PostgresStatement;

  constructor(ctx: PostgresContext) {
    this.#ctx = ctx;
    // The due ids from task_state_due_idx, then each task's state and stamp by primary key (the
    // claim's narrow join), as a claim reads them.
    this.#due = prepared(
      `SELECT d.task_id, ${claimStateColumns("t")} FROM (SELECT s.task_id AS task_id` +
        ` FROM ${ctx.taskStateTable} AS s WHERE s.due_at <= ${msToTimestamp("$1::int8")}` +
        ` ORDER BY s.due_at, s.task_id LIMIT $2::int4) AS d` +
        claimStateJoin(ctx, "t", "d.task_id"),
    );
  }

  /** Up to `limit` tasks due at `at`, their definitions now held; defective ones left out. */
  async read(at: Instant, limit: number): Promise<Task[]> {
    const { rows } = await this.#ctx.pool.query(this.#due, [at, limit]);
    const tasks = await this.#ctx.definitions.tasksOf(
      this.#ctx.pool,
      rows.map((row) => record(row)),
      { idColumn: "task_id", stampColumn: CLAIM_STAMP_COLUMN, names: CLAIM_STATE_NAMES },
    );
    return tasks.filter((task) => task.defect === null);
  }
}
