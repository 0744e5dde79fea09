/**
 * `runs_per_minute` across replicas on PostgreSQL (docs/decisions.md#runs-per-minute-across-replicas):
 * two replica stores on one schema admit one owner's due tasks at once, in many small concurrent batches,
 * and never queue more than the owner's quota in a minute between them, whether their transactions ran
 * lock-free (far below the quota) or under the owner's lock (near it).
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import { AdmitDue } from "../../src/application/dispatch/admit-due.js";
import { AdmissionWindow } from "../../src/application/policy/admission-window.js";
import { Quotas } from "../../src/application/policy/quotas.js";
import { ownerId } from "../../src/domain/ids.js";
import type { Instant } from "../../src/domain/time.js";
import { minute } from "../contract/fixtures.js";
import { insertTasks } from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/postgres-admission-rate-race.test.ts");

describe.skipIf(!runnable)("postgres: runs_per_minute across two replicas", () => {
  let database: PostgresTestDatabase;
  let schema = "";
  let replicas: PostgresStore[] = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });

  // Each test on its own schema: no other test's tasks are due in it.
  beforeEach(async () => {
    schema = database.freshSchema();
    replicas = await openReplicaStores(database, 2, schema);
  });

  afterEach(async () => {
    await Promise.all(replicas.map((store) => store.close()));
  });

  afterAll(async () => {
    await database.drop();
  });

  /** Each replica's admission, with its own window (as each process has), under `perMinute`. */
  const admissionsUnder = (perMinute: number): AdmitDue[] =>
    replicas.map(
      (store) =>
        new AdmitDue({
          tasks: store.tasks,
          quotas: new Quotas({ runsPerMinute: perMinute }),
          admissions: new AdmissionWindow(),
        }),
    );

  /** `loops` concurrent admission loops per replica, in batches of `limit`, until nothing is due. */
  async function admitConcurrently(
    admissions: readonly AdmitDue[],
    now: Instant,
    options: { loops: number; limit: number },
  ): Promise<{ queued: number; skipped: number }> {
    const totals = { queued: 0, skipped: 0 };
    const loop = async (admission: AdmitDue): Promise<void> => {
      for (;;) {
        const report = await admission.admitDue(now, options.limit);
        if (report.tasks === 0) return;
        totals.queued += report.queuedRuns.length;
        totals.skipped += report.skipped;
      }
    };
    await Promise.all(
      admissions.flatMap((admission) =>
        Array.from({ length: options.loops }, () => loop(admission)),
      ),
    );
    return totals;
  }

  const queuedInSchema = async (owner: string): Promise<number> => {
    const client = new pg.Client({ connectionString: database.url! });
    await client.connect();
    try {
      const result = await client.query(
        `SELECT count(*)::int AS n FROM "${schema}".runs WHERE owner = $1 AND status = 'queued'`,
        [owner],
      );
      return (result.rows[0] as { n: number }).n;
    } finally {
      await client.end();
    }
  };

  it("queues exactly the quota of an owner whose due tasks exceed it, lock-free far below it and locked near it", async () => {
    const owner = ownerId("far-then-near");
    await insertTasks(
      replicas[0]!,
      ...Array.from({ length: 300 }, () => ({ owner, options: { overlap: "allow_all" as const } })),
    );
    const totals = await admitConcurrently(admissionsUnder(200), minute(1, 5_000), {
      loops: 4,
      limit: 5,
    });
    expect(totals).toEqual({ queued: 200, skipped: 100 });
    expect(await queuedInSchema(owner)).toBe(200);
  });

  it("keeps the quota over the minute: a second tick within it queues nothing, one past it queues the quota again", async () => {
    const owner = ownerId("small-quota");
    await insertTasks(
      replicas[0]!,
      ...Array.from({ length: 10 }, () => ({ owner, options: { overlap: "allow_all" as const } })),
    );
    const admissions = admissionsUnder(5);
    const first = await admitConcurrently(admissions, minute(1, 5_000), { loops: 2, limit: 2 });
    expect(first).toEqual({ queued: 5, skipped: 5 });
    // 56 s later: the first tick's runs are still in the minute.
    const within = await admitConcurrently(admissions, minute(2, 1_000), { loops: 2, limit: 2 });
    expect(within).toEqual({ queued: 0, skipped: 10 });
    const past = await admitConcurrently(admissions, minute(3, 6_000), { loops: 2, limit: 2 });
    expect(past).toEqual({ queued: 5, skipped: 5 });
    expect(await queuedInSchema(owner)).toBe(10);
  });
});
