/**
 * Every hot query of the SQLite store walks a named index (CONVENTIONS "SQL": every due-time query has
 * one). The statements are captured as the store runs them, then explained on the same file.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { migrateSqlite } from "../../../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { SqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { ALICE_SCOPE, ALL, at, minute } from "../../../contract/fixtures.js";
import {
  admitDue,
  claimAndLaunch,
  claimDue,
  insertTask,
  ledger,
  triggerRun,
} from "../../../contract/store-steps.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-plans");
const statements: string[] = [];
let explain: (sql: string) => string[];
let closeAll: () => void;

beforeAll(async () => {
  const path = files.path();
  const setup = openSqliteDatabase(path);
  migrateSqlite(setup);
  setup.close();
  const db = new Database(path, {
    verbose: (message) => {
      if (typeof message === "string") statements.push(message);
    },
  });
  db.pragma("foreign_keys = ON");
  const store = new SqliteStore(db, { newId: createIdGenerator() });
  const task = await insertTask(store, { options: { overlap: "allow_all" } });
  await triggerRun(store, ALL, task.id, "k1", at(1));
  await triggerRun(store, ALL, task.id, "k2", at(2));
  await admitDue(store, minute(1));
  await claimAndLaunch(store, minute(1), { limit: 1 });
  await claimDue(store, minute(1), { limit: 1 });
  await store.tasks.nextDueAt();
  await store.tasks.listTasks(ALICE_SCOPE, { limit: 5 });
  await ledger(store, task.id);
  await store.runs.findManualRun(task.id, "x");
  await store.runs.findExpiredClaims(minute(5), 10);
  await store.runs.findPastDeadline(minute(5), 10);
  await store.runs.findQueueTimeouts(minute(5), 10);
  await store.runs.findLostHandlerRuns(minute(5), 10);
  await store.runs.purge(minute(5), 10);
  await store.runs.nextRunWakeAt();
  const reader = new Database(path, { readonly: true });
  explain = (sql) =>
    reader
      .prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all()
      .map((row) => row.detail);
  closeAll = () => {
    reader.close();
    db.close();
  };
});

afterAll(() => {
  closeAll();
  files.remove();
});

/** The plan of the one captured statement containing `fragment`. */
function planOf(fragment: string): string[] {
  const matching = [...new Set(statements.filter((sql) => sql.includes(fragment)))];
  expect(matching.length, `statements containing ${fragment}`).toBeGreaterThan(0);
  return explain(matching[0]!);
}

const CASES: readonly (readonly [string, string, readonly string[]])[] = [
  ["the due scan", "next_run_at <=", ["task_state_due_idx"]],
  ["the next due instant", "ORDER BY next_run_at LIMIT 1", ["task_state_due_idx"]],
  [
    "the claim window and its busy threads and tasks",
    "t.handler_name",
    [
      "SEARCH q USING PRIMARY KEY (owner=?)",
      "SEARCH a USING PRIMARY KEY (thread_scope=? AND thread_id=?)",
      "run_active_task_uq",
      "run_ready_thread_idx",
      "run_holds_thread_idx",
      "run_holds_task_idx",
    ],
  ],
  [
    "the owners with queued runs",
    "WITH RECURSIVE o(owner)",
    ["SEARCH r USING PRIMARY KEY (owner>?)"],
  ],
  [
    "a task's active runs",
    "WITH wanted(task_id) AS (SELECT value FROM json_each(",
    ["run_ready_task_idx", "run_active_task_uq"],
  ],
  [
    "expired launch claims",
    "claim_expires_at <",
    ["run_active", "runs USING INDEX sqlite_autoindex_runs_1"],
  ],
  [
    "runs past their deadline",
    "deadline_at <",
    ["run_active", "runs USING INDEX sqlite_autoindex_runs_1"],
  ],
  ["queue timeouts", "queueTimeoutMs", ["run_ready"]],
  ["retention", "finished_at <", ["runs_queued_at_idx"]],
  ["the slots held", "SELECT count(*) FROM run_active", ["run_active"]],
  ["deleted tasks to purge", "deleted_at IS NOT NULL", ["tasks_deleted_idx"]],
  ["a task's history", "ORDER BY scheduled_for DESC", ["runs_occurrence_uq (task_id=?)"]],
  ["an owner's tasks", "ORDER BY created_at, id", ["tasks_owner_idx"]],
  ["a manual run by key", "AND idempotency_key = ", ["runs_manual_key_uq"]],
];

describe("SQLite query plans", () => {
  it.each(CASES)("%s walks its index", (_name, fragment, indexes) => {
    const plan = planOf(fragment).join("\n");
    for (const index of indexes) expect(plan).toContain(index);
  });

  it.each([
    ["the due scan", "next_run_at <="],
    ["the claim window", "t.handler_name"],
  ])("%s reads its index in order and sorts nothing", (_name, fragment) => {
    // A sort here reads every due task (or queued run) to return the first few: a burst of 10,000 paid
    // for all of them on every batch.
    expect(planOf(fragment).join("\n")).not.toContain("TEMP B-TREE");
  });

  it("never scans a whole table in any statement the store ran", () => {
    const scans = [...new Set(statements)]
      .filter((sql) => /^\s*(SELECT|UPDATE|DELETE)/i.test(sql))
      .flatMap((sql) => explain(sql).map((detail) => ({ sql, detail })))
      .filter(
        ({ detail }) =>
          /^SCAN (tasks|task_state|runs|replicas)\b/.test(detail) && !detail.includes("USING"),
      );
    expect(scans).toEqual([]);
  });
});
