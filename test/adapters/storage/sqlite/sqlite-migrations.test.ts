import type Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import {
  migrateSqlite,
  migrationChecksum,
  SQLITE_MIGRATIONS,
  SqliteMigrationError,
  sqliteMigrationStatus,
} from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import type { SqliteMigration } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import {
  ACTIVE,
  SLOT,
  TERMINAL,
} from "../../../../src/adapters/storage/sqlite/sqlite-statements.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import {
  ACTIVE_RUN_STATUSES,
  RUN_REASONS,
  RUN_STATUSES,
  RUN_TRIGGERS,
  SLOT_RUN_STATUSES,
  TERMINAL_RUN_STATUSES,
} from "../../../../src/domain/run.js";
import { SCHEDULE_TYPES } from "../../../../src/domain/schedule/schedule-spec.js";
import { TARGET_KINDS } from "../../../../src/domain/target.js";
import { TASK_STATUSES } from "../../../../src/domain/task.js";
import { taskId } from "../../../../src/domain/ids.js";
import { ALL } from "../../../contract/fixtures.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-migrations");

afterAll(() => {
  files.remove();
});

function withDatabase(fn: (db: Database.Database) => void, path = files.path()): void {
  const db = openSqliteDatabase(path);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

/** Every shipped migration's version, in order. */
const SHIPPED = SQLITE_MIGRATIONS.map((m) => m.version);
const NEXT = SHIPPED.length + 1;

const LATER: SqliteMigration = {
  version: NEXT,
  name: "a later step",
  sql: "CREATE TABLE later_step (id INTEGER PRIMARY KEY) STRICT;",
};

describe("migrateSqlite", () => {
  it("applies the schema to a fresh database and records number and checksum", () => {
    withDatabase((db) => {
      expect(sqliteMigrationStatus(db)).toEqual({
        applied: [],
        pending: SHIPPED,
        current: false,
      });
      expect(migrateSqlite(db, SQLITE_MIGRATIONS, 1234)).toEqual({
        applied: SHIPPED,
        pending: [],
        current: true,
      });
      expect(db.prepare("SELECT * FROM schema_migrations").all()).toEqual(
        SQLITE_MIGRATIONS.map((m) => ({
          version: m.version,
          name: m.name,
          checksum: migrationChecksum(m),
          applied_at: 1234,
        })),
      );
      expect(SQLITE_MIGRATIONS.slice(0, 3).map((m) => m.name)).toEqual([
        "initial schema",
        "idempotency records by age",
        "due tasks in admission order",
      ]);
    });
  });

  it("does nothing the second time", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      expect(migrateSqlite(db)).toEqual({ applied: SHIPPED, pending: [], current: true });
      expect(db.prepare("SELECT count(*) AS n FROM schema_migrations").get()).toEqual({
        n: SHIPPED.length,
      });
    });
  });

  it("applies a later migration on top, and reports it pending before", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      const withSecond = [...SQLITE_MIGRATIONS, LATER];
      expect(sqliteMigrationStatus(db, withSecond)).toEqual({
        applied: SHIPPED,
        pending: [NEXT],
        current: false,
      });
      expect(migrateSqlite(db, withSecond)).toMatchObject({
        applied: [...SHIPPED, NEXT],
        current: true,
      });
    });
  });

  it("applies nothing at all when one pending migration fails", () => {
    withDatabase((db) => {
      const broken = { version: NEXT, name: "broken", sql: "CREATE TABLE nonsense (" };
      expect(() => migrateSqlite(db, [...SQLITE_MIGRATIONS, broken])).toThrow();
      expect(sqliteMigrationStatus(db)).toEqual({
        applied: [],
        pending: SHIPPED,
        current: false,
      });
      const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all();
      expect(tables).toEqual([]);
    });
  });

  it("refuses a database with a migration newer than the code knows", async () => {
    const path = files.path();
    withDatabase((db) => {
      migrateSqlite(db, [...SQLITE_MIGRATIONS, LATER]);
    }, path);
    const opening = openSqliteStore({ path, newId: createIdGenerator() });
    await expect(opening).rejects.toBeInstanceOf(SqliteMigrationError);
    await expect(opening).rejects.toThrow(
      new RegExp(`migration ${NEXT}, newer than this punctual knows`),
    );
  });

  it("refuses a database whose applied migration was edited", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      db.prepare("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1").run();
      expect(sqliteMigrationStatus(db)).toMatchObject({ current: false, pending: [] });
      expect(() => migrateSqlite(db)).toThrow(/checksum mismatch/);
    });
  });
});

/**
 * The values of a column's closed set in a table's CREATE statement: `column IN (...)`, or since SQLite
 * migration 24 (`runs`, `task_state`) `column = 'a' OR column = 'b' ...` (`target_kind IS NULL OR` first
 * where the column may be NULL).
 */
function checkList(db: Database.Database, table: string, column: string): string[] {
  const row = db
    .prepare<[string], { sql: string }>("SELECT sql FROM sqlite_schema WHERE name = ?")
    .get(table);
  const quoted = column === "trigger" ? `"trigger"` : column;
  const listed = new RegExp(`CHECK \\(${quoted} IN \\(([^)]*)\\)\\)`).exec(row!.sql);
  if (listed !== null) return listValues(listed[1]!);
  const compared = new RegExp(
    `CHECK \\((?:${quoted} IS NULL OR )?((?:${quoted} = '[a-z_]+'(?: OR )?)+)\\)`,
  ).exec(row!.sql);
  expect(compared, `${table}.${column} has a CHECK list`).not.toBeNull();
  return compared![1]!.split(" OR ").map((term) => term.replace(/^.* = '|'$/g, ""));
}

function listValues(text: string): string[] {
  return text.split(",").map((value) => value.trim().replace(/^'|'$/g, ""));
}

describe("the SQLite schema", () => {
  it("checks every closed value set against the domain's lists", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      expect(checkList(db, "task_state", "status")).toEqual([...TASK_STATUSES]);
      expect(checkList(db, "tasks", "schedule_type")).toEqual([...SCHEDULE_TYPES]);
      expect(checkList(db, "tasks", "target_kind")).toEqual([...TARGET_KINDS]);
      expect(checkList(db, "runs", "trigger")).toEqual([...RUN_TRIGGERS]);
      expect(checkList(db, "runs", "status")).toEqual([...RUN_STATUSES]);
      expect(checkList(db, "runs", "reason")).toEqual([...RUN_REASONS]);
      expect(checkList(db, "runs", "target_kind")).toEqual([...TARGET_KINDS]);
    });
  });

  it("queries with the domain's active, slot and terminal statuses", () => {
    expect(listValues(ACTIVE.slice(1, -1))).toEqual([...ACTIVE_RUN_STATUSES]);
    expect(listValues(SLOT.slice(1, -1))).toEqual([...SLOT_RUN_STATUSES]);
    expect(listValues(TERMINAL.slice(1, -1))).toEqual([...TERMINAL_RUN_STATUSES]);
  });

  it("names every index", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      const names = db
        .prepare<[], { name: string }>(
          "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
        )
        .all()
        .map((row) => row.name);
      expect(names).toEqual([
        "api_tokens_token_hash_uq",
        "idempotency_records_created_idx",
        "run_active_task_uq",
        "run_holds_task_idx",
        "run_holds_thread_idx",
        "run_ready_task_idx",
        "run_ready_thread_idx",
        "runs_manual_key_uq",
        "runs_occurrence_uq",
        "runs_owner_listing_idx",
        "runs_owner_rare_idx",
        "runs_owner_requested_idx",
        "runs_queued_at_idx",
        "task_state_due_idx",
        "tasks_deleted_idx",
        "tasks_group_idx",
        "tasks_key_uq",
        "tasks_owner_idx",
        "tasks_thread_idx",
      ]);
    });
  });

  it("stores instants as integers, refuses fractions, bad JSON and non-boolean flags", () => {
    withDatabase((db) => {
      migrateSqlite(db);
      const insert = db.prepare(
        `INSERT INTO replicas (id, started_at, heartbeat_at) VALUES ('r', ?, ?)`,
      );
      expect(() => insert.run(1.5, 1)).toThrow(/cannot store REAL value in INTEGER column/);
      const record = db.prepare(
        `INSERT INTO idempotency_records VALUES ('o', 'r', 'k', 'h', 200, ?, 1)`,
      );
      expect(() => record.run("{not json")).toThrow(/CHECK constraint failed/);
      const token = db.prepare(
        `INSERT INTO api_tokens (id, token_hash, owner, is_admin, created_at) VALUES ('t', 'h', 'o', ?, 1)`,
      );
      expect(() => token.run(2)).toThrow(/CHECK constraint failed/);
    });
  });
});

describe("SQLite migration 4 (excluded runs, calendars)", () => {
  it("keeps every run of a database at migration 3, and then takes the reason excluded", () => {
    withDatabase((db) => {
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 3), 1);
      db.prepare(
        `INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
           thread_scope, options, metadata, status, decided_through, version, webhook_secret,
           created_at, updated_at)
         VALUES ('t1', 'o', 'T', '{}', 'cron', '{}', 'handler', '{}', 'handler', '{}', '{}',
           'enabled', 0, 1, 's', 0, 0)`,
      ).run();
      const insertRun = db.prepare(
        `INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, reason,
           missed_count, missed_until, not_before, thread_scope, thread_id, "exclusive",
           idempotency_key, queued_at)
         VALUES (?, 't1', 'o', 'scheduled', ?, ?, ?, ?, ?, ?, 0, 'handler', ?, 1, ?, 0)`,
      );
      insertRun.run("r1", 1000, 1000, "missed", "down", 3, 3000, "r1", "k1");
      insertRun.run("r2", 4000, 4000, "queued", null, null, null, "r2", "k2");
      expect(() =>
        insertRun.run("r3", 5000, 5000, "skipped", "excluded", 2, 6000, "r3", "k3"),
      ).toThrow(/CHECK constraint failed/);
      const before = db.prepare("SELECT * FROM runs ORDER BY id").all();
      migrateSqlite(db, SQLITE_MIGRATIONS, 2);
      // Migration 7 copies each run's task target kind onto it, migration 17 scopes its thread by
      // its owner, and migration 19 adds the moved marker, NULL (unmarked); nothing else changes.
      expect(db.prepare("SELECT * FROM runs ORDER BY id").all()).toEqual(
        before.map((row) => ({
          ...(row as object),
          target_kind: "handler",
          thread_scope: "handler:o",
          moved: null,
        })),
      );
      insertRun.run("r3", 5000, 5000, "skipped", "excluded", 2, 6000, "r3", "k3");
      // The rebuilt table keeps its keys and its foreign key to tasks.
      expect(() => insertRun.run("r4", 4000, 4000, "queued", null, null, null, "r4", "k4")).toThrow(
        /UNIQUE constraint failed/,
      );
      db.prepare("DELETE FROM tasks WHERE id = 't1'").run();
      expect(db.prepare("SELECT count(*) AS n FROM runs").get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT count(*) AS n FROM calendars").get()).toEqual({ n: 0 });
    });
  });
});

describe("SQLite migration 15 (task state apart from its definition)", () => {
  it("keeps every task's state and every run of a database at migration 14", async () => {
    const path = files.path();
    withDatabase((db) => {
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 14), 1);
      const insertTask = db.prepare(
        `INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
           thread_scope, options, metadata, status, next_run_at, decided_through, admitted_count,
           last_run_at, last_run_id, last_error, run_count, version, webhook_secret, created_at,
           updated_at, defect_at)
         VALUES (?, 'o', 'T', '{"type":"interval","every":"PT1M"}', 'interval',
           '{"kind":"handler","name":"h","input":null}', 'handler', '{"mode":"fresh_thread_per_run"}',
           'handler', '{}', '{}', ?, ?, ?, ?, ?, ?, ?, ?, 1, 's', 0, 0, ?)`,
      );
      insertTask.run("t1", "enabled", 60_000, 0, 3, 50_000, "r3", null, 3, null);
      insertTask.run("t2", "paused", null, 7000, 1, 7000, "r1", "boom", 1, null);
      insertTask.run("t3", "enabled", 1000, 0, 0, null, null, null, 0, 500);
      const insertRun = db.prepare(
        `INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, not_before,
           thread_scope, thread_id, "exclusive", idempotency_key, queued_at, target_kind)
         VALUES (?, 't1', 'o', 'scheduled', ?, ?, ?, 0, 'handler', ?, 0, ?, 0, 'handler')`,
      );
      const statuses = ["queued", "launching", "running", "succeeded", "failed", "cancelled"];
      statuses.forEach((status, i) => {
        insertRun.run(
          `r${String(i)}`,
          i * 1000,
          i * 1000,
          status,
          `th${String(i)}`,
          `k${String(i)}`,
        );
      });
    }, path);
    let before: unknown[] = [];
    withDatabase((db) => {
      before = db.prepare("SELECT * FROM runs ORDER BY id").all();
      // Migration 15 alone: 16 scopes threads by owner, which test/adapters/storage/sqlite/
      // sqlite-migration-0016.test.ts checks.
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 15), 2);
      expect(db.prepare("SELECT * FROM runs ORDER BY id").all()).toEqual(before);
      expect(
        db
          .prepare(
            `SELECT task_id, status, next_run_at, decided_through, admitted_count, last_run_at,
               last_run_id, last_error, run_count, defect_at FROM task_state ORDER BY task_id`,
          )
          .all(),
      ).toEqual([
        {
          task_id: "t1",
          status: "enabled",
          next_run_at: 60_000,
          decided_through: 0,
          admitted_count: 3,
          last_run_at: 50_000,
          last_run_id: "r3",
          last_error: null,
          run_count: 3,
          defect_at: null,
        },
        {
          task_id: "t2",
          status: "paused",
          next_run_at: null,
          decided_through: 7000,
          admitted_count: 1,
          last_run_at: 7000,
          last_run_id: "r1",
          last_error: "boom",
          run_count: 1,
          defect_at: null,
        },
        {
          task_id: "t3",
          status: "enabled",
          next_run_at: 1000,
          decided_through: 0,
          admitted_count: 0,
          last_run_at: null,
          last_run_id: null,
          last_error: null,
          run_count: 0,
          defect_at: 500,
        },
      ]);
      const columns = db
        .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('tasks')")
        .all()
        .map((row) => row.name);
      expect(columns).not.toContain("status");
      expect(columns).not.toContain("next_run_at");
    }, path);
    // The store reads the migrated tasks whole, admits the due one and carries on from its watermark.
    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const t1 = await store.tasks.findTask(ALL, taskId("t1"));
      expect(t1).toMatchObject({
        status: "enabled",
        nextRunAt: 60_000,
        runCount: 3,
        admittedCount: 3,
      });
      expect((await store.tasks.findTask(ALL, taskId("t2")))?.lastError).toBe("boom");
      // t3 is defective: never due; t1 is due at 60,000.
      expect(await store.tasks.nextDueAt()).toBe(60_000);
    } finally {
      await store.close();
    }
    withDatabase((db) => {
      db.prepare("DELETE FROM runs").run();
      db.prepare("DELETE FROM tasks WHERE id = 't2'").run();
      expect(db.prepare("SELECT count(*) AS n FROM task_state").get()).toEqual({ n: 2 });
    }, path);
  });
});
