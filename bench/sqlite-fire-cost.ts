/**
 * What the SQLite store itself costs per fire (docs/storage.md#one-fire-on-sqlite-its-statements-and-its-wal):
 * N once tasks due at one instant, driven through the store's ports as the runtime drives them (admission
 * batches of 500, claims of 200, each claim's launches and verdicts in one `changeRuns` batch), on a file
 * whose checkpoints are off, so the WAL's growth is every byte the fires wrote (deterministic, unlike the
 * CPU, which is given per phase). `root` is a checkout of punctual, so that two versions of the store can be
 * compared in alternated runs: `tsx bench/sqlite-fire-cost.ts <root> [N] [--pages]`. With `--pages` it also
 * says which b-tree each WAL frame wrote, per phase (frames per 1,000 fires; a page is looked up in `dbstat`
 * right after its phase, so a page freed later still counts where it was written; far slower, same WAL).
 * With `--fused`, each admission (of 200 tasks, the claim's size, as the runtime sizes a fusing
 * admission to its room) is given the claim as the runtime gives it while it has room
 * (docs/storage.md#fused-admit-and-claim-on-sqlite): a store that fuses inserts the runs claimed, and the
 * claim that follows (as the runtime's does) finds the rest; a store that does not queues them all.
 */
import { readFileSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import type * as StoreModule from "../src/adapters/storage/sqlite/sqlite-store.js";
import type * as MigrationsModule from "../src/adapters/storage/sqlite/sqlite-migrations.js";
import type * as IdsModule from "../src/adapters/storage/shared/time-ordered-id.js";
import type * as FixturesModule from "../test/contract/fixtures.js";
import type * as StepsModule from "../test/contract/store-steps.js";
import type * as TransitionsModule from "../src/domain/run-transitions.js";

type Module<T> = Promise<T>;

const root = resolve(process.argv[2] ?? ".");
const fires = Number(process.argv[3] ?? 10_000);
const pages = process.argv.includes("--pages");
const fusing = process.argv.includes("--fused");
const from = <T>(path: string): Module<T> => import(`${root}/${path}`) as Module<T>;

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

const path = `/tmp/punctual-sqlite-fire-cost-${String(process.pid)}.db`;
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0");
db.pragma("foreign_keys = ON");
migrateSqlite(db);
const store = new SqliteStore(db, { newId: createIdGenerator() });
const due = fixtures.minute(1);
for (let i = 0; i < fires; i++) {
  await store.tasks.insertTask(
    fixtures.buildTask({ schedule: fixtures.onceAt(due), title: `t${String(i)}` }),
  );
}
db.pragma("wal_checkpoint(TRUNCATE)");
const walBytes = (): number => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};
const cpuSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return used.user + used.system;
};

/** WAL frames written since the last call, counted by phase and by the b-tree their page belongs to. */
const framesByTree = new Map<string, number>();
let walRead = 0;
const countFrames = (phaseName: string): void => {
  if (!pages) return;
  const wal = readFileSync(`${path}-wal`);
  if (wal.length < 32) return;
  const pageSize = wal.readUInt32BE(8);
  const trees = new Map<number, string>();
  const rows = db.prepare("SELECT name, pageno FROM dbstat").all() as {
    name: string;
    pageno: number;
  }[];
  for (const row of rows) trees.set(row.pageno, row.name);
  for (
    walRead = Math.max(walRead, 32);
    walRead + 24 + pageSize <= wal.length;
    walRead += 24 + pageSize
  ) {
    const key = `${phaseName} ${trees.get(wal.readUInt32BE(walRead)) ?? "(freed since)"}`;
    framesByTree.set(key, (framesByTree.get(key) ?? 0) + 1);
  }
};

const walBefore = walBytes();
walRead = walBefore;
const cpuBefore = process.cpuUsage();
const now = fixtures.minute(1, 5);
const phase = { admit: 0, claim: 0, write: 0 };
let fired = 0;
let transactions = 0;
while (fired < fires) {
  let start = process.cpuUsage();
  const admitted = fusing
    ? await steps.admitAndClaim(store, now, {
        batch: 200,
        limit: 200,
        maxConcurrentRuns: 1_000_000,
      })
    : await steps.admitDue(store, now, 500);
  phase.admit += cpuSince(start);
  countFrames("admit");
  start = process.cpuUsage();
  const claimed = [
    ...(admitted.claimed ?? []),
    ...(await steps.claimDue(store, now, { limit: 200, maxConcurrentRuns: 1_000_000 })),
  ];
  phase.claim += cpuSince(start);
  countFrames("claim");
  transactions += 2;
  if (claimed.length === 0) continue;
  start = process.cpuUsage();
  const results = await store.runs.changeRuns(
    claimed.flatMap(({ run }) => [
      {
        id: run.id,
        ...(run.claimToken === null ? {} : { token: run.claimToken }),
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
  phase.write += cpuSince(start);
  countFrames("write");
  transactions++;
  if (results.some((result) => result.kind !== "changed")) throw new Error("a write was refused");
  fired += claimed.length;
}
const perFire = (us: number): number => Math.round(us / fired);
console.log(
  JSON.stringify({
    root,
    fused: fusing,
    fired,
    walPerFire: Math.round((walBytes() - walBefore) / fired),
    cpuUsPerFire: perFire(cpuSince(cpuBefore)),
    usPerFire: {
      admit: perFire(phase.admit),
      claim: perFire(phase.claim),
      write: perFire(phase.write),
    },
    transactions,
  }),
);
for (const [key, frames] of [...framesByTree].sort()) {
  console.log(`${key.padEnd(40)} ${((frames * 1000) / fired).toFixed(1)}`);
}
db.close();
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
