/**
 * Two replicas on the real PostgreSQL: one admits more due runs than it claims, and the other, which
 * admits nothing itself (so its passes claim nothing), is woken by the admitter's `queued` notification
 * and claims the rest (docs/operations.md#which-replica-runs-what). Without the notification it would
 * claim only at a freed slot, and the admitter's handlers free none while the test waits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/adapters/storage/postgres/postgres-store.js";
import { createScheduler } from "../../src/index.js";
import type { HandlerContext, Scheduler, StoreFactory } from "../../src/index.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";

const runnable = await raceTestsRunnable("test/race/postgres-queued-wake.test.ts");

const TASKS = 6;
/** The admitter launches this many at most; the rest stay queued for whoever claims them. */
const ADMITTER_IN_FLIGHT = 2;

describe.skipIf(!runnable)("postgres: an admission that queued more than it claims", () => {
  let database: PostgresTestDatabase;

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it("wakes an idle replica, which claims the runs the admitter left queued", async () => {
    const schema = database.freshSchema();
    const url = database.url!;
    const store = (notifications: boolean): StoreFactory => ({
      open: (options) => openPostgresStore({ ...options, url, schema, notifications, poolSize: 4 }),
    });
    // Handlers hold their runs until the end: no verdict frees a slot (whose notification would also
    // wake the sleeper) while the test waits.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran = new Map<string, string[]>();
    let sleeperRan: () => void = () => undefined;
    const sleeperClaimed = new Promise<void>((resolve) => {
      sleeperRan = resolve;
    });
    const hold =
      (replica: string) =>
      async ({ run }: HandlerContext): Promise<void> => {
        ran.set(replica, [...(ran.get(replica) ?? []), run.id]);
        if (replica === "sleeper") sleeperRan();
        await held;
      };
    const policy = { maxConcurrentRuns: TASKS * 2 };
    const schedulers: Scheduler[] = [];
    try {
      const sleeper = createScheduler({
        store: store(true),
        handlers: { hold: hold("sleeper") },
        policy,
        // It admits nothing and so claims nothing at a pass (a pass claims after each admission batch):
        // only a claim wake-up makes it claim, whenever its passes happen.
        coordinator: { tickMs: 3_600_000, sweepMs: 3_600_000, admissionRounds: 0 },
        replicaId: "sleeper",
      });
      schedulers.push(sleeper);
      await sleeper.start();
      // Created without notifications, so the sleeper never hears of the tasks themselves.
      const creator = createScheduler({ store: store(false), handlers: { hold: hold("creator") } });
      schedulers.push(creator);
      // Due shortly (a once task cannot be made due already): the admitter's first pass, if it comes
      // earlier, sleeps until then.
      const runAt = new Date(Date.now() + 500).toISOString();
      await creator.tasks.createMany(
        Array.from({ length: TASKS }, (_, i) => ({
          title: `held ${String(i)}`,
          schedule: { type: "once", run_at: runAt },
          target: { kind: "handler", name: "hold" },
        })),
      );
      // The admitter admits all six and claims two: it tells the other replicas of the four left.
      const admitter = createScheduler({
        store: store(true),
        handlers: { hold: hold("admitter") },
        policy,
        coordinator: {
          maxInFlight: ADMITTER_IN_FLIGHT,
          claimBatch: ADMITTER_IN_FLIGHT,
          tickMs: 3_600_000,
        },
        replicaId: "admitter",
      });
      schedulers.push(admitter);
      await admitter.start();
      await sleeperClaimed;
      expect(ran.get("admitter")?.length ?? 0).toBeLessThanOrEqual(ADMITTER_IN_FLIGHT);
      expect(ran.get("sleeper")?.length ?? 0).toBeGreaterThan(0);
      expect(ran.get("creator")).toBeUndefined();
    } finally {
      release();
      for (const scheduler of schedulers.reverse()) await scheduler.stop();
    }
  }, 20_000);
});
