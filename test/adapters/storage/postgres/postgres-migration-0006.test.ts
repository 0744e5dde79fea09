/**
 * Migration 6 (docs/storage.md#the-claim-path-on-postgresql) upgrades a database of the schema before it
 * holding queued, launching, running and terminal runs: every run keeps its row exactly, and the active
 * ones hold the budget's slots from the start, so the budget, the thread and the exclusive-task slots
 * count them as before.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
} from "../../../../src/adapters/storage/postgres/postgres-migrations.js";
import { schemaName } from "../../../../src/adapters/storage/postgres/postgres-schema-name.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { RunId } from "../../../../src/domain/ids.js";
import { ALL, minute } from "../../../contract/fixtures.js";
import {
  claimDue,
  insertTask,
  recordCompletion,
  triggerRun,
} from "../../../contract/store-steps.js";
import {
  bridgeTaskState,
  createPostgresTestDatabase,
  leaseRows,
  unbridgeTaskState,
  withCalendarVersions,
  withRunQueueTables,
} from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

describe("postgres migration 6 (budget slots)", () => {
  it("keeps every run's state and gives the active runs their slots", async () => {
    const pool = database.pool(2);
    const schema = database.freshSchema();
    const q = `"${schema}"`;
    await migratePostgres(pool, schemaName(schema), POSTGRES_MIGRATIONS.slice(0, 5));
    // The store's run writes are the same on schema 5: make the rows as it would. Its task insert also
    // writes migration 7's key columns, migration 12's defect_at, migration 13's retiring secret, and its
    // run insert migration 9's target kind and migration 29's moved marker, so they exist only while the
    // rows are made.
    await pool.query(
      `ALTER TABLE ${q}.tasks ADD COLUMN task_key text, ADD COLUMN task_group text,` +
        ` ADD COLUMN defect_at timestamptz, ADD COLUMN retiring_secret text,` +
        ` ADD COLUMN retiring_until timestamptz`,
    );
    await pool.query(`ALTER TABLE ${q}.runs ADD COLUMN target_kind text, ADD COLUMN moved boolean`);
    // And migration 23's task_state, where it writes a task's state.
    await bridgeTaskState(pool, q);
    // And the run queue of migration 24, which today's store reads and writes.
    const returnRunQueue = await withRunQueueTables(pool, q);
    // And migration 27's calendar versions, which its task reads join.
    const returnCalendarVersions = await withCalendarVersions(pool, q);
    const before = await openPostgresStore({
      newId: createIdGenerator(),
      pool,
      schema,
      migrate: false,
    });
    const shared = await insertTask(before, { options: { overlap: "allow_all" } });
    const exclusive = await insertTask(before, { options: { overlap: "buffer_all" } });
    const runs: RunId[] = [];
    for (const key of ["a", "b", "c", "d"]) {
      runs.push((await triggerRun(before, ALL, shared.id, key, minute(0, 1)))!.id);
    }
    const exclusiveRuns: RunId[] = [];
    for (const key of ["x", "y"]) {
      exclusiveRuns.push((await triggerRun(before, ALL, exclusive.id, key, minute(0, 2)))!.id);
    }
    await before.close();
    await unbridgeTaskState(pool, q);
    // The rows below are written by SQL as schema 5 holds them, on the bare schema.
    await returnRunQueue();
    await returnCalendarVersions();
    await pool.query(
      `ALTER TABLE ${q}.tasks DROP COLUMN task_key, DROP COLUMN task_group, DROP COLUMN defect_at,` +
        ` DROP COLUMN retiring_secret, DROP COLUMN retiring_until`,
    );
    await pool.query(`ALTER TABLE ${q}.runs DROP COLUMN target_kind, DROP COLUMN moved`);
    // What an older replica left behind: a running and a launching claim, a finished run, and an
    // exclusive running run with a later one of its task queued.
    const claimed = (id: string, status: string) =>
      pool.query(
        `UPDATE ${q}.runs SET status = $2::text, attempt = 1, claim_token = 'tok-' || id,` +
          ` claimed_by = 'old-replica', claim_expires_at = now() + interval '1 hour',` +
          ` launched_at = CASE WHEN $2::text = 'running' THEN now() END WHERE id = $1::text`,
        [id, status],
      );
    await claimed(runs[0]!, "running");
    await claimed(runs[1]!, "launching");
    await pool.query(
      `UPDATE ${q}.runs SET status = 'succeeded', attempt = 1, finished_at = now() WHERE id = $1::text`,
      [runs[2]],
    );
    await claimed(exclusiveRuns[0]!, "running");
    const rows = async () =>
      (await pool.query(`SELECT to_jsonb(r) AS row FROM ${q}.runs AS r ORDER BY id`)).rows;
    const stored = await rows();

    await migratePostgres(pool, schemaName(schema));

    // Every row as it was, plus migration 9's copy of its task's target kind and migration 29's marker.
    expect(await rows()).toEqual(
      stored.map((r) => ({
        row: { ...(r as { row: object }).row, target_kind: "agent", moved: null },
      })),
    );
    // Migration 32 drops the lease's copy of the claimer (the run keeps its own `claimed_by`).
    const slots = { rows: await leaseRows(pool, q, "s.run_id IS NOT NULL") };
    const isExclusive = (
      await pool.query(`SELECT exclusive FROM ${q}.runs WHERE id = $1::text`, [exclusiveRuns[0]])
    ).rows[0] as { exclusive: boolean };
    expect(slots.rows.map((r) => (r as { run_id: string }).run_id).sort()).toEqual(
      [runs[0]!, runs[1]!, exclusiveRuns[0]!].sort(),
    );
    expect(
      slots.rows.find((r) => (r as { run_id: string }).run_id === exclusiveRuns[0]),
    ).toMatchObject({
      task_id: isExclusive.exclusive ? exclusive.id : null,
    });

    // The upgraded store counts them: a budget of 3 is full; with room, only the queued run whose
    // thread and task are free is claimed (the exclusive task's next run waits for the running one).
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    expect(await claimDue(after, minute(1), { maxConcurrentRuns: 3 })).toEqual([]);
    const more = await claimDue(after, minute(1), { maxConcurrentRuns: 10 });
    expect(more.map((c) => c.run.id)).toEqual(
      isExclusive.exclusive ? [runs[3]] : [runs[3], exclusiveRuns[1]],
    );
    // A run that finishes frees the slot the migration gave it.
    await recordCompletion(after, runs[0]!, { status: "succeeded" }, minute(1, 10));
    const occupied = await pool.query(
      `SELECT count(*)::int4 AS n FROM ${q}.claim_slots WHERE run_id = $1::text`,
      [runs[0]],
    );
    expect(occupied.rows[0]).toEqual({ n: 0 });
    await after.close();
  });
});
