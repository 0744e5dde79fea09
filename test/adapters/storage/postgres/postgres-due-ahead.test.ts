/**
 * Reading the next instant's tasks ahead of it on PostgreSQL
 * (docs/decisions.md#an-idle-replica-reads-the-next-instants-definitions-ahead-of-it): the tasks due at
 * the instant, in admission's order and at most `limit`, each as stored; nothing written, and nothing
 * locked that the admission at the instant would wait for.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ALL, minute } from "../../../contract/fixtures.js";
import { admitDue, insertTask, reload } from "../../../contract/store-steps.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";
import type { PostgresTestDatabase } from "../../../helpers/postgres.js";

let database: Promise<PostgresTestDatabase> | null = null;
afterAll(async () => {
  if (database !== null) await (await database).drop();
});

describe("reading ahead the tasks due at an instant on PostgreSQL", () => {
  it("reads the due tasks as stored, in admission's order, and writes nothing", async () => {
    database ??= createPostgresTestDatabase();
    const db = await database;
    const store = await db.openStore({ schema: db.freshSchema() });
    try {
      // Every minute from 09:01 (the default), and one from 09:02.
      const first = await insertTask(store);
      const second = await insertTask(store);
      const later = await insertTask(store, {
        schedule: { type: "cron", cron: "2-59 * * * *", timezone: "UTC" },
      });
      const readAhead = store.tasks.readDueAhead?.bind(store.tasks);
      expect(readAhead).toBeDefined();

      const read = await readAhead!(minute(1), 10);
      expect(read.map((t) => t.id)).toEqual([first.id, second.id]);
      expect(read).toEqual([await reload(store, first.id), await reload(store, second.id)]);
      expect((await readAhead!(minute(1), 1)).map((t) => t.id)).toEqual([first.id]);
      expect((await readAhead!(minute(2), 10)).map((t) => t.id)).toEqual([
        first.id,
        second.id,
        later.id,
      ]);

      // Nothing decided or written: the admission at the instant decides the same occurrences.
      for (const task of [first, second]) {
        expect((await store.runs.listRuns(ALL, task.id, { limit: 10 })).items).toEqual([]);
        expect((await reload(store, task.id)).decidedThrough).toBe(task.decidedThrough);
      }
      const admitted = await admitDue(store, minute(1));
      expect(admitted.tasks).toBe(2);
      expect(admitted.queuedRuns.map((r) => r.taskId).sort()).toEqual([first.id, second.id].sort());
    } finally {
      await store.close();
    }
  });
});
