/**
 * The dispatch races of the reference (deerflow-scheduler.md 6.4) on the real PostgreSQL server, with one
 * pool per replica so the statements really run concurrently. Assertions are on the run ledger.
 *
 * The reference's "barrier after the active-run check" cannot be reproduced through the store: `decide`
 * runs under the task's row lock, so a second command waits and then sees the first one's run. The
 * barrier is therefore placed where it still matters: inside two open transactions racing on the unique
 * indexes themselves ("index semantics").
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ActiveRunError } from "../../src/domain/errors.js";
import type { Run } from "../../src/domain/run.js";
import { ALL, minute } from "../contract/fixtures.js";
import { admitDue, claimDue, insertTask, ledger, triggerRun } from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { holdLock } from "../helpers/postgres-barrier.js";

const runnable = await raceTestsRunnable("test/race/postgres-dispatch-race.test.ts");

describe.skipIf(!runnable)("postgres dispatch races (reference 6.4)", () => {
  let database: PostgresTestDatabase;
  let schema = "";
  let replicas: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    schema = database.freshSchema();
    replicas = await openReplicaStores(database, 2, schema);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((store) => store.close()));
    await database.drop();
  });

  /** `code:constraint` of a failed statement. */
  function violation(error: unknown): string {
    const { code, constraint } = error as { code?: string; constraint?: string };
    return `${code ?? "?"}:${constraint ?? "?"}`;
  }

  function outcome(settled: PromiseSettledResult<Run | null>): string {
    if (settled.status === "rejected") {
      return settled.reason instanceof ActiveRunError ? "refused" : String(settled.reason);
    }
    return settled.value === null ? "duplicate" : "queued";
  }

  it("two concurrent manual triggers with one idempotency key queue one run", async () => {
    const [a, b] = replicas;
    const task = await insertTask(a!, { options: { overlap: "allow_all" } });
    const settled = await Promise.allSettled([
      triggerRun(a!, ALL, task.id, "same-key", minute(0, 1)),
      triggerRun(b!, ALL, task.id, "same-key", minute(0, 1)),
    ]);
    expect(settled.map(outcome).sort()).toEqual(["duplicate", "queued"]);
    expect((await ledger(a!, task.id)).filter((r) => r.trigger === "manual")).toHaveLength(1);
  });

  it("forced: two triggers of an exclusive skip task both wait at its row lock, then one queues and one is refused", async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = replicas;
      const task = await insertTask(a!);
      // The coordinating connection holds the task's row: both triggers are seen waiting on it, so
      // their transactions overlap for certain when it lets go (isolation-tester style).
      const barrier = await holdLock(
        database.url!,
        `SELECT 1 FROM "${schema}".tasks WHERE id = $1::text FOR UPDATE`,
        [task.id],
      );
      try {
        const racing = Promise.allSettled([
          triggerRun(a!, ALL, task.id, `forced-a-${round}`, minute(0, 1)),
          triggerRun(b!, ALL, task.id, `forced-b-${round}`, minute(0, 1)),
        ]);
        await barrier.waitForWaiters(2, "row");
        await barrier.release();
        const settled = await racing;
        expect(settled.map(outcome).sort()).toEqual(["queued", "refused"]);
      } finally {
        await barrier.close();
      }
      const runs = await ledger(a!, task.id);
      expect(runs.map((r) => [r.trigger, r.status])).toEqual([["manual", "queued"]]);
    }
  });

  it("natural timing x5: concurrent triggers of an exclusive skip task launch exactly once", async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = replicas;
      const task = await insertTask(a!);
      const settled = await Promise.allSettled([
        triggerRun(a!, ALL, task.id, `key-a-${round}`, minute(0, 1)),
        triggerRun(b!, ALL, task.id, `key-b-${round}`, minute(0, 1)),
      ]);
      expect(settled.map(outcome).sort()).toEqual(["queued", "refused"]);
      const claims = await Promise.all([
        claimDue(a!, minute(0, 2), { replicaId: "a" }),
        claimDue(b!, minute(0, 2), { replicaId: "b" }),
      ]);
      expect(claims.flat().filter((c) => c.task.id === task.id)).toHaveLength(1);
      const runs = await ledger(a!, task.id);
      expect(runs.map((r) => r.status)).toEqual(["launching"]);
    }
  });

  it("admission and a manual trigger of an exclusive skip task race: exactly one launching", async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = replicas;
      const task = await insertTask(a!);
      const now = minute(1, 5);
      const [admitted, triggered] = await Promise.allSettled([
        admitDue(a!, now),
        triggerRun(b!, ALL, task.id, `manual-${round}`, now),
      ]);
      expect(admitted.status).toBe("fulfilled");
      expect(["queued", "refused"]).toContain(outcome(triggered));
      // Admission skips a task row the trigger holds (SKIP LOCKED): the next tick decides it then.
      await admitDue(a!, now);
      await Promise.all([
        claimDue(a!, minute(1, 6), { replicaId: "a" }),
        claimDue(b!, minute(1, 6), { replicaId: "b" }),
      ]);
      const runs = await ledger(a!, task.id);
      // The occurrence has exactly one decision: queued (and now launching), or skipped for overlap.
      const occurrence = runs.filter((r) => r.trigger === "scheduled");
      expect(occurrence).toHaveLength(1);
      expect(runs.filter((r) => r.status === "launching")).toHaveLength(1);
      expect(runs.filter((r) => ["queued", "running"].includes(r.status))).toHaveLength(0);
      if (outcome(triggered) === "queued") {
        expect(occurrence[0]).toMatchObject({ status: "skipped", reason: "overlap" });
      } else {
        expect(occurrence[0]?.status).toBe("launching");
      }
    }
  });

  describe("index semantics, two open transactions on separate connections", () => {
    let first: pg.Client;
    let second: pg.Client;

    beforeAll(async () => {
      first = new pg.Client({ connectionString: database.url! });
      second = new pg.Client({ connectionString: database.url! });
      await Promise.all([first.connect(), second.connect()]);
    });

    afterAll(async () => {
      await Promise.all([first.end(), second.end()]);
    });

    /** Moves `run` to `status` on `client` inside an open transaction. */
    function move(client: pg.Client, run: Run, status: string): Promise<unknown> {
      return client.query(`UPDATE "${schema}".runs SET status = $2::text WHERE id = $1::text`, [
        run.id,
        status,
      ]);
    }

    /**
     * Claims `run` into slot `slot` (numbered past the store's budget, so no claim of the store's takes it) on `client` as the claim's statement does: the lease inserted (its
     * unique keys on the thread and, exclusive, the task) and the run moved to launching, in one
     * statement. Since migration 24 these keys alone keep one active run per exclusive task and thread.
     */
    async function claim(client: pg.Client, run: Run, slot: number): Promise<unknown> {
      return client.query(
        `WITH bound AS (INSERT INTO "${schema}".claim_slots (slot, exclusive, run_id, thread_scope,` +
          ` thread_id, owner, run_task_id) SELECT $2::int4, r.exclusive, r.id, r.thread_scope,` +
          ` NULLIF(r.thread_id, r.id), r.owner, r.task_id` +
          ` FROM "${schema}".runs AS r WHERE r.id = $1::text)` +
          ` UPDATE "${schema}".runs SET status = 'launching' WHERE id = $1::text`,
        [run.id, slot],
      );
    }

    /** Manual runs of a new task, queued side by side; `exclusive` makes them share the task's slot. */
    async function queuedRuns(exclusive: boolean, keys: string[]) {
      const store = replicas[0]!;
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      const runs: Run[] = [];
      for (const key of keys)
        runs.push((await triggerRun(store, ALL, task.id, key, minute(0, 1)))!);
      if (exclusive) {
        await first.query(`UPDATE "${schema}".runs SET exclusive = true WHERE task_id = $1::text`, [
          task.id,
        ]);
      }
      return { task, runs };
    }

    it("lets one of two concurrent launches of an exclusive task win; the other hits claim_slots_task_uq", async () => {
      const { runs } = await queuedRuns(true, ["x", "y"]);
      await first.query("BEGIN");
      await second.query("BEGIN");
      await claim(first, runs[0]!, 101);
      const blocked = claim(second, runs[1]!, 102).then(() => "updated", violation);
      await first.query("COMMIT");
      expect(await blocked).toBe("23505:claim_slots_task_uq");
      await second.query("ROLLBACK");
      await move(first, runs[0]!, "succeeded");
    });

    it("keeps one active slot per exclusive task: tombstones and other tasks never conflict; the slot frees", async () => {
      const { runs } = await queuedRuns(true, ["p", "q", "r"]);
      const other = await queuedRuns(true, ["s"]);
      await claim(first, runs[0]!, 101);
      await move(first, runs[0]!, "running");
      await expect(claim(first, runs[1]!, 102)).rejects.toMatchObject({
        code: "23505",
        constraint: "claim_slots_task_uq",
      });
      // No path moves a run to launching without a slot: the database refuses it (migration 24).
      await expect(move(first, runs[1]!, "launching")).rejects.toMatchObject({
        code: "23514",
        constraint: "runs_active_holds_slot",
      });
      await move(first, runs[2]!, "cancelled");
      await claim(first, other.runs[0]!, 103);
      await move(first, runs[0]!, "succeeded");
      await claim(first, runs[1]!, 102);
    });

    it("lets one of two concurrent inserts of one manual key win; the other hits runs_manual_key_uq", async () => {
      const { task, runs } = await queuedRuns(false, ["m"]);
      const copy = (client: pg.Client, id: string) =>
        client.query(
          `INSERT INTO "${schema}".runs (id, task_id, owner, trigger, scheduled_for, fire_at, status,` +
            ` reason, missed_count, missed_until, attempt, failures, not_before, thread_scope, thread_id,` +
            ` exclusive, claim_token, claim_expires_at, claimed_by, target_run_id, idempotency_key,` +
            ` queued_at, launched_at, deadline_at, finished_at, lateness_ms, late, cancel_requested_at,` +
            ` error, result, target_kind)` +
            ` SELECT $1::text AS id, r.task_id, r.owner, r.trigger, ` +
            `r.scheduled_for, r.fire_at, r.status, r.reason, r.missed_count, r.missed_until, r.attempt, ` +
            `r.failures, r.not_before, r.thread_scope, $1::text AS thread_id, r.exclusive, r.claim_token, ` +
            `r.claim_expires_at, r.claimed_by, r.target_run_id, r.idempotency_key || '-2', r.queued_at, ` +
            `r.launched_at, r.deadline_at, r.finished_at, r.lateness_ms, r.late, ` +
            `r.cancel_requested_at, r.error, r.result, r.target_kind` +
            ` FROM "${schema}".runs AS r WHERE r.id = $2::text`,
          [id, runs[0]!.id],
        );
      await first.query("BEGIN");
      await second.query("BEGIN");
      await copy(first, `${task.id}-copy-1`);
      const blocked = copy(second, `${task.id}-copy-2`).then(() => "inserted", violation);
      await first.query("COMMIT");
      expect(await blocked).toBe("23505:runs_manual_key_uq");
      await second.query("ROLLBACK");
    });
  });
});
