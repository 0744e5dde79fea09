/**
 * A task's history is a walk of `runs_occurrence_uq`, never a sort of the task's whole history
 * (docs/storage.md#runs-across-tasks): since migration 34 the task's runs are in that index by instant
 * then trigger, and the listing (newest first, then by id) walks it backwards and sorts only each
 * instant's few runs by id (an incremental sort). On 100,000 analysed runs of one task, the task's
 * listing (`listRuns`, first and next page, as a custom and as a generic plan) and a search naming the
 * task (`searchRuns`, seen by its owner and by an admin) are explained as the store sends them.
 * A structural check, not a timing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { runSearchStatement } from "../../../../src/adapters/storage/postgres/postgres-run-search.js";
import { RunSql } from "../../../../src/adapters/storage/postgres/postgres-run-writes.js";
import type {
  PostgresPool,
  PostgresQueryResult,
} from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { ownerId, taskId } from "../../../../src/domain/ids.js";
import { seedHistory, sequentialScansOf } from "../../../../bench/lib/hot-plans.js";
import { ALL } from "../../../contract/fixtures.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const onServer = database.kind === "server";

/** The history listing's statement, recognised by its order and limit. */
const LISTING = "ORDER BY r.scheduled_for DESC, r.id DESC LIMIT $7::int4";

interface Sent {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** `pool`, recording every history listing the store sends. */
function recording(pool: PostgresPool, sent: Sent[]): PostgresPool {
  return {
    query(statement, values): Promise<PostgresQueryResult> {
      const text = typeof statement === "string" ? statement : statement.text;
      if (text.includes(LISTING)) sent.push({ text, values: values ?? [] });
      return pool.query(statement, values);
    },
    connect: () => pool.connect(),
    end: () => pool.end(),
  };
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") throw new TypeError(`unexpected parameter ${typeof value}`);
  return `'${value.replaceAll("'", "''")}'`;
}

/** `EXPLAIN` of `sent` as a prepared statement, planned custom or generic. */
async function explain(pool: PostgresPool, sent: Sent, generic: boolean): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `SET LOCAL plan_cache_mode = ${generic ? "force_generic_plan" : "force_custom_plan"}`,
    );
    await client.query(`PREPARE history_plan AS ${sent.text}`);
    const args = sent.values.map(literal).join(", ");
    const result = await client.query(
      `EXPLAIN (COSTS OFF) EXECUTE history_plan${args === "" ? "" : `(${args})`}`,
    );
    await client.query("ROLLBACK");
    await client.query("DEALLOCATE history_plan");
    return result.rows.map((row) => Object.values(row as object)[0] as string).join("\n");
  } finally {
    client.release();
  }
}

/** What is wrong with `plan` for a task's history: empty when it walks the index and sorts no more. */
function faults(plan: string): string[] {
  const found: string[] = [];
  if (!/Index Scan Backward using runs_occurrence_uq on runs/.test(plan)) {
    found.push("no backward walk of runs_occurrence_uq");
  }
  // An incremental sort sorts each instant's runs only; a plain Sort would sort the whole history.
  const sorts = plan.split("\n").filter((line) => /^(->\s+)?Sort$/.test(line.trim()));
  if (sorts.length > 0) found.push("a Sort");
  found.push(...sequentialScansOf(plan, "runs"));
  return found;
}

describe.skipIf(!onServer)("PostgreSQL plans of a task's history, on 100,000 analysed runs", () => {
  it(
    "walk runs_occurrence_uq backwards and sort only each instant's runs, never the whole history",
    { timeout: 120_000 },
    async () => {
      const pool = database.pool(2);
      const schema = database.freshSchema();
      const setup = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
      await setup.close();
      await seedHistory(pool, schema, 100_000);
      await pool.query(`ANALYZE "${schema}".runs; ANALYZE "${schema}".tasks`);
      const sent: Sent[] = [];
      const store = await openPostgresStore({
        newId: createIdGenerator(),
        pool: recording(pool, sent),
        schema,
        migrate: false,
      });
      const task = taskId("history-task");
      const first = await store.runs.listRuns(ALL, task, { limit: 50 });
      expect(first.items).toHaveLength(50);
      expect(first.nextCursor).not.toBeNull();
      const next = await store.runs.listRuns(ALL, task, { limit: 50, cursor: first.nextCursor! });
      expect(next.items[0]?.scheduledFor).toBeLessThanOrEqual(first.items[49]!.scheduledFor);
      await store.close();
      expect(sent).toHaveLength(2);
      const sql = new RunSql(schemaName(schema));
      const searches = [
        runSearchStatement(
          sql,
          { kind: "owner", owner: ownerId("alice") },
          { taskId: task, limit: 50 },
        ),
        runSearchStatement(sql, ALL, { taskId: task, limit: 50 }),
      ];
      const problems: string[] = [];
      for (const [label, statement] of [
        ["listing, first page", sent[0]!],
        ["listing, next page", sent[1]!],
        ["search by its owner", searches[0]!],
        ["search by an admin", searches[1]!],
      ] as const) {
        for (const generic of [false, true]) {
          const plan = await explain(pool, statement, generic);
          for (const fault of faults(plan)) {
            problems.push(`${label} (${generic ? "generic" : "custom"}): ${fault}\n${plan}`);
          }
        }
      }
      expect(problems).toEqual([]);
    },
  );
});
