/**
 * SQLite migration 17 (docs/storage.md#the-run-model-on-sqlite) upgrades a database at migration 16:
 * every run is kept as it was, the queued ones fill `run_ready`, the launching and running ones
 * `run_active` (the slots), the cancelled ones still holding their thread `run_holds`, and the store carries
 * on from there: the busy thread, the exclusive task and the hold still keep their runs waiting, and
 * free them once they end.
 */
import type Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import {
  migrateSqlite,
  SQLITE_MIGRATIONS,
} from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { runId } from "../../../../src/domain/ids.js";
import { instant } from "../../../../src/domain/time.js";
import { claimDue, recordCompletion } from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-migration-0017");
afterAll(() => {
  files.remove();
});

function withDatabase(path: string, fn: (db: Database.Database) => void): void {
  const db = openSqliteDatabase(path);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

const FAR = 10_000_000;

/** id, status, thread, exclusive, deadline_at: one run in each status, and the places that matter. */
const RUNS: readonly (readonly [string, string, string, 0 | 1, number | null])[] = [
  ["r0", "queued", "th1", 0, null], // behind r1 on its thread
  ["r1", "launching", "th1", 1, null], // holds th1 and, exclusive, the task
  ["r2", "running", "th2", 0, null],
  ["r3", "succeeded", "th3", 0, null],
  ["r4", "failed", "th4", 0, null],
  ["r5", "cancelled", "th5", 0, FAR], // its target was not told: holds th5 until FAR
  ["r6", "queued", "th6", 1, null], // exclusive: waits for r1
  ["r7", "cancelled", "th7", 0, null],
  ["r8", "queued", "th8", 0, null], // free
  ["r9", "queued", "th5", 0, null], // behind r5's hold
  ["ra", "skipped", "tha", 0, null],
  ["rb", "missed", "thb", 0, null],
];

describe("SQLite migration 17 (a narrow queue and a ledger indexed apart from status)", () => {
  it("keeps every run of a database at migration 16, places each, and the store carries on", async () => {
    const path = files.path();
    withDatabase(path, (db) => {
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 14), 1);
      db.prepare(
        `INSERT INTO tasks (id, owner, title, schedule, schedule_type, target, target_kind, context,
           thread_scope, options, metadata, status, next_run_at, decided_through, admitted_count,
           last_run_at, last_run_id, last_error, run_count, version, webhook_secret, created_at,
           updated_at, defect_at)
         VALUES ('t1', 'o', 'T', '{"type":"interval","every":"PT1M"}', 'interval',
           '{"kind":"handler","name":"h","input":null}', 'handler', '{"mode":"fresh_thread_per_run"}',
           'handler', '{}', '{}', 'enabled', NULL, 0, 0, NULL, NULL, NULL, 0, 1, 's', 0, 0, NULL)`,
      ).run();
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 16), 2);
      const insertRun = db.prepare(
        `INSERT INTO runs (id, task_id, owner, "trigger", scheduled_for, fire_at, status, not_before,
           thread_scope, thread_id, "exclusive", idempotency_key, queued_at, target_kind, deadline_at,
           claim_token, claim_expires_at, claimed_by, finished_at)
         VALUES (?, 't1', 'o', 'scheduled', ?, ?, ?, 0, 'handler:o', ?, ?, ?, ?, 'handler', ?,
           ?, ?, ?, ?)`,
      );
      RUNS.forEach(([id, status, thread, exclusive, deadline], i) => {
        const claimed = status === "launching";
        const done = !["queued", "launching", "running"].includes(status);
        insertRun.run(
          id,
          i * 1000,
          i * 1000,
          status,
          thread,
          exclusive,
          `k${id}`,
          i,
          deadline,
          claimed ? "token" : null,
          claimed ? FAR : null,
          claimed ? "replica-old" : null,
          done ? 100 : null,
        );
      });
    });
    let before: unknown[] = [];
    withDatabase(path, (db) => {
      before = db.prepare("SELECT * FROM runs ORDER BY id").all();
      migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 17), 3);
      expect(db.prepare("SELECT * FROM runs ORDER BY id").all()).toEqual(before);
      const ids = (sql: string) => db.prepare<[], string>(sql).pluck().all();
      expect(ids("SELECT run_id FROM run_ready ORDER BY owner, queued_at, run_id")).toEqual([
        "r0",
        "r6",
        "r8",
        "r9",
      ]);
      expect(ids("SELECT run_id FROM run_active ORDER BY run_id")).toEqual(["r1", "r2"]);
      expect(ids("SELECT run_id FROM run_holds ORDER BY run_id")).toEqual(["r5"]);
    });

    const store = await openSqliteStore({ path, newId: createIdGenerator() });
    try {
      const handlerNames = new Set(["h"]);
      const now = instant(20_000);
      // r0 waits for r1 on th1, r6 for r1's exclusive slot on the task, r9 for r5's hold.
      const first = await claimDue(store, now, { limit: 10, handlerNames });
      expect(first.map((c) => c.run.id)).toEqual(["r8"]);
      await recordCompletion(store, runId("r1"), { status: "succeeded", result: null }, now);
      const second = await claimDue(store, now, { limit: 10, handlerNames });
      expect(second.map((c) => c.run.id)).toEqual(["r0", "r6"]);
    } finally {
      await store.close();
    }
    withDatabase(path, (db) => {
      const ids = (sql: string) => db.prepare<[], string>(sql).pluck().all();
      expect(ids("SELECT run_id FROM run_ready")).toEqual(["r9"]);
      expect(ids("SELECT run_id FROM run_active ORDER BY run_id")).toEqual([
        "r0",
        "r2",
        "r6",
        "r8",
      ]);
      // A deleted run leaves its place (the trigger): the task's runs go with it.
      db.prepare("DELETE FROM runs").run();
      for (const table of ["run_ready", "run_active", "run_holds"]) {
        expect(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()).toEqual({ n: 0 });
      }
    });
  });
});
