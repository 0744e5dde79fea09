/**
 * The claim fused into admission on the real PostgreSQL server (docs/storage.md#fused-admit-and-claim):
 * the runs a replica may launch at once are inserted already claimed (launching, a slot bound, never in
 * `run_ready`), chosen as a claim chooses; every other run is queued as before. Two replicas fusing at
 * once keep the global budget exact; a queued run is never overtaken by a fused one of its owner or
 * thread; the owner's share and the handlers a replica serves are respected; a fused claim whose replica
 * dies is found after its lease like any claim. Assertions are on the ledger and the queue tables.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { OwnerShare } from "../../src/domain/claim.js";
import { ownerId } from "../../src/domain/ids.js";
import type { TaskId } from "../../src/domain/ids.js";
import type { Instant } from "../../src/domain/time.js";
import {
  ALICE,
  ALL,
  BOB,
  agentTarget,
  handlerTarget,
  minute,
  onceAt,
  reuseThread,
} from "../contract/fixtures.js";
import {
  POLICY,
  admitAndClaim,
  cancelOneRun,
  claimDue,
  insertTask,
  ledger,
  recordLaunch,
  triggerRun,
} from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/postgres-fused-claim.test.ts");

const HANDLER = new Set(["h"]);

describe.skipIf(!runnable)("postgres: the claim fused into admission", () => {
  let database: PostgresTestDatabase;
  let schema: string;
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

  /** Counts of one statement on the schema's tables. */
  async function count(sql: string, values: unknown[] = []): Promise<number> {
    const result = await database.pool(1).query(sql.replaceAll("$schema", `"${schema}"`), values);
    return Number((result.rows[0] as { n: number | string }).n);
  }

  /** Once tasks of `owner` on the handler `h`, due at `at`. */
  async function dueTasks(n: number, at: Instant, fixture = {}): Promise<TaskId[]> {
    const ids: TaskId[] = [];
    for (let i = 0; i < n; i++) {
      const task = await insertTask(replicas[0]!, {
        schedule: onceAt(at),
        target: handlerTarget("h"),
        ...fixture,
      });
      ids.push(task.id);
    }
    return ids;
  }

  /** Cancels the queued runs of `ids`: a ready queued run would stop the next cases' fusion. */
  async function cancelQueued(ids: readonly TaskId[], at: Instant): Promise<void> {
    for (const id of ids) {
      for (const run of await ledger(replicas[0]!, id)) {
        if (run.status === "queued") await cancelOneRun(replicas[0]!, run.id, at);
      }
    }
  }

  async function statuses(ids: readonly TaskId[]): Promise<string[]> {
    const out: string[] = [];
    for (const id of ids) for (const run of await ledger(replicas[0]!, id)) out.push(run.status);
    return out.sort();
  }

  it("inserts the runs it may launch already claimed: launching, a slot bound, never in run_ready", async () => {
    const ids = await dueTasks(3, minute(1));
    const report = await admitAndClaim(replicas[0]!, minute(1, 10), {
      handlerNames: HANDLER,
      replicaId: "fuser",
    });
    expect(report.tasks).toBe(3);
    expect(report.claimed?.map((c) => c.run.status)).toEqual([
      "launching",
      "launching",
      "launching",
    ]);
    expect(await statuses(ids)).toEqual(["launching", "launching", "launching"]);
    const runIds = report.claimed!.map((c) => c.run.id);
    expect(
      await count(`SELECT count(*) AS n FROM $schema.run_ready WHERE run_id = ANY($1)`, [runIds]),
    ).toBe(0);
    expect(
      await count(
        `SELECT count(*) AS n FROM $schema.claim_slots AS s JOIN $schema.runs AS r ON r.id = s.run_id` +
          ` WHERE s.run_id = ANY($1) AND r.claimed_by = 'fuser'`,
        [runIds],
      ),
    ).toBe(3);
    // The claim's token fences the launch as any claim's does; the verdict frees the slot.
    for (const claimed of report.claimed!) {
      const launched = await recordLaunch(replicas[1]!, claimed, minute(1, 20));
      expect(launched?.run.status).toBe("running");
    }
    expect(await statuses(ids)).toEqual(["running", "running", "running"]);
  });

  it("does not fuse a run of a handler this replica does not serve: it is queued", async () => {
    const ids = await dueTasks(1, minute(2));
    const report = await admitAndClaim(replicas[0]!, minute(2, 10), { handlerNames: new Set() });
    expect(report.claimed ?? []).toEqual([]);
    expect(await statuses(ids)).toEqual(["queued"]);
    const claimed = await claimDue(replicas[1]!, minute(2, 20), { handlerNames: HANDLER });
    expect(claimed.map((c) => c.run.taskId)).toEqual(ids);
  });

  it("fuses nothing while a queued run is ready to claim, whoever's it is", async () => {
    // A queued run of Carol's, ready (its handler is not served by the claims below).
    const waiting = await insertTask(replicas[0]!, {
      owner: ownerId("carol"),
      schedule: onceAt(minute(600)),
      target: handlerTarget("other"),
      options: { overlap: "allow_all" },
    });
    const carols = await triggerRun(replicas[0]!, ALL, waiting.id, "waiting", minute(3));
    const erins = await dueTasks(2, minute(3), { owner: ownerId("erin") });
    const first = await admitAndClaim(replicas[0]!, minute(3, 10), { handlerNames: HANDLER });
    expect(first.claimed ?? []).toEqual([]);
    expect(await statuses(erins)).toEqual(["queued", "queued"]);
    // The claim takes them, as before.
    const claimed = await claimDue(replicas[1]!, minute(3, 20), { handlerNames: HANDLER });
    expect(claimed.map((c) => c.run.taskId).sort()).toEqual([...erins].sort());
    await cancelOneRun(replicas[0]!, carols!.id, minute(3, 30));
  });

  it("never overtakes a queued run of its thread, even one not yet ready", async () => {
    // Alice's queued run on the agent thread `shared`, not ready before minute 10; Bob's due task on
    // the same thread.
    const thread = { target: agentTarget("main"), context: reuseThread("shared") };
    const alices = await insertTask(replicas[0]!, {
      ...thread,
      owner: ALICE,
      schedule: onceAt(minute(600)),
      options: { overlap: "allow_all" },
    });
    const aliceRun = await triggerRun(replicas[0]!, ALL, alices.id, "first", minute(10));
    expect(aliceRun!.notBefore).toBe(minute(10));
    const bobs = await dueTasks(1, minute(4), { ...thread, owner: BOB });
    // Frank's task, on a thread of its own: the waiting run does not hold it back.
    const franks = await dueTasks(1, minute(4), { owner: ownerId("frank") });
    const report = await admitAndClaim(replicas[0]!, minute(4, 10), { handlerNames: HANDLER });
    expect(report.claimed?.map((c) => c.run.taskId)).toEqual(franks);
    expect(await statuses(bobs)).toEqual(["queued"]);
    await cancelQueued([...bobs, alices.id], minute(4, 20));
  });

  it("keeps each owner within its share", async () => {
    const owner = ownerId("dave");
    const share: OwnerShare = { maxActiveRuns: 2, overrides: new Map() };
    const ids = await dueTasks(5, minute(5), { owner });
    const report = await admitAndClaim(replicas[0]!, minute(5, 10), {
      handlerNames: HANDLER,
      share,
      maxConcurrentRuns: 100,
    });
    expect(report.claimed).toHaveLength(2);
    expect(await statuses(ids)).toEqual(["launching", "launching", "queued", "queued", "queued"]);
    const more = await claimDue(replicas[1]!, minute(5, 20), {
      handlerNames: HANDLER,
      share,
      maxConcurrentRuns: 100,
    });
    expect(more.map((c) => c.run.taskId)).toEqual([]);
    await cancelQueued(ids, minute(5, 30));
  });

  it("keeps the global budget exact while two replicas fuse at once", async () => {
    // A fresh schema: no slot held by the cases above.
    const [a, b] = await openReplicaStores(database, 2, database.freshSchema());
    try {
      const ids: TaskId[] = [];
      for (let i = 0; i < 40; i++) {
        const task = await insertTask(a!, {
          schedule: onceAt(minute(6)),
          target: handlerTarget("h"),
        });
        ids.push(task.id);
      }
      const reports = await Promise.all(
        [a, b, a, b].map((store, i) =>
          admitAndClaim(store!, minute(6, 10), {
            handlerNames: HANDLER,
            replicaId: `r${i}`,
            maxConcurrentRuns: 5,
            limit: 5,
            batch: 10,
          }),
        ),
      );
      expect(reports.reduce((n, r) => n + r.tasks, 0)).toBe(40);
      const fused = reports.reduce((n, r) => n + (r.claimed?.length ?? 0), 0);
      let active = 0;
      let queued = 0;
      for (const id of ids) {
        for (const run of await ledger(a!, id)) {
          if (run.status === "launching") active++;
          if (run.status === "queued") queued++;
        }
      }
      expect(fused).toBe(active);
      expect(active).toBe(5);
      expect(queued).toBe(35);
      // Nothing more fits until a run ends.
      expect(
        await claimDue(b!, minute(6, 20), { handlerNames: HANDLER, maxConcurrentRuns: 5 }),
      ).toEqual([]);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  /**
   * A fresh schema whose `claim_slots` has an intruder: before each of the first `clashes` lease inserts
   * (counted by a sequence, which a rollback does not undo), a lease of another run is inserted on the
   * same slot number, as a second replica's claim committing between this admission's read of the free
   * numbers and its write would; the insert then fails on `claim_slots_pkey`.
   */
  async function clashingReplica(clashes: number): Promise<PostgresStore> {
    const clashing = database.freshSchema();
    const [store] = await openReplicaStores(database, 1, clashing);
    const s = `"${clashing}"`;
    await database
      .pool(1)
      .query(
        `CREATE SEQUENCE ${s}.intrusions;` +
          `CREATE FUNCTION ${s}.intrude() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN` +
          ` IF NEW.run_id <> 'intruder' AND nextval('${s}.intrusions') <= ${clashes} THEN` +
          ` INSERT INTO ${s}.claim_slots (slot, exclusive, run_id, thread_scope, owner, run_task_id)` +
          ` VALUES (NEW.slot, false, 'intruder', 'intruder', 'intruder', 'intruder'); END IF;` +
          ` RETURN NEW; END $$;` +
          `CREATE TRIGGER intrude BEFORE INSERT ON ${s}.claim_slots FOR EACH ROW EXECUTE FUNCTION ${s}.intrude();`,
      );
    return store!;
  }

  it("admits fused again once when another claim took a slot number first", async () => {
    const store = await clashingReplica(1);
    try {
      const ids: TaskId[] = [];
      for (let i = 0; i < 2; i++) {
        const task = await insertTask(store, {
          schedule: onceAt(minute(8)),
          target: handlerTarget("h"),
        });
        ids.push(task.id);
      }
      const report = await admitAndClaim(store, minute(8, 10), { handlerNames: HANDLER });
      expect(report.tasks).toBe(2);
      expect(report.claimed?.map((c) => c.run.taskId).sort()).toEqual([...ids].sort());
      const runs = (await Promise.all(ids.map((id) => ledger(store, id)))).flat();
      expect(runs.map((run) => run.status)).toEqual(["launching", "launching"]);
    } finally {
      await store.close();
    }
  });

  it("admits unfused, its runs queued, when the fused retry clashes too", async () => {
    const store = await clashingReplica(2);
    try {
      const task = await insertTask(store, {
        schedule: onceAt(minute(9)),
        target: handlerTarget("h"),
      });
      const report = await admitAndClaim(store, minute(9, 10), { handlerNames: HANDLER });
      expect(report.tasks).toBe(1);
      expect(report.claimed ?? []).toEqual([]);
      expect((await ledger(store, task.id)).map((run) => run.status)).toEqual(["queued"]);
      // The queue's claim takes it as before (the intruder is spent).
      const claimed = await claimDue(store, minute(9, 20), { handlerNames: HANDLER });
      expect(claimed.map((c) => c.run.taskId)).toEqual([task.id]);
    } finally {
      await store.close();
    }
  });

  it("leaves a fused claim whose replica dies to be found after its lease, like any claim", async () => {
    const ids = await dueTasks(1, minute(7));
    const report = await admitAndClaim(replicas[0]!, minute(7, 10), {
      handlerNames: HANDLER,
      replicaId: "dies",
    });
    expect(report.claimed).toHaveLength(1);
    const run = report.claimed![0]!.run;
    const found = async (at: Instant) =>
      (await replicas[1]!.runs.findExpiredClaims(at, 100)).map((c) => c.run.id);
    expect(await found(minute(7, 20))).not.toContain(run.id);
    expect(run.claimExpiresAt).toBe(minute(7, 10) + POLICY.leaseMs);
    expect(await found((run.claimExpiresAt! + 1) as Instant)).toContain(run.id);
    expect(await statuses(ids)).toEqual(["launching"]);
  });
});
