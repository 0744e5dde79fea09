/**
 * Migration 25 (docs/semantics.md#threads) upgrades a database whose webhook and handler rows name their
 * thread by the target kind alone: tasks, runs and the slot of a launching run take their owner into
 * their scope, agent scopes stay, and then Bob's run on the label Alice also binds starts beside hers.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { minute } from "../../../contract/fixtures.js";
import { claimDue } from "../../../contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../../../helpers/postgres.js";
import { unscopedThreads, writeOwnerThreads } from "../../../helpers/owner-threads-fixture.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 25 (threads scoped by owner)", () => {
  it("scopes every webhook and handler thread by its owner, and Bob's run no longer waits for Alice's", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 24);
    const runs = await writeOwnerThreads(before);
    await before.close();
    const scopes = async (table: string) =>
      (
        await pool.query(
          `SELECT thread_scope, thread_id FROM ${q}.${table}` +
            ` WHERE thread_scope IS NOT NULL ORDER BY thread_scope, thread_id`,
        )
      ).rows;
    const written = {
      tasks: await scopes("tasks"),
      runs: await scopes("runs"),
      slots: await scopes("claim_slots"),
    };
    expect(written.slots).toEqual([{ thread_scope: "webhook:alice", thread_id: "nightly" }]);
    for (const table of ["tasks", "runs", "claim_slots"]) {
      await pool.query(unscopedThreads(`${q}.${table}`, "split_part(thread_scope, ':', 1)"));
    }
    expect(
      (await scopes("runs")).map((row) => (row as { thread_scope: string }).thread_scope).sort(),
    ).toEqual(["agent:main", "handler", "webhook", "webhook"]);

    await migrate();
    expect(await scopes("tasks")).toEqual(written.tasks);
    expect(await scopes("runs")).toEqual(written.runs);
    expect(await scopes("claim_slots")).toEqual(written.slots);

    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    const next = await claimDue(after, minute(2), { limit: 1 });
    expect(next.map((c) => c.run.id)).toEqual([runs.bob]);
    await after.close();
  });
});
