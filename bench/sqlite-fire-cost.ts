// A/B harness: the SQLite store's own cost of a burst of once tasks (admission 500, claim 200, launch+verdict
// in one changeRuns batch), WAL bytes per fire (checkpoints off) and CPU per fire. Usage: tsx fire-cost.mts ROOT N
import Database from "better-sqlite3";
import { statSync, rmSync } from "node:fs";
const root = process.argv[2]!;
const n = Number(process.argv[3] ?? 10000);
const { SqliteStore } = await import(`${root}/src/adapters/storage/sqlite/sqlite-store.ts`);
const { migrateSqlite } = await import(`${root}/src/adapters/storage/sqlite/sqlite-migrations.ts`);
const { createIdGenerator } = await import(`${root}/src/adapters/storage/shared/time-ordered-id.ts`);
const F = await import(`${root}/test/contract/fixtures.ts`);
const S = await import(`${root}/test/contract/store-steps.ts`);
const { applyLaunchOutcome, completeRun } = await import(`${root}/src/domain/run-transitions.ts`);
const path = `/tmp/i30sqlite-fire-${process.pid}.db`;
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("wal_autocheckpoint = 0");
db.pragma("foreign_keys = ON");
if (process.env.CACHE) db.pragma(`cache_size = ${process.env.CACHE}`);
if (process.env.MMAP) db.pragma(`mmap_size = ${process.env.MMAP}`);
migrateSqlite(db);
const store = new SqliteStore(db, { newId: createIdGenerator() });
const due = F.minute(1);
const tasks = Array.from({ length: n }, (_, i) => F.buildTask({ schedule: F.onceAt(due), title: `t${i}` }));
db.transaction(() => {})();
for (const t of tasks) await store.tasks.insertTask(t);
db.pragma("wal_checkpoint(TRUNCATE)");
const wal = () => { try { return statSync(`${path}-wal`).size; } catch { return 0; } };
const w0 = wal();
const c0 = process.cpuUsage();
const t0 = performance.now();
const now = F.minute(1, 5);
let fired = 0;
const phase = { admit: 0, claim: 0, write: 0 };
const cpuSince = (c: NodeJS.CpuUsage): number => { const d = process.cpuUsage(c); return d.user + d.system; };
let transactions = 0;
for (;;) {
  let c = process.cpuUsage();
  const report = await S.admitDue(store, now, 500);
  phase.admit += cpuSince(c);
  transactions++;
  c = process.cpuUsage();
  const claimed = await S.claimDue(store, now, { limit: 200, maxConcurrentRuns: 100000 });
  phase.claim += cpuSince(c);
  transactions++;
  if (claimed.length === 0 && (report.admitted?.length ?? report.tasks ?? 1) === 0) break;
  if (claimed.length === 0) { if (fired >= n) break; continue; }
  const reqs = claimed.flatMap((c: any) => [
    { id: c.run.id, token: c.run.claimToken, decide: (run: any, task: any) => applyLaunchOutcome(run, { kind: "launched", targetRunId: null }, { now, task, policy: S.POLICY }) },
    { id: c.run.id, decide: (run: any, task: any) => completeRun(run, { status: "succeeded", result: null }, { now, task }) },
  ]);
  c = process.cpuUsage();
  const results = await store.runs.changeRuns(reqs);
  phase.write += cpuSince(c);
  transactions++;
  for (const r of results) if (r.kind !== "changed") throw new Error(JSON.stringify(r));
  fired += claimed.length;
  if (fired >= n) break;
}
const cpu = process.cpuUsage(c0);
const ms = performance.now() - t0;
const w1 = wal();
const done = db.prepare("SELECT count(*) FROM runs WHERE status = 'succeeded'").pluck().get();
console.log(JSON.stringify({ root, fired, done, walPerFire: Math.round((w1 - w0) / fired), cpuUsPerFire: Math.round((cpu.user + cpu.system) / fired), wallMs: Math.round(ms), transactions, usPerFire: { admit: Math.round(phase.admit / fired), claim: Math.round(phase.claim / fired), write: Math.round(phase.write / fired) } }));
db.close();
rmSync(path, { force: true }); rmSync(`${path}-wal`, { force: true }); rmSync(`${path}-shm`, { force: true });
