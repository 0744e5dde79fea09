/**
 * Migration 30 (docs/storage.md#fused-admit-and-claim) lets a run be inserted already claimed: on a
 * database of schema 29 holding launching, running, terminal and queued runs (the queued one not ready
 * yet), an admission with the claim fused in is refused by the insert trigger and writes nothing; after
 * the migration every run reads as before, the same admission inserts its run launching with its slot,
 * once the queued run is ready nothing is fused, and a run inserted launching without a slot is still
 * refused.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import { BOB, handlerTarget, minute, onceAt } from "../../../contract/fixtures.js";
import {
  admitAndClaim,
  admitDue,
  claimDue,
  insertTask,
  recordCompletion,
  recordLaunch,
} from "../../../contract/store-steps.js";
import { createPostgresTestDatabase, schemaAtVersion } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());
const HANDLERS = new Set(["work"]);

describe("postgres migration 30 (a run may be inserted already claimed)", () => {
  it("keeps every run, and lets an admission insert the runs it claims", async () => {
    const { pool, schema, quoted: q, store: before, migrate } = await schemaAtVersion(database, 29);
    const work = { target: handlerTarget("work") };
    // Four runs, left launching, running, succeeded and queued (Bob's, not ready before minute 60).
    for (let i = 1; i <= 3; i++) await insertTask(before, { ...work, schedule: onceAt(minute(i)) });
    // Bob's on a handler no claim here serves.
    await insertTask(before, {
      owner: BOB,
      target: handlerTarget("other"),
      schedule: onceAt(minute(4)),
    });
    for (let i = 1; i <= 4; i++) await admitDue(before, minute(i));
    const [first, second, third] = await claimDue(before, minute(5), {
      handlerNames: HANDLERS,
      limit: 3,
    });
    await recordLaunch(before, second!, minute(5, 1));
    await recordLaunch(before, third!, minute(5, 1));
    await recordCompletion(before, third!.run.id, { status: "succeeded" }, minute(5, 2));
    expect(first!.run.status).toBe("launching");
    const notBefore = (at: number) =>
      pool.query(
        `UPDATE ${q}.runs SET not_before = timestamptz 'epoch' + $1 * interval '1 millisecond'` +
          ` WHERE status = 'queued'`,
        [at],
      );
    await notBefore(minute(60));
    const due = await insertTask(before, { ...work, schedule: onceAt(minute(6)) });
    const rows = async () =>
      (await pool.query(`SELECT * FROM ${q}.runs ORDER BY id`)).rows as Record<string, unknown>[];
    const seeded = await rows();
    expect(seeded.map((r) => r["status"]).sort()).toEqual([
      "launching",
      "queued",
      "running",
      "succeeded",
    ]);

    // Schema 29's insert trigger refuses a run inserted launching: the fused admission writes nothing.
    await expect(
      admitAndClaim(before, minute(6, 1), { handlerNames: HANDLERS }),
    ).rejects.toMatchObject({ constraint: "runs_active_holds_slot" });
    expect(await rows()).toEqual(seeded);
    await before.close();

    await migrate();
    expect(await rows()).toEqual(seeded);
    const after = await openPostgresStore({ newId: createIdGenerator(), pool, schema });
    const fused = await admitAndClaim(after, minute(6, 1), { handlerNames: HANDLERS });
    expect(fused.claimed?.map((c) => [c.run.taskId, c.run.status])).toEqual([
      [due.id, "launching"],
    ]);
    // Once Bob's queued run is ready to claim, nothing is fused: the next run is queued.
    await notBefore(minute(4));
    const next = await insertTask(after, { ...work, schedule: onceAt(minute(7)) });
    const behind = await admitAndClaim(after, minute(7, 1), { handlerNames: HANDLERS });
    expect(behind.claimed).toEqual([]);
    expect(behind.queuedRuns.map((r) => r.taskId)).toEqual([next.id]);
    // Still refused: a run inserted launching that holds no slot (a copy of the fused run, renamed).
    const client = await pool.connect();
    try {
      await client.query(`CREATE TEMP TABLE ghost AS SELECT * FROM ${q}.runs WHERE id = $1`, [
        fused.claimed![0]!.run.id,
      ]);
      await client.query(
        `UPDATE ghost SET id = 'ghost', thread_id = 'ghost', scheduled_for = scheduled_for + interval '1 day'`,
      );
      await expect(client.query(`INSERT INTO ${q}.runs SELECT * FROM ghost`)).rejects.toMatchObject(
        {
          constraint: "runs_active_holds_slot",
        },
      );
    } finally {
      client.release();
    }
    await after.close();
  });
});
