/**
 * SQLite migration 16 (docs/semantics.md#threads) upgrades a database whose webhook and handler rows name
 * their thread by the target kind alone: tasks and runs take their owner into their scope, agent scopes
 * stay, and then Bob's run on the label Alice also binds starts beside hers.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { openSqliteDatabase } from "../../../../src/adapters/storage/sqlite/sqlite-database.js";
import { openSqliteStore } from "../../../../src/adapters/storage/sqlite/sqlite-store.js";
import { minute } from "../../../contract/fixtures.js";
import { claimDue } from "../../../contract/store-steps.js";
import { unscopedThreads, writeOwnerThreads } from "../../../helpers/owner-threads-fixture.js";
import { tempFiles } from "./sqlite-temp.js";

const files = tempFiles("sqlite-migration-0016");
afterAll(() => {
  files.remove();
});

describe("SQLite migration 16 (threads scoped by owner)", () => {
  it("scopes every webhook and handler thread by its owner, and Bob's run no longer waits for Alice's", async () => {
    const path = files.path();
    const before = await openSqliteStore({ path, newId: createIdGenerator() });
    const runs = await writeOwnerThreads(before);
    await before.close();

    const db = openSqliteDatabase(path);
    const scopes = (table: string) =>
      db
        .prepare(`SELECT thread_scope, thread_id FROM ${table} ORDER BY thread_scope, thread_id`)
        .all();
    const written = { tasks: scopes("tasks"), runs: scopes("runs") };
    // The database as the code before migration 16 left it.
    for (const table of ["tasks", "runs"]) {
      db.prepare(
        unscopedThreads(table, "substr(thread_scope, 1, instr(thread_scope, ':') - 1)"),
      ).run();
    }
    db.prepare("DELETE FROM schema_migrations WHERE version = 16").run();
    expect(
      (scopes("runs") as { thread_scope: string }[]).map((row) => row.thread_scope).sort(),
    ).toEqual(["agent:main", "handler", "webhook", "webhook"]);
    db.close();

    const after = await openSqliteStore({ path, newId: createIdGenerator() });
    const reopened = openSqliteDatabase(path);
    try {
      const read = (table: string) =>
        reopened
          .prepare(`SELECT thread_scope, thread_id FROM ${table} ORDER BY thread_scope, thread_id`)
          .all();
      expect(read("tasks")).toEqual(written.tasks);
      expect(read("runs")).toEqual(written.runs);
    } finally {
      reopened.close();
    }
    const next = await claimDue(after, minute(2), { limit: 1 });
    expect(next.map((c) => c.run.id)).toEqual([runs.bob]);
    await after.close();
  });
});
