/**
 * Processes that open the same new SQLite file at the same instant all migrate it successfully: the
 * first applies the schema under `BEGIN IMMEDIATE`, the others wait for the lock and find nothing pending.
 */
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { tempFiles } from "../adapters/storage/sqlite/sqlite-temp.js";
import { SQLITE_MIGRATIONS } from "../../src/adapters/storage/sqlite/sqlite-migrations.js";
import { runWorkers } from "./sqlite-race-jobs.js";

const files = tempFiles("sqlite-migrate-race");

afterAll(() => {
  files.remove();
});

function appliedRows(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT version, name FROM schema_migrations").all();
  } finally {
    db.close();
  }
}

describe("SQLite migrations under concurrent processes", () => {
  it.each([2, 8])("%i processes migrating one new file all succeed, once", async (count) => {
    const path = files.path("migrate");
    const outcomes = await runWorkers(
      Array.from({ length: count }, () => ({ op: "migrate" as const, path })),
      { barrier: true },
    );
    expect(outcomes).toHaveLength(count);
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        op: "migrate",
        status: { applied: SQLITE_MIGRATIONS.map((m) => m.version), pending: [], current: true },
      });
    }
    expect(appliedRows(path)).toEqual(
      SQLITE_MIGRATIONS.map(({ version, name }) => ({ version, name })),
    );
  });
});
