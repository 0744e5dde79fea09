/**
 * Runs across tasks never walk `runs` whole on SQLite (docs/storage.md#runs-across-tasks): on 100,000
 * runs of 1,000 tasks and three owners, after `ANALYZE`, every filter of `GET /v1/runs` alone and
 * combined is explained (`EXPLAIN QUERY PLAN`) as the store builds it, and every read of `runs` is a
 * SEARCH through an index, never a SCAN.
 */
import { afterAll, describe, expect, it } from "vitest";
import { sqliteRunSearch } from "../../../../src/adapters/storage/sqlite/sqlite-run-search.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { migrateSqlite } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { ownerId, taskId } from "../../../../src/domain/ids.js";
import type { OwnerScope, RunSearch } from "../../../../src/domain/ports/queries.js";
import type { Instant } from "../../../../src/domain/time.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-run-search-plans");
afterAll(() => {
  files.remove();
});

const NOW = Date.UTC(2030, 0, 15);
const HOUR = 3_600_000;
const ago = (ms: number): Instant => (NOW - ms) as Instant;

const SEARCHES: readonly (readonly [string, Omit<RunSearch, "limit">])[] = [
  ["no filter", {}],
  ["status failed", { statuses: ["failed"] }],
  ["status failed or timed_out", { statuses: ["failed", "timed_out"] }],
  ["a task", { taskId: taskId("t0001") }],
  ["target kind webhook", { targetKind: "webhook" }],
  ["handler failures", { targetKind: "handler", statuses: ["failed"] }],
  ["trigger manual", { trigger: "manual" }],
  ["trigger scheduled", { trigger: "scheduled" }],
  ["late", { late: true }],
  ["on time", { late: false }],
  ["scheduled in the last hour", { scheduledAfter: ago(HOUR) }],
  ["finished in the last hour", { finishedAfter: ago(HOUR) }],
  ["failed in the last hour", { statuses: ["failed", "timed_out"], finishedAfter: ago(HOUR) }],
];

describe("SQLite plans of runs across tasks, on 100,000 analysed runs", () => {
  it("read runs only through an index, for every filter", { timeout: 60_000 }, () => {
    const db = openSqliteDatabase(files.path());
    try {
      migrateSqlite(db);
      db.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
         INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
           thread_scope, options, metadata, version, webhook_secret, created_at, updated_at)
         SELECT printf('t%04d', i),
           CASE WHEN i % 20 < 16 THEN 'alice' WHEN i % 20 < 19 THEN 'bob' ELSE 'carol' END,
           'seeded', '{"type":"interval","every":"1m"}', 'interval', '{"kind":"agent"}',
           CASE WHEN i % 10 < 7 THEN 'agent' WHEN i % 10 < 9 THEN 'webhook' ELSE 'handler' END,
           '{}', 'run', '{}', '{}', 1, 's', 0, 0 FROM n;
         INSERT INTO task_state (task_id, status, decided_through) SELECT id, 'enabled', 0 FROM tasks`,
      );
      db.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
         INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, attempt,
           not_before, thread_scope, thread_id, "exclusive", idempotency_key, queued_at,
           finished_at, late, target_kind)
         SELECT printf('r%07d', i), t.id, t.owner,
           CASE WHEN i % 100 < 95 THEN 'scheduled' WHEN i % 100 < 99 THEN 'manual' ELSE 'backfill' END,
           ${NOW} - i * 10000, ${NOW} - i * 10000,
           CASE WHEN i % 100 < 90 THEN 'succeeded' WHEN i % 100 < 94 THEN 'failed'
                WHEN i % 100 < 97 THEN 'timed_out' ELSE 'skipped' END,
           1, ${NOW} - i * 10000, 'run', 'th' || i, 0, 'k' || i, ${NOW} - i * 10000,
           ${NOW} - i * 10000 + 5000, i % 33 = 0, t.target_kind
         FROM n JOIN tasks t ON t.id = printf('t%04d', i % 1000)`,
      );
      db.exec("ANALYZE");
      const scans: string[] = [];
      const scopes: readonly OwnerScope[] = [
        { kind: "owner", owner: ownerId("alice") },
        { kind: "owner", owner: ownerId("carol") },
      ];
      for (const [name, search] of SEARCHES) {
        for (const scope of scopes) {
          const { sql, params } = sqliteRunSearch(scope, { ...search, limit: 50 });
          const plan = db
            .prepare<[Record<string, string | number>], { detail: string }>(
              `EXPLAIN QUERY PLAN ${sql}`,
            )
            .all(params)
            .map((row) => row.detail);
          const label = `${name} (${scope.kind === "owner" ? scope.owner : "all"})`;
          expect(plan.join("\n"), label).toMatch(/SEARCH r(uns)? USING (COVERING )?INDEX/);
          scans.push(...plan.filter((d) => /^SCAN runs\b/.test(d)).map((d) => `${label}: ${d}`));
        }
      }
      expect(scans).toEqual([]);
    } finally {
      db.close();
    }
  });
});
