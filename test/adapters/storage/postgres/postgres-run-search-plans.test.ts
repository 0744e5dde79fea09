/**
 * Runs across tasks never read `runs` whole (docs/storage.md#runs-across-tasks): on 100,000 runs of 1,000
 * tasks and three owners, with the mix a fleet keeps (mostly succeeded and scheduled, a few failed,
 * late, manual or backfill), after `ANALYZE`, every filter of `GET /v1/runs` alone and in the
 * combinations an operator asks ("what failed in the last hour?") is explained as the store sends it,
 * and no plan has a sequential scan of `runs`. A structural check, not a timing.
 *
 * Except a finished-time range: since migration 24 no index of `runs` names finished_at (the verdict
 * writes it, and every index naming it made the verdict a non-heap-only update), so such a search is a
 * filter over the owner's runs, which the planner may read in one sequential pass when it expects few
 * matches (docs/storage-plans.md#runs-across-tasks).
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { runSearchStatement } from "../../../../src/adapters/storage/postgres/postgres-run-search.js";
import { RunSql } from "../../../../src/adapters/storage/postgres/postgres-run-writes.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { ownerId, taskId } from "../../../../src/domain/ids.js";
import type { OwnerScope, RunSearch } from "../../../../src/domain/ports/queries.js";
import type { Instant } from "../../../../src/domain/time.js";
import { sequentialScansOf } from "../../../../bench/lib/hot-plans.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const onServer = database.kind === "server";

/** The seeded runs' clock: run i is scheduled i * 10 s before NOW. */
const NOW = Date.UTC(2030, 0, 15) as Instant;
const HOUR = 3_600_000;
const ago = (ms: number): Instant => (NOW - ms) as Instant;

async function seed(pool: ReturnType<typeof database.pool>, schema: string): Promise<void> {
  const q = `"${schema}"`;
  // Tasks t0000..t0999: owner alice (80%), bob (15%), carol (5%); agent 70%, webhook 20%, handler 10%.
  await pool.query(
    `INSERT INTO ${q}.tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,` +
      ` thread_scope, options, metadata, webhook_secret, created_at, updated_at)` +
      ` SELECT 't' || lpad(i::text, 4, '0'),` +
      ` CASE WHEN i % 20 < 16 THEN 'alice' WHEN i % 20 < 19 THEN 'bob' ELSE 'carol' END,` +
      ` 'seeded', '{"type":"interval","every":"1m"}', 'interval', '{"kind":"agent"}',` +
      ` CASE WHEN i % 10 < 7 THEN 'agent' WHEN i % 10 < 9 THEN 'webhook' ELSE 'handler' END,` +
      ` '{}', 'run', '{}', '{}', 's', now(), now()` +
      ` FROM generate_series(0, 999) AS i`,
  );
  await pool.query(
    `INSERT INTO ${q}.task_state (task_id, version, status, decided_through)` +
      ` SELECT 't' || lpad(i::text, 4, '0'), 1, 'enabled', now() FROM generate_series(0, 999) AS i`,
  );
  // Runs: 90% succeeded, then failed, timed_out, cancelled, skipped, missed and a few queued; 4% manual,
  // 1% backfill; 3% late. Each run takes its task's owner and target kind.
  await pool.query(
    `INSERT INTO ${q}.runs (id, task_id, owner, trigger, scheduled_for, fire_at, status, attempt,` +
      ` not_before, thread_scope, thread_id, exclusive, idempotency_key, queued_at, launched_at,` +
      ` finished_at, lateness_ms, late, target_kind)` +
      ` SELECT 'r' || lpad(i::text, 7, '0'), t.id, t.owner,` +
      ` CASE WHEN i % 100 < 95 THEN 'scheduled' WHEN i % 100 < 99 THEN 'manual' ELSE 'backfill' END,` +
      ` s.at, s.at,` +
      ` CASE WHEN i % 100 < 90 THEN 'succeeded' WHEN i % 100 < 94 THEN 'failed'` +
      `      WHEN i % 100 < 96 THEN 'timed_out' WHEN i % 100 < 97 THEN 'cancelled'` +
      `      WHEN i % 100 < 99 THEN 'skipped' WHEN i < 99000 THEN 'missed' ELSE 'queued' END,` +
      ` 1, s.at, 'run', 'th' || i, false, 'k' || i, s.at, s.at,` +
      ` CASE WHEN i % 100 = 99 AND i >= 99000 THEN NULL ELSE s.at + interval '5 seconds' END,` +
      ` 0, i % 33 = 0, t.target_kind` +
      ` FROM generate_series(0, 99999) AS i` +
      ` CROSS JOIN LATERAL (SELECT timestamptz 'epoch' + ($1::int8 - i::int8 * 10000) * interval '1 millisecond' AS at) AS s` +
      ` JOIN ${q}.tasks AS t ON t.id = 't' || lpad((i % 1000)::text, 4, '0')`,
    [NOW],
  );
  await pool.query(`ANALYZE ${q}.runs; ANALYZE ${q}.tasks; ANALYZE ${q}.task_state`);
}

const ALICE: OwnerScope = { kind: "owner", owner: ownerId("alice") };
const CAROL: OwnerScope = { kind: "owner", owner: ownerId("carol") };

const SEARCHES: readonly (readonly [string, Omit<RunSearch, "limit">])[] = [
  ["no filter", {}],
  ["status failed", { statuses: ["failed"] }],
  ["status failed or timed_out", { statuses: ["failed", "timed_out"] }],
  ["status queued", { statuses: ["queued"] }],
  ["status succeeded", { statuses: ["succeeded"] }],
  ["a task", { taskId: taskId("t0001") }],
  ["a task's failures", { taskId: taskId("t0001"), statuses: ["failed"] }],
  ["target kind webhook", { targetKind: "webhook" }],
  ["handler failures", { targetKind: "handler", statuses: ["failed"] }],
  ["trigger manual", { trigger: "manual" }],
  ["trigger backfill", { trigger: "backfill" }],
  ["trigger scheduled", { trigger: "scheduled" }],
  ["late", { late: true }],
  ["on time", { late: false }],
  ["late failures", { late: true, statuses: ["failed"] }],
  ["scheduled in the last hour", { scheduledAfter: ago(HOUR) }],
  [
    "scheduled a day ago, for an hour",
    { scheduledAfter: ago(25 * HOUR), scheduledBefore: ago(24 * HOUR) },
  ],
  ["finished in the last hour", { finishedAfter: ago(HOUR) }],
  ["failed in the last hour", { statuses: ["failed", "timed_out"], finishedAfter: ago(HOUR) }],
  [
    "finished a day ago, for an hour",
    { finishedAfter: ago(25 * HOUR), finishedBefore: ago(24 * HOUR) },
  ],
  [
    "webhook failures last hour",
    { targetKind: "webhook", statuses: ["failed"], finishedAfter: ago(HOUR) },
  ],
];

describe.skipIf(!onServer)(
  "PostgreSQL plans of runs across tasks, on 100,000 analysed runs",
  () => {
    it(
      "never scan runs sequentially, for any filter, alone or combined, on a first or later page",
      { timeout: 120_000 },
      async () => {
        const pool = database.pool(2);
        const schema = database.freshSchema();
        const store = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
        await store.close();
        await seed(pool, schema);
        const sql = new RunSql(schemaName(schema));
        const scans: string[] = [];
        const cursor = await openPostgresStore({
          newId: createIdGenerator(),
          pool,
          schema,
          migrate: false,
        });
        const page = await cursor.runs.searchRuns(ALICE, { limit: 50 });
        await cursor.close();
        expect(page.items).toHaveLength(50);
        for (const [name, search] of SEARCHES) {
          for (const [scopeName, scope] of [
            ["alice", ALICE],
            ["carol", CAROL],
          ] as const) {
            for (const next of [undefined, page.nextCursor ?? undefined]) {
              const statement = runSearchStatement(sql, scope, {
                ...search,
                limit: 50,
                ...(next === undefined ? {} : { cursor: next }),
              });
              const result = await pool.query(
                `EXPLAIN (COSTS OFF) ${statement.text}`,
                statement.values,
              );
              const plan = result.rows
                .map((row) => Object.values(row as object)[0] as string)
                .join("\n");
              const label = `${name} (${scopeName}${next === undefined ? "" : ", next page"})`;
              const finished =
                search.finishedAfter !== undefined || search.finishedBefore !== undefined;
              if (finished) continue;
              scans.push(
                ...sequentialScansOf(plan, "runs").map((line) => `${label}: ${line.trim()}`),
              );
              expect(plan, label).toMatch(/Index (Only )?Scan (Backward )?(using|on) runs_/);
            }
          }
        }
        expect(scans).toEqual([]);
      },
    );
  },
);
