/**
 * The store contract on SQLite: each test gets a fresh database file (WAL, as in production) in one
 * temporary directory, removed when the file's tests are done.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll } from "vitest";
import { createIdGenerator } from "../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteStore } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { describeStoreContract } from "./store-contract.js";

const directory = mkdtempSync(join(tmpdir(), "punctual-sqlite-contract-"));
let opened = 0;

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describeStoreContract(
  "sqlite",
  () => {
    opened++;
    return openSqliteStore({
      path: join(directory, `contract-${opened}.db`),
      newId: createIdGenerator(),
    });
  },
  (_store, id, column, raw) => {
    // A second connection to the open test's file, as an operator's sqlite3 shell would be.
    const db = new Database(join(directory, `contract-${opened}.db`));
    try {
      db.prepare(`UPDATE tasks SET ${column} = ? WHERE id = ?`).run(raw, id);
    } finally {
      db.close();
    }
    return Promise.resolve();
  },
);
