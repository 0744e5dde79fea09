/**
 * Eight replicas on one PostgreSQL schema, each with its own pool: concurrent admitters decide every
 * occurrence exactly once, and concurrent claimers never exceed the global budget. Assertions are on the
 * run ledger (and, for the budget, on a plain count sampled throughout).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import type { TaskId } from "../../src/domain/ids.js";
import type { Run } from "../../src/domain/run.js";
import { durationMs } from "../../src/domain/time.js";
import type { Instant } from "../../src/domain/time.js";
import { ALL, MINUTE, minute } from "../contract/fixtures.js";
import {
  admitDue,
  claimDue,
  insertTask,
  ledger,
  recordCompletion,
  recordLaunch,
  scheduledDecisions,
  triggerRun,
} from "../contract/store-steps.js";
import {
  createPostgresTestDatabase,
  openReplicaStores,
  raceTestsRunnable,
} from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const REPLICAS = 8;
const runnable = await raceTestsRunnable("test/race/postgres-replicas.test.ts");

/** The nominal minutes a task's scheduled decisions cover, each once per decision (a missed range: all). */
function coveredMinutes(decisions: readonly Run[]): number[] {
  return decisions.flatMap((run) => {
    const count = run.status === "missed" ? (run.missedCount ?? 1) : 1;
    const first = (run.scheduledFor - minute(0)) / MINUTE;
    if (run.status === "missed") expect(run.missedUntil).toBe(minute(first + count - 1));
    return Array.from({ length: count }, (_, i) => first + i);
  });
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe.skipIf(!runnable)(`postgres: ${REPLICAS} replicas on one schema`, () => {
  let database: PostgresTestDatabase;
  let stores: PostgresStore[] = [];
  let schema = "";

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  // Each scenario gets its own schema, with eight stores racing to migrate it.
  beforeEach(async () => {
    schema = database.freshSchema();
    stores = await openReplicaStores(database, REPLICAS, schema);
  });

  afterEach(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  /** Every replica admits at `now` at once; returns how many task admissions were written in total. */
  async function admitEverywhere(now: Instant, limit: number): Promise<number> {
    const reports = await Promise.all(stores.map((store) => admitDue(store, now, limit)));
    return reports.reduce((sum, report) => sum + report.tasks, 0);
  }

  it("eight concurrent admitters of one due task write one decision per occurrence", async () => {
    const task = await insertTask(stores[0]!, {
      options: {
        catchUp: { policy: "all", windowMs: durationMs(24 * 60 * MINUTE) },
        overlap: "allow_all",
      },
    });
    // 30 nominal minutes are due at once: one replica admits them all, the others skip the locked row.
    const admitted = await admitEverywhere(minute(30, 1), 10);
    expect(admitted).toBe(1);
    const decisions = await scheduledDecisions(stores[0]!, task.id);
    expect(coveredMinutes(decisions)).toEqual(range(1, 30));
    expect(decisions.every((run) => run.status === "queued")).toBe(true);
  });

  it("eight admitters over many tasks and rounds never decide an occurrence twice nor skip one", async () => {
    const tasks: TaskId[] = [];
    for (let i = 0; i < 24; i++) tasks.push((await insertTask(stores[i % REPLICAS]!)).id);
    // Rounds on time and after gaps (minutes 3-4 and 7-9 are overdue when admitted: missed ranges).
    for (const m of [1, 2, 5, 6, 10]) {
      const now = minute(m, 2_000);
      let admitted = await admitEverywhere(now, 2);
      // Whatever the replicas left (each took at most 2), a last pass admits; nothing is admitted twice.
      for (let more = await admitDue(stores[0]!, now, 100); more.tasks > 0;) {
        admitted += more.tasks;
        more = await admitDue(stores[0]!, now, 100);
      }
      expect(admitted).toBe(tasks.length);
    }
    for (const id of tasks) {
      const decisions = await scheduledDecisions(stores[0]!, id);
      expect(coveredMinutes(decisions)).toEqual(range(1, 10));
      expect(decisions.filter((run) => run.status === "queued")).toHaveLength(1);
    }
  });

  it("eight concurrent claimers under a budget of 3 never have more than 3 runs launching or running", async () => {
    const budget = 3;
    const store = stores[0]!;
    const runs: Run[] = [];
    for (let i = 0; i < 40; i++) {
      const task = await insertTask(store, { options: { overlap: "allow_all" } });
      runs.push((await triggerRun(store, ALL, task.id, `burst-${i}`, minute(0, 1)))!);
    }
    const pool = database.pool(2);
    const count = async (statuses: string): Promise<number> => {
      const result = await pool.query(
        `SELECT count(*)::int4 AS n FROM "${schema}".runs WHERE status IN (${statuses})`,
      );
      return (result.rows[0] as { n: number }).n;
    };
    const countActive = () => count("'launching', 'running'");
    let observedMax = 0;
    const sampling = { on: true };
    const sampler = (async () => {
      while (sampling.on) observedMax = Math.max(observedMax, await countActive());
    })();
    const claimer = async (replica: PostgresStore, index: number): Promise<number> => {
      let claimedHere = 0;
      const now = minute(0, 100);
      for (;;) {
        const claimed = await claimDue(replica, now, {
          replicaId: `replica-${index}`,
          limit: 2,
          maxConcurrentRuns: budget,
        });
        // Checked right after every claim, while the other replicas keep going.
        expect(await countActive()).toBeLessThanOrEqual(budget);
        if (claimed.length === 0) {
          if ((await count("'queued'")) === 0) return claimedHere;
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        claimedHere += claimed.length;
        for (const one of claimed) {
          await recordLaunch(replica, one, now);
          await recordCompletion(replica, one.run.id, { status: "succeeded" }, now);
        }
      }
    };
    let claimsByReplica: number[];
    try {
      claimsByReplica = await Promise.all(stores.map(claimer));
    } finally {
      sampling.on = false;
      await sampler;
    }
    expect(observedMax).toBeGreaterThan(0);
    expect(observedMax).toBeLessThanOrEqual(budget);
    expect(claimsByReplica.reduce((a, b) => a + b, 0)).toBe(runs.length);
    expect(claimsByReplica.filter((n) => n > 0).length).toBeGreaterThan(1);
    for (const run of runs) {
      const [stored] = await ledger(store, run.taskId);
      expect(stored).toMatchObject({ status: "succeeded", attempt: 1 });
    }
  });
});
