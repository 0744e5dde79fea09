/**
 * `npx tsx bench/fire-wal.ts [tasks] [replicas] [budget]`: the WAL one fire writes on PostgreSQL, by table
 * (docs/storage.md#the-statements-of-one-fire-and-their-wal). The library as a user runs it
 * (`createScheduler`, replicas in this process, one no-op handler, `maxConcurrentRuns` 500 unless given), N once tasks
 * made by `tasks.createMany` and due at one instant, in a database of its own; a checkpoint before the
 * instant. Every WAL record from the due instant to the last verdict is read with `pg_waldump` (the server
 * must be local, this process able to read its `pg_wal`), and only this database's relations are counted,
 * full-page images apart: other work on a shared server does not count, so the figure holds from one run.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { queryOnce } from "./lib/databases.js";
import type { Scheduler } from "../src/index.js";
import { createDueBurst, startBurstReplicas } from "./lib/burst-replicas.js";
import { countStatements, roundTrips } from "./lib/statement-timing.js";

const TASKS = Number(process.argv[2] ?? 2000);
const REPLICAS = Number(process.argv[3] ?? 2);
const BUDGET = Number(process.argv[4] ?? 500);
const ADMIN =
  process.env["PUNCTUAL_BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";
const WALDUMP = process.env["PG_WALDUMP"] ?? "/usr/lib/postgresql/15/bin/pg_waldump";

countStatements();
const name = `punctual_firewal_${randomBytes(4).toString("hex")}`;
await queryOnce(ADMIN, `CREATE DATABASE ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
const db = url.toString();
const schedulers: Scheduler[] = [];
try {
  schedulers.push(...(await startBurstReplicas(db, REPLICAS, BUDGET)));
  const dueAt = await createDueBurst(schedulers[0]!, TASKS);
  await queryOnce(db, "CHECKPOINT");
  const [dbRow] = await queryOnce(
    db,
    "SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()",
  );
  await new Promise((resolve) => setTimeout(resolve, dueAt - 300 - Date.now()));
  const [start] = await queryOnce(db, "SELECT pg_current_wal_insert_lsn()::text AS lsn");
  const tripsBefore = roundTrips();
  let polls = 0;
  // Until every run has its verdict.
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    polls++;
    const [row] = await queryOnce(
      db,
      "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM punctual.runs",
    );
    if (Number(row!["done"]) >= TASKS) break;
  }
  const tripsAfter = roundTrips();
  const [end] = await queryOnce(db, "SELECT pg_current_wal_insert_lsn()::text AS lsn");
  const rels = new Map(
    (
      await queryOnce(
        db,
        "SELECT pg_relation_filenode(c.oid)::text AS node, c.relname FROM pg_class c" +
          " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')" +
          " AND pg_relation_filenode(c.oid) IS NOT NULL",
      )
    ).map((r) => [String(r["node"]), String(r["relname"])]),
  );
  const [dir] = await queryOnce(db, "SHOW data_directory");
  const dump = execFileSync(
    WALDUMP,
    [
      "-p",
      `${String(dir!["data_directory"])}/pg_wal`,
      "-s",
      String(start!["lsn"]),
      "-e",
      String(end!["lsn"]),
    ],
    { maxBuffer: 1 << 30, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  const byTable = new Map<string, number>();
  const byRecord = new Map<string, { n: number; bytes: number }>();
  let fpi = 0;
  let total = 0;
  for (const line of dump.split("\n")) {
    const m = /rmgr: (\S+)\s+len \(rec\/tot\):\s+(\d+)\/\s*(\d+), tx:.*desc: (\S+)/.exec(line);
    if (m === null) continue;
    const rel = / rel \d+\/(\d+)\/(\d+)/.exec(line);
    if (rel === null || rel[1] !== String(dbRow!["oid"])) continue;
    const relname = rels.get(rel[2]!) ?? `other(${rel[2]})`;
    const rec = Number(m[2]);
    fpi += Number(m[3]) - rec;
    total += rec;
    byTable.set(relname, (byTable.get(relname) ?? 0) + rec);
    const key = `${m[1]}/${m[4]} ${relname}`;
    const entry = byRecord.get(key) ?? { n: 0, bytes: 0 };
    entry.n++;
    entry.bytes += rec;
    byRecord.set(key, entry);
  }
  const per = (bytes: number) => (bytes / TASKS).toFixed(0);
  console.log(
    `${TASKS} fires, ${REPLICAS} replica(s), budget ${BUDGET}: ${per(total)} B/fire of this database's relations, full-page images apart (+${per(fpi)})`,
  );
  // The replicas' statements and transactions (this script's polls apart), heartbeats included.
  const statements = tripsAfter.statements - tripsBefore.statements - polls;
  const transactions = tripsAfter.transactions - tripsBefore.transactions;
  console.log(
    `per 1,000 fires: ${((statements * 1000) / TASKS).toFixed(1)} statements, ${((transactions * 1000) / TASKS).toFixed(1)} transactions`,
  );
  for (const [rel, bytes] of [...byTable].sort((a, b) => b[1] - a[1])) {
    console.log(`  ${rel.padEnd(36)} ${per(bytes).padStart(6)}`);
  }
  console.log("records:");
  for (const [key, { n, bytes }] of [...byRecord]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, 25)) {
    console.log(`  ${(n / TASKS).toFixed(2).padStart(6)}/fire ${per(bytes).padStart(6)} B  ${key}`);
  }
} finally {
  await Promise.all(schedulers.map((s) => s.stop()));
  await queryOnce(ADMIN, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
