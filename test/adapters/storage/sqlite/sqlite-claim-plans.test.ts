/**
 * SQLite has no cliff where PostgreSQL had one (docs/storage.md#the-claim-path-on-postgresql): with
 * 100,000 terminal runs in `runs` and 10,000 idle tasks, as created and after `ANALYZE` (whose statistics SQLite's planner then
 * uses), no statement of a burst's hot path (admission, the claim, the batched launch and completion,
 * the wake-up and sweep reads) scans `runs` or `tasks` whole. A structural check, not a timing.
 */
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { migrateSqlite } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { SqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { T0, minute } from "../../../contract/fixtures.js";
import { runHotPath } from "../../../helpers/hot-path.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-claim-plans");
afterAll(() => {
  files.remove();
});

/** `count` succeeded manual runs of one paused task: what retention keeps beside the live queue. */
function seedHistory(db: Database.Database, count: number): void {
  db.prepare(
    `INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
       thread_scope, options, metadata, version, webhook_secret, created_at, updated_at)
     VALUES ('history-task', 'alice', 'history', '{"type":"interval","every":"PT1M"}', 'interval',
       '{"kind":"agent"}', 'agent', '{}', 'run', '{}', '{}', 1, 's', ?, ?)`,
  ).run(T0, T0);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, attempt,
       not_before, thread_scope, thread_id, "exclusive", idempotency_key, queued_at, launched_at,
       finished_at, lateness_ms)
     SELECT printf('h%09d', i), 'history-task', 'alice', 'manual', ? - i * 1000, ? - i * 1000,
       'succeeded', 1, ? - i * 1000, 'run', 'h' || i, 0, 'h' || i, ? - i * 1000, ? - i * 1000,
       ? - i * 1000, 0 FROM n`,
  ).run(count, T0, T0, T0, T0, T0, T0);
  // And idle tasks, so that reading the batch's tasks whole is never the cheaper plan by accident.
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
     INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
       thread_scope, options, metadata, version, webhook_secret, created_at, updated_at)
     SELECT printf('idle-%06d', i), 'alice', 'idle', '{"type":"interval","every":"PT1M"}', 'interval',
       '{"kind":"agent"}', 'agent', '{}', 'run', '{}', '{}', 1, 's', ?, ? FROM n`,
  ).run(T0, T0);
  // Their state rows (docs/storage.md#task-state-on-sqlite): paused, so none is due.
  db.prepare(
    "INSERT INTO task_state (task_id, status, decided_through) SELECT id, 'paused', ? FROM tasks",
  ).run(T0);
}

describe("SQLite hot path plans on 100,000 terminal runs", () => {
  it(
    "never scan runs or tasks whole, as created and after ANALYZE",
    { timeout: 120_000 },
    async () => {
      const path = files.path();
      const setup = openSqliteDatabase(path);
      migrateSqlite(setup);
      seedHistory(setup, 100_000);
      setup.close();
      for (const analyzed of [false, true]) {
        const statements: string[] = [];
        const db = new Database(path, {
          verbose: (message) => {
            if (typeof message === "string") statements.push(message);
          },
        });
        db.pragma("foreign_keys = ON");
        if (analyzed) db.exec("ANALYZE");
        const store = new SqliteStore(db, { newId: createIdGenerator() });
        await runHotPath(store, minute(analyzed ? 20 : 10), 50);
        const scans = [...new Set(statements)]
          .filter((sql) => /^\s*(WITH|SELECT|UPDATE|DELETE)/i.test(sql))
          .flatMap((sql) =>
            db
              .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
              .all()
              .map((row) => `${row.detail} <- ${sql.slice(0, 120)}`),
          )
          .filter(
            (line) => /^SCAN (tasks|task_state|runs)\b/.test(line) && !/^SCAN \w+ USING/.test(line),
          );
        expect(scans, analyzed ? "after ANALYZE" : "as created").toEqual([]);
        db.close();
      }
    },
  );
});
