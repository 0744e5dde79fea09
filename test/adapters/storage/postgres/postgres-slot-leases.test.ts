/**
 * A claim's leases (migration 31, docs/storage.md#the-claim-path-on-postgresql): a lease key that refuses
 * one of the claim's leases in its write (its number inserted by another claim after this one listed the
 * free numbers, or its run's thread bound meanwhile) is absorbed in the same statement: that run is not
 * written launching and stays queued, without an error, a savepoint or a second transaction, and the
 * next claim takes it once the key is free.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type {
  PostgresClient,
  PostgresPool,
  PostgresStatement,
} from "../../../../src/adapters/storage/postgres/postgres-pool.js";
import type { PostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { openPostgresStore } from "../../../../src/adapters/storage/postgres/postgres-store.js";
import { createIdGenerator } from "../../../../src/adapters/storage/shared/time-ordered-id.js";
import type { Run } from "../../../../src/domain/run.js";
import { ALL, minute, onceAt } from "../../../contract/fixtures.js";
import { claimDue, insertTask, reloadRun, triggerRun } from "../../../contract/store-steps.js";
import { createPostgresTestDatabase } from "../../../helpers/postgres.js";

const database = await createPostgresTestDatabase();
afterAll(() => database.drop());

const textOf = (statement: string | PostgresStatement) =>
  typeof statement === "string" ? statement : statement.text;

/** Records every statement a claim sends; runs `beforeWrite` once just before the claim's write. */
class Recorder {
  readonly sent: string[] = [];
  /** The slot numbers the last claim took. */
  taken: number[] = [];
  beforeWrite: (() => Promise<unknown>) | null = null;

  wrap(pool: PostgresPool): PostgresPool {
    const wrapClient = (client: PostgresClient): PostgresClient => ({
      query: async (statement, values) => {
        const text = textOf(statement);
        this.sent.push(text);
        if (text.startsWith("WITH bound AS (INSERT") && this.beforeWrite !== null) {
          const hook = this.beforeWrite;
          this.beforeWrite = null;
          await hook();
        }
        const result = await client.query(statement, values);
        if (text.includes("AS g(slot)")) {
          this.taken = result.rows.map((row) => (row as { slot: number }).slot);
        }
        return result;
      },
      release: (destroy) => {
        client.release(destroy);
      },
      on: ((event: "error", listener: (error: Error) => void) =>
        client.on(event, listener)) as PostgresClient["on"],
      off: (event, listener) => client.off(event, listener),
    });
    return {
      query: (statement, values) => pool.query(statement, values),
      connect: async () => wrapClient(await pool.connect()),
      end: () => pool.end(),
    };
  }
}

describe("postgres: a claim's refused lease leaves its run queued", () => {
  const recorder = new Recorder();
  const pool = database.pool(4);
  let store: PostgresStore;
  let schema: string;
  let run: Run;

  beforeEach(async () => {
    schema = database.freshSchema();
    store = await openPostgresStore({
      newId: createIdGenerator(),
      pool: recorder.wrap(pool),
      schema,
    });
    const task = await insertTask(store, {
      schedule: onceAt(minute(600)),
      options: { overlap: "allow_all" },
    });
    run = (await triggerRun(store, ALL, task.id, "a", minute(0, 1)))!;
    recorder.sent.length = 0;
  });

  /** Another claim's lease, inserted on the pool's own connection (committed at once). */
  const ghost = (slot: number, threadScope: string, threadId: string) =>
    pool.query(
      `INSERT INTO "${schema}".claim_slots (slot, exclusive, run_id, thread_scope, thread_id, owner,` +
        ` run_task_id) VALUES ($1::int4, false, 'ghost', $2::text, $3::text, 'someone', 'ghost-task')`,
      [slot, threadScope, threadId],
    );
  const leases = async () =>
    (await pool.query(`SELECT slot, run_id FROM "${schema}".claim_slots ORDER BY slot`)).rows;

  it("absorbs a number another claim inserted after this one took it", async () => {
    recorder.beforeWrite = () => ghost(recorder.taken[0]!, "elsewhere", "ghost-thread");
    expect(await claimDue(store, minute(1), { maxConcurrentRuns: 2 })).toEqual([]);
    expect(recorder.taken).toEqual([1]);
    expect((await reloadRun(store, run.id)).status).toBe("queued");
    expect(await leases()).toEqual([{ slot: 1, run_id: "ghost" }]);
    // One claim transaction, no savepoint: the refusal was absorbed by the write itself.
    expect(recorder.sent.filter((t) => /SAVEPOINT|ROLLBACK/.test(t))).toEqual([]);
    // The next claim takes the other free number.
    const next = await claimDue(store, minute(2), { maxConcurrentRuns: 2 });
    expect(next.map((c) => c.run.id)).toEqual([run.id]);
    expect(await leases()).toEqual([
      { slot: 1, run_id: "ghost" },
      { slot: 2, run_id: run.id },
    ]);
  });

  it("absorbs a thread another claim bound since the queue was read", async () => {
    recorder.beforeWrite = () => ghost(99, run.threadScope, run.threadId);
    expect(await claimDue(store, minute(1), { maxConcurrentRuns: 2 })).toEqual([]);
    expect((await reloadRun(store, run.id)).status).toBe("queued");
    expect(recorder.sent.filter((t) => /SAVEPOINT|ROLLBACK/.test(t))).toEqual([]);
    // The thread's lease deleted: the run is claimed.
    await pool.query(`DELETE FROM "${schema}".claim_slots WHERE run_id = 'ghost'`);
    const next = await claimDue(store, minute(2), { maxConcurrentRuns: 2 });
    expect(next.map((c) => c.run.id)).toEqual([run.id]);
  });
});
