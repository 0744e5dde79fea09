/**
 * `npx tsx bench/fire-profile.ts [tasks] [replicas] [budget]`: where the PostgreSQL backends' time goes in
 * one burst (docs/benchmarks.md): the set-up of bench/fire-wal.ts (the library, replicas in this process, N
 * once tasks due at one instant), with `track_functions = 'pl'` on the burst's database. Prints the
 * backends' CPU per 1,000 fires (read from /proc, so the server must be local), each trigger function's
 * calls and time (`pg_stat_user_functions`), and each statement the replicas sent: count per 1,000 fires
 * and time from send to answer (client side, so it includes the wait for a lock or the CPU).
 */
import { randomBytes } from "node:crypto";
import { queryOnce } from "./lib/databases.js";
import type { Scheduler } from "../src/index.js";
import { createDueBurst, startBurstReplicas } from "./lib/burst-replicas.js";
import { processCpuSeconds } from "./lib/proc-cpu.js";
import {
  countStatements,
  roundTrips,
  statementTimings,
  timeStatements,
} from "./lib/statement-timing.js";

const TASKS = Number(process.argv[2] ?? 2000);
const REPLICAS = Number(process.argv[3] ?? 2);
const BUDGET = Number(process.argv[4] ?? 500);
const ADMIN =
  process.env["PUNCTUAL_BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

countStatements();
timeStatements();
const name = `punctual_firewal_${randomBytes(4).toString("hex")}`;
await queryOnce(ADMIN, `CREATE DATABASE ${name}`);
await queryOnce(ADMIN, `ALTER DATABASE ${name} SET track_functions = 'pl'`);
// With FIRE_PROFILE_EXPLAIN=1, each statement's plan and duration go to the server's log (auto_explain),
// the statements the triggers run included: for a scratch look only, it slows every statement.
if (process.env["FIRE_PROFILE_EXPLAIN"] === "1") {
  for (const setting of [
    "session_preload_libraries = 'auto_explain'",
    "auto_explain.log_min_duration = 0",
    "auto_explain.log_analyze = on",
    "auto_explain.log_timing = off",
    "auto_explain.log_nested_statements = on",
    "auto_explain.log_triggers = on",
  ]) {
    await queryOnce(ADMIN, `ALTER DATABASE ${name} SET ${setting}`);
  }
}
const url = new URL(ADMIN);
url.pathname = `/${name}`;
const db = url.toString();
const schedulers: Scheduler[] = [];
try {
  schedulers.push(...(await startBurstReplicas(db, REPLICAS, BUDGET)));
  const dueAt = await createDueBurst(schedulers[0]!, TASKS);
  await new Promise((resolve) => setTimeout(resolve, dueAt - 300 - Date.now()));
  const cpuBefore = await backendCpu(db);
  const ownBefore = process.cpuUsage();
  const timingsBefore = new Map(statementTimings().map((t) => [t.statement, t]));
  await queryOnce(db, "SELECT pg_stat_reset()");
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
  const own = process.cpuUsage(ownBefore);
  const cpuAfter = await backendCpu(db);
  let cpu = 0;
  for (const [pid, seconds] of cpuAfter) cpu += seconds - (cpuBefore.get(pid) ?? 0);
  const per1000 = (n: number) => ((n * 1000) / TASKS).toFixed(1);
  console.log(
    `${TASKS} fires, ${REPLICAS} replica(s), budget ${BUDGET}: backends ${((cpu * 1000) / TASKS).toFixed(3)} s CPU per 1,000 fires, this process (the replicas) ${((own.user + own.system) / 1000 / TASKS).toFixed(3)} s`,
  );
  const statements = tripsAfter.statements - tripsBefore.statements - polls;
  const transactions = tripsAfter.transactions - tripsBefore.transactions;
  console.log(
    `per 1,000 fires: ${per1000(statements)} statements, ${per1000(transactions)} transactions`,
  );
  // A backend reports its functions' figures at most once a second, and when it exits: stop first.
  await Promise.all(schedulers.map((s) => s.stop()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const functions = await queryOnce(
    db,
    "SELECT funcname, calls::int, total_time, self_time FROM pg_stat_user_functions ORDER BY total_time DESC",
  );
  console.log("trigger functions (ms per 1,000 fires: total / self; calls per 1,000 fires):");
  for (const f of functions) {
    console.log(
      `  ${String(f["funcname"]).padEnd(36)} ${per1000(Number(f["total_time"])).padStart(8)} / ${per1000(Number(f["self_time"])).padStart(8)}  ${per1000(Number(f["calls"])).padStart(7)}`,
    );
  }
  console.log("statements (per 1,000 fires: count, ms from send to answer; mean ms):");
  for (const t of statementTimings()) {
    const before = timingsBefore.get(t.statement);
    const count = t.count - (before?.count ?? 0);
    const ms = t.totalMs - (before?.totalMs ?? 0);
    if (count === 0 || t.statement.includes("count(*) FILTER")) continue;
    console.log(
      `  ${per1000(count).padStart(6)} ${per1000(ms).padStart(8)} ${(ms / count).toFixed(2).padStart(7)}  ${t.statement}`,
    );
  }
} finally {
  await Promise.all(schedulers.map((s) => s.stop()));
  await queryOnce(ADMIN, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** The CPU seconds of each client backend of the database but this reading's own. */
async function backendCpu(url: string): Promise<Map<number, number>> {
  const rows = await queryOnce(
    url,
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
  );
  const cpu = new Map<number, number>();
  for (const row of rows) {
    const seconds = processCpuSeconds(Number(row["pid"]));
    if (seconds !== null) cpu.set(Number(row["pid"]), seconds);
  }
  return cpu;
}
