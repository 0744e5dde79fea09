/**
 * SQLite migration 24 (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal) checks the closed
 * value sets of `runs` and `task_state` by comparisons, so that no write of a fire builds a temporary
 * b-tree of a list. From a database of migration 23 with a run in every state, every run, place and task
 * state is kept, with the same indexes and triggers; the sets refuse what they refused; the runs carry on.
 */
import type Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import {
  migrateSqlite,
  SQLITE_MIGRATIONS,
} from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import {
  openSqliteStore,
  SqliteStore,
} from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { RUN_COLUMNS } from "../../../../src/adapters/storage/sqlite/sqlite-rows.js";
import { ALL, minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitDue,
  cancelOneRun,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
  triggerRun,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";
import { runLedger } from "./run-ledger-snapshot.js";

const files = tempFiles("sqlite-migration-0024");
afterAll(() => {
  files.remove();
});

/** The indexes and triggers of the two rebuilt tables, by name, with their SQL. */
function companions(db: Database.Database): unknown[] {
  return db
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_schema
        WHERE tbl_name IN ('runs', 'task_state') AND type <> 'table' ORDER BY name`,
    )
    .all();
}

/** How many temporary b-trees a statement's program opens. */
function ephemeralTables(db: Database.Database, sql: string, ...params: unknown[]): number {
  const program = db.prepare(`EXPLAIN ${sql}`).all(...params) as { opcode: string }[];
  return program.filter((op) => op.opcode === "OpenEphemeral").length;
}

/** A fire's writes of the checked columns: the run insert, its verdict, and the task state's. */
const FIRE_WRITES: readonly (readonly [string, number])[] = [
  [
    `INSERT INTO runs (${RUN_COLUMNS.map((c) => `"${c}"`).join(", ")}, target_kind)
     VALUES (${RUN_COLUMNS.map(() => "?").join(", ")}, ?)`,
    RUN_COLUMNS.length + 1,
  ],
  [`UPDATE runs SET status = ?, reason = ?, finished_at = ? WHERE id = ?`, 4],
  [`UPDATE task_state SET status = ?, next_run_at = ? WHERE task_id = ?`, 3],
];

describe("SQLite migration 24 (closed value sets checked by comparisons)", () => {
  it("builds no list per row in a fire's writes", () => {
    const before = openSqliteDatabase(":memory:");
    const after = openSqliteDatabase(":memory:");
    try {
      migrateSqlite(before, SQLITE_MIGRATIONS.slice(0, 23));
      migrateSqlite(after);
      for (const [sql, params] of FIRE_WRITES) {
        const values = Array.from({ length: params }, () => null);
        expect(ephemeralTables(before, sql, ...values), sql).toBeGreaterThan(0);
        expect(ephemeralTables(after, sql, ...values), sql).toBe(0);
      }
    } finally {
      before.close();
      after.close();
    }
  });

  it("keeps every run (queued, launching, running, terminal) of a database at migration 23", async () => {
    const path = files.path();
    const db23 = openSqliteDatabase(path);
    migrateSqlite(db23, SQLITE_MIGRATIONS.slice(0, 23));
    const before = new SqliteStore(db23, { newId: createIdGenerator() });
    for (let i = 0; i < 5; i++) {
      await insertTask(before, { title: `t${String(i)}`, schedule: onceAt(minute(1)) });
    }
    await admitDue(before, minute(1));
    const claimed = await claimDue(before, minute(1), { limit: 3 });
    expect(claimed).toHaveLength(3);
    const [finished, running] = claimed;
    await recordLaunch(before, finished!, minute(1));
    await recordCompletion(before, finished!.run.id, { status: "succeeded" }, minute(1));
    await recordLaunch(before, running!, minute(1));
    const later = await insertTask(before, { title: "later", schedule: onceAt(minute(10)) });
    const manual = await triggerRun(before, ALL, later.id, "by-hand", minute(1));
    await cancelOneRun(before, manual!.id, minute(1));
    await before.close();

    const db = openSqliteDatabase(path);
    const statesBefore = db.prepare("SELECT * FROM task_state ORDER BY task_id").all();
    const ledgerBefore = runLedger(db);
    const companionsBefore = companions(db);
    expect(
      db.prepare("SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status").all(),
    ).toEqual([
      { status: "cancelled", n: 1 },
      { status: "launching", n: 1 },
      { status: "queued", n: 2 },
      { status: "running", n: 1 },
      { status: "succeeded", n: 1 },
    ]);
    db.close();

    const after = await openSqliteStore({ path, newId: createIdGenerator() });
    const reopened = openSqliteDatabase(path);
    try {
      expect(runLedger(reopened)).toEqual(ledgerBefore);
      expect(reopened.prepare("SELECT * FROM task_state ORDER BY task_id").all()).toEqual(
        statesBefore,
      );
      expect(companions(reopened)).toEqual(companionsBefore);
      expect(reopened.pragma("foreign_key_check")).toEqual([]);
      expect(reopened.pragma("integrity_check", { simple: true })).toBe("ok");
      // Each set refuses a value outside it, as its list did; a nullable one still takes NULL.
      const id = finished!.run.id;
      for (const set of [
        `status = 'lost'`,
        `"trigger" = 'cron'`,
        `reason = 'boredom'`,
        `target_kind = 'email'`,
      ]) {
        expect(() => reopened.prepare(`UPDATE runs SET ${set} WHERE id = ?`).run(id)).toThrow(
          /CHECK constraint failed/,
        );
      }
      reopened.prepare("UPDATE runs SET reason = NULL, target_kind = NULL WHERE id = ?").run(id);
      expect(() =>
        reopened
          .prepare("UPDATE task_state SET status = 'lost' WHERE task_id = ?")
          .run(finished!.task.id),
      ).toThrow(/CHECK constraint failed/);
      expect(reopened.prepare("SELECT count(*) AS n FROM run_ready").get()).toEqual({ n: 2 });
    } finally {
      reopened.close();
    }
    // The runs carry on where they stopped: the queued ones are claimed (the place trigger made again
    // moves them from run_ready to run_active), the running one finishes.
    expect(await claimDue(after, minute(2))).toHaveLength(2);
    await recordCompletion(after, running!.run.id, { status: "succeeded" }, minute(2));
    const check = openSqliteDatabase(path);
    try {
      expect(check.prepare("SELECT count(*) AS n FROM run_ready").get()).toEqual({ n: 0 });
      expect(
        check
          .prepare("SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status")
          .all(),
      ).toEqual([
        { status: "cancelled", n: 1 },
        { status: "launching", n: 3 },
        { status: "succeeded", n: 2 },
      ]);
    } finally {
      check.close();
    }
    await after.close();
  });
});
