/**
 * Two versions of the SQLite store side by side in one process, alternated (docs/benchmarks.md): the
 * CPU per fire of each, measured in chunks taken in turn, so that both see the same machine load (on a
 * shared machine, separate runs of `bench/sqlite-fire-cost.ts` differ by more than a change of 10%).
 * Each side fires N once tasks due at one instant as the runtime drives a burst: admissions of 250 given
 * the claim (docs/storage.md#fused-admit-and-claim-on-sqlite), the claim that follows, and each batch's
 * launches and verdicts in one `changeRuns`, the launch answer carrying the run as claimed
 * (`RunChangeRequest.expect`, as the runtime's write-behind sends it). `tsx bench/sqlite-store-ab.ts <rootA> <rootB> [N] [chunk]
 * [rounds]` (roots: checkouts of punctual, e.g. `git archive` of a commit; defaults 10,000, 1,000, 2).
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import type * as StoreModule from "../src/adapters/storage/sqlite/sqlite-store.js";
import type * as MigrationsModule from "../src/adapters/storage/sqlite/sqlite-migrations.js";
import type * as IdsModule from "../src/adapters/storage/shared/time-ordered-id.js";
import type * as FixturesModule from "../test/contract/fixtures.js";
import type * as StepsModule from "../test/contract/store-steps.js";
import type * as TransitionsModule from "../src/domain/run-transitions.js";
import type * as RunChangeModule from "../src/domain/run-change.js";

const roots = [resolve(process.argv[2] ?? "."), resolve(process.argv[3] ?? ".")] as const;
const fires = Number(process.argv[4] ?? 10_000);
const chunk = Number(process.argv[5] ?? 1_000);
const rounds = Number(process.argv[6] ?? 2);
const BATCH = 250;

interface Side {
  /** Fires `n` due runs; CPU µs per fire, in all and in the launches' and verdicts' writes. */
  fire(n: number): Promise<{ all: number; writes: number }>;
  /** Inserts `n` once tasks due at one instant. */
  load(n: number): Promise<void>;
  close(): Promise<void>;
}

async function side(root: string, tag: string): Promise<Side> {
  const from = <T>(path: string): Promise<T> => import(`${root}/${path}`) as Promise<T>;
  const { SqliteStore } = await from<typeof StoreModule>(
    "src/adapters/storage/sqlite/sqlite-store.ts",
  );
  const { migrateSqlite } = await from<typeof MigrationsModule>(
    "src/adapters/storage/sqlite/sqlite-migrations.ts",
  );
  const { createIdGenerator } = await from<typeof IdsModule>(
    "src/adapters/storage/shared/time-ordered-id.ts",
  );
  const fixtures = await from<typeof FixturesModule>("test/contract/fixtures.ts");
  const steps = await from<typeof StepsModule>("test/contract/store-steps.ts");
  const { applyLaunchOutcome, completeRun } = await from<typeof TransitionsModule>(
    "src/domain/run-transitions.ts",
  );
  const { runTaskContext } = await from<typeof RunChangeModule>("src/domain/run-change.ts");
  const path = `/tmp/punctual-sqlite-store-ab-${tag}-${String(process.pid)}.db`;
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 10000");
  db.pragma("foreign_keys = ON");
  migrateSqlite(db);
  const store = new SqliteStore(db, { newId: createIdGenerator() });
  const now = fixtures.minute(1, 5);
  const options = { limit: BATCH, maxConcurrentRuns: 1_000_000 };
  return {
    async fire(n) {
      let fired = 0;
      let writes = 0;
      const start = process.cpuUsage();
      while (fired < n) {
        const admitted = await steps.admitAndClaim(store, now, { ...options, batch: BATCH });
        const claimed = [
          ...(admitted.claimed ?? []),
          ...(await steps.claimDue(store, now, options)),
        ];
        if (claimed.length === 0) throw new Error("nothing left due: load more tasks");
        const writing = process.cpuUsage();
        const results = await store.runs.changeRuns(
          claimed.flatMap(({ run, task }) => [
            {
              id: run.id,
              ...(run.claimToken === null ? {} : { token: run.claimToken }),
              // What the runtime's write-behind sends: the run as claimed (a store may take it).
              expect: { run, task: runTaskContext(task), taskVersion: task.version },
              decide: (current, task) =>
                applyLaunchOutcome(
                  current,
                  { kind: "launched", targetRunId: null },
                  { now, task, policy: steps.POLICY },
                ),
            },
            {
              id: run.id,
              decide: (current, task) =>
                completeRun(current, { status: "succeeded", result: null }, { now, task }),
            },
          ]),
        );
        const written = process.cpuUsage(writing);
        writes += written.user + written.system;
        if (results.some((r) => r.kind !== "changed")) throw new Error("a write was refused");
        fired += claimed.length;
      }
      const used = process.cpuUsage(start);
      return { all: (used.user + used.system) / fired, writes: writes / fired };
    },
    async load(n) {
      const due = fixtures.minute(1);
      for (let i = 0; i < n; i++) {
        await store.tasks.insertTask(
          fixtures.buildTask({ schedule: fixtures.onceAt(due), title: `t${String(i)}` }),
        );
      }
      db.pragma("wal_checkpoint(TRUNCATE)");
    },
    async close() {
      await store.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    },
  };
}

const sides = [await side(roots[0], "a"), await side(roots[1], "b")] as const;
const perFire: [number[], number[]] = [[], []];
const writesPerFire: [number[], number[]] = [[], []];
for (let round = 0; round < rounds; round++) {
  for (const s of sides) await s.load(fires);
  for (let done = 0; done < fires; done += chunk) {
    // Each chunk's first side alternates, so neither always runs right after the other.
    const order = (done / chunk) % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
    for (const i of order) {
      const cost = await sides[i].fire(chunk);
      perFire[i].push(cost.all);
      writesPerFire[i].push(cost.writes);
    }
  }
}
const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? NaN;
for (const i of [0, 1] as const) {
  console.log(
    JSON.stringify({
      root: roots[i],
      cpuUsPerFireMedian: Math.round(median(perFire[i]) * 10) / 10,
      writesUsPerFireMedian: Math.round(median(writesPerFire[i]) * 10) / 10,
      chunks: perFire[i].length,
    }),
  );
}
for (const s of sides) await s.close();
