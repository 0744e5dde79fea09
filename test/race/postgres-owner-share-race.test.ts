/**
 * The owners' share across replicas on the real PostgreSQL server (docs/semantics.md#fair-share,
 * docs/storage.md#fair-share-across-owners): two replicas, one pool each, claim Bob's backlog at the same
 * time, again and again; together they never hold more than Bob's share, while Alice's run still goes.
 * Assertions are on the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { OwnerShare } from "../../src/domain/claim.js";
import { ownerId } from "../../src/domain/ids.js";
import type { TaskId } from "../../src/domain/ids.js";
import { ALICE, ALL, T0, at, minute, onceAt } from "../contract/fixtures.js";
import { claimDue, insertTask, ledger, triggerRun } from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/postgres-owner-share-race.test.ts");

const IDLE = { schedule: onceAt(minute(600)), options: { overlap: "allow_all" as const } };
const SHARE: OwnerShare = { maxActiveRuns: 3, overrides: new Map() };

describe.skipIf(!runnable)("postgres owner share across replicas", () => {
  let database: PostgresTestDatabase;
  let replicas: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    replicas = await openReplicaStores(database, 2, database.freshSchema());
  });

  afterAll(async () => {
    await Promise.all(replicas.map((store) => store.close()));
    await database.drop();
  });

  async function active(ids: readonly TaskId[]): Promise<number> {
    let held = 0;
    for (const id of ids) {
      held += (await ledger(replicas[0]!, id)).filter(
        (run) => run.status === "launching" || run.status === "running",
      ).length;
    }
    return held;
  }

  it("never lets two replicas' claims together put an owner over its share", async () => {
    const [a, b] = replicas;
    // A fresh owner per round, its runs on several tasks so that no task or thread serialises the
    // claims; two claims per replica at once.
    for (let round = 0; round < 12; round++) {
      const owner = ownerId(`bob-${round}`);
      const tasks: TaskId[] = [];
      for (let t = 0; t < 4; t++) {
        const task = await insertTask(a!, { ...IDLE, owner });
        tasks.push(task.id);
        for (let i = 0; i < 3; i++) {
          await triggerRun(a!, ALL, task.id, `run-${i}`, at(minute(round) - T0 + t * 10 + i));
        }
      }
      const now = minute(round, 500);
      await Promise.all(
        [a, b, a, b].map((store, i) =>
          claimDue(store!, now, {
            replicaId: `r${i}`,
            share: SHARE,
            limit: 4,
            maxConcurrentRuns: 100,
          }),
        ),
      );
      expect(await active(tasks)).toBe(3);
    }
    const alice = await insertTask(a!, { ...IDLE, owner: ALICE });
    const aliceRun = await triggerRun(a!, ALL, alice.id, "alice", minute(20));
    const claims = await Promise.all([
      claimDue(a!, minute(20, 1), {
        replicaId: "a",
        share: SHARE,
        limit: 4,
        maxConcurrentRuns: 100,
      }),
      claimDue(b!, minute(20, 1), {
        replicaId: "b",
        share: SHARE,
        limit: 4,
        maxConcurrentRuns: 100,
      }),
    ]);
    expect(claims.flat().map((c) => c.run.id)).toEqual([aliceRun!.id]);
  });
});
