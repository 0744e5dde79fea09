/**
 * `npx tsx bench/sqlite-burst-timeline.ts [tasks] [--create] [--wal-at=frames] [--json=file]`: where a SQLite burst's wall time goes
 * (docs/benchmarks.md). One scheduler in this process on a fresh SQLite file with a no-op handler and the
 * bench's budget (500); `tasks` once tasks due at one instant, made through a second, unstarted scheduler
 * on the same file (another connection, as the bench's creating process; `tasks.createMany` by 1,000, or with `--create` `tasks.create` 32 in flight). From the instant it records:
 * when the first admission began and each one's duration, every write transaction's duration and the
 * WAL's frames and checkpointed frames around it (read from the `-shm` file's header), every statement's
 * time by its text, garbage collection pauses, the event loop's delay, and when each handler started.
 * It prints where the time from the instant to the last launch went: SQLite (statements and commits),
 * everything else on the main thread (our JavaScript), garbage collection, and the time before the first
 * admission.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver, monitorEventLoopDelay, performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { createScheduler, sqlite } from "../src/index.js";

const TASKS = Number(process.argv[2] ?? 10_000);
const jsonOut = process.argv.find((a) => a.startsWith("--json="))?.slice(7);

// Statement and transaction timing: wrapped once on the prototypes, before the stores open.
const statementMs = new Map<string, { count: number; ms: number }>();
let inStatement = 0;
let statementTotal = 0;
const probe = new Database(":memory:");
const statementProto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<
  string,
  (...args: unknown[]) => unknown
>;
probe.close();
// With TIMELINE_PLAIN=1 (under a CPU profile) statements are not wrapped: SQLite's time stays in the
// store's frames.
const plain = process.env["TIMELINE_PLAIN"] === "1";
for (const method of plain ? [] : ["run", "all", "get", "iterate"]) {
  const original = statementProto[method]!;
  statementProto[method] = function (this: { source: string }, ...args: unknown[]) {
    if (inStatement > 0) return original.apply(this, args);
    inStatement++;
    const t0 = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const ms = performance.now() - t0;
      inStatement--;
      statementTotal += ms;
      let entry = statementMs.get(this.source);
      if (entry === undefined) {
        entry = { count: 0, ms: 0 };
        statementMs.set(this.source, entry);
      }
      entry.count++;
      entry.ms += ms;
    }
  };
}

interface TxRecord {
  at: number;
  ms: number;
  statementsMs: number;
  mxFrame: number;
  backfill: number;
}
const transactions: TxRecord[] = [];
let shmPath = "";
const shmBuffer = Buffer.alloc(136);
function walState(): { mxFrame: number; backfill: number } {
  if (shmPath === "") return { mxFrame: -1, backfill: -1 };
  const fd = openSync(shmPath, "r");
  try {
    readSync(fd, shmBuffer, 0, 136, 0);
  } finally {
    closeSync(fd);
  }
  // WalIndexHdr.mxFrame at 16, WalCkptInfo.nBackfill at 96 (native byte order).
  return { mxFrame: shmBuffer.readUInt32LE(16), backfill: shmBuffer.readUInt32LE(96) };
}
const dbProto = Database.prototype as unknown as {
  transaction: (fn: (...a: unknown[]) => unknown) => unknown;
};
const originalTransaction = dbProto.transaction;
dbProto.transaction = function (this: unknown, fn: (...a: unknown[]) => unknown) {
  const tx = originalTransaction.call(this, fn) as ((...a: unknown[]) => unknown) &
    Record<string, (...a: unknown[]) => unknown>;
  const immediate = tx["immediate"]!;
  const wrapped = (...args: unknown[]) => {
    const t0 = performance.now();
    const s0 = statementTotal;
    try {
      return immediate(...args);
    } finally {
      const ms = performance.now() - t0;
      const wal = measuring ? walState() : { mxFrame: -1, backfill: -1 };
      transactions.push({ at: t0, ms, statementsMs: statementTotal - s0, ...wal });
    }
  };
  return Object.assign((...args: unknown[]) => tx(...args), {
    default: tx["default"],
    deferred: tx["deferred"],
    immediate: wrapped,
    exclusive: tx["exclusive"],
  });
};

const gcPauses: { at: number; ms: number; kind: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcPauses.push({
      at: e.startTime,
      ms: e.duration,
      kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0,
    });
  }
}).observe({ entryTypes: ["gc"] });

const folder = mkdtempSync(join(tmpdir(), "punctual-timeline-"));
const path = join(folder, "burst.db");
shmPath = `${path}-shm`;
let measuring = false;
const starts = new Float64Array(TASKS);
let started = 0;
const logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (o: object, m?: string) => {
    console.error("warn", m, JSON.stringify(o));
  },
  error: (o: object, m?: string) => {
    console.error("error", m, o);
  },
};
const scheduler = createScheduler({
  store: sqlite(path),
  handlers: {
    noop: () => {
      if (started < TASKS) starts[started++] = performance.now();
    },
  },
  policy: { maxConcurrentRuns: 500 },
  coordinator: { shutdownTimeoutMs: 2000 },
  logger,
});
const creator = createScheduler({ store: sqlite(path), logger });
try {
  await scheduler.start();
  const rt = await scheduler.runtime();
  const admissions: { at: number; ms: number; tasks: number }[] = [];
  rt.events.on("coordinator:admission", ({ durationMs, tasks }) => {
    if (measuring) admissions.push({ at: performance.now() - durationMs, ms: durationMs, tasks });
  });
  const lead = 3000 + TASKS / 5;
  const dueAt = Math.ceil((Date.now() + lead) / 1000) * 1000;
  const inputs = Array.from({ length: TASKS }, () => ({
    title: "timeline",
    schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
    target: { kind: "handler", name: "noop" },
  }));
  const createMany = (
    creator.tasks as unknown as { createMany: (i: readonly unknown[]) => Promise<unknown> }
  ).createMany.bind(creator.tasks);
  if (process.argv.includes("--create")) {
    // One by one, 32 in flight (the bench's `tasks.create` ×32 row): a transaction each.
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < inputs.length) await creator.tasks.create(inputs[next++]);
      }),
    );
  } else {
    for (let i = 0; i < inputs.length; i += 1000) await createMany(inputs.slice(i, i + 1000));
  }
  const walAt = Number(process.argv.find((a) => a.startsWith("--wal-at="))?.slice(9) ?? 0);
  if (walAt > 0) {
    // Filler pages in a table of their own until the WAL holds `walAt` frames since its last
    // checkpoint: where the burst starts from after a creation that left the WAL that full.
    const filler = new Database(path);
    filler.pragma("wal_autocheckpoint = 0");
    filler.exec("CREATE TABLE IF NOT EXISTS timeline_filler (b BLOB)");
    const insert = filler.prepare("INSERT INTO timeline_filler (b) VALUES (randomblob(3000))");
    while (walState().mxFrame < walAt)
      filler.transaction(() => {
        for (let i = 0; i < 50; i++) insert.run();
      })();
    filler.close();
  }
  if (Date.now() > dueAt - 300) throw new Error("creation overran the due instant");
  const walAtInstant = walState();
  await new Promise((resolve) => setTimeout(resolve, dueAt - 200 - Date.now()));
  const loop = monitorEventLoopDelay({ resolution: 5 });
  measuring = true;
  transactions.length = 0;
  gcPauses.length = 0;
  statementMs.clear();
  const cpu0 = process.cpuUsage();
  // performance.now() of the due instant.
  const instant = performance.now() + (dueAt - Date.now());
  loop.enable();
  while (started < TASKS) await new Promise((resolve) => setTimeout(resolve, 20));
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  const last = starts[TASKS - 1]!;
  const window = (at: number) => at >= instant && at <= last;
  const firstAdmission = admissions[0]?.at ?? Number.NaN;
  const inWindow = transactions.filter((t) => window(t.at));
  const txMs = inWindow.reduce((s, t) => s + t.ms, 0);
  const txStatementsMs = inWindow.reduce((s, t) => s + t.statementsMs, 0);
  const gcIn = gcPauses.filter((g) => window(g.at));
  const gcMs = gcIn.reduce((s, g) => s + g.ms, 0);
  const span = last - instant;
  const busyFromFirst = last - firstAdmission;
  const f = (n: number) => n.toFixed(1);
  console.log(
    `${TASKS} fires: last launch ${f(span)} ms after the instant (${Math.round((TASKS * 1000) / span)} fires/s); first admission began ${f(firstAdmission - instant)} ms after it; first launch ${f(starts[0]! - instant)} ms`,
  );
  console.log(
    `process CPU ${f((cpu.user + cpu.system) / 1000)} ms (${f((cpu.user + cpu.system) / TASKS)} µs a fire); write transactions ${inWindow.length}: ${f(txMs)} ms (statements in them ${f(txStatementsMs)} ms, JavaScript in them ${f(txMs - txStatementsMs)} ms); statements outside write transactions ${f(sumStatements() - txStatementsMs)} ms`,
  );
  console.log(
    `garbage collection: ${gcIn.length} pauses, ${f(gcMs)} ms (max ${f(Math.max(0, ...gcIn.map((g) => g.ms)))}); event loop delay p99 ${f(loop.percentile(99) / 1e6)} max ${f(loop.max / 1e6)} ms`,
  );
  console.log(
    `of the ${f(busyFromFirst)} ms from the first admission to the last launch: SQLite statements ${f(sumStatements())} ms (${f((sumStatements() * 1000) / TASKS)} µs a fire), GC ${f(gcMs)}, the rest (JavaScript, idle) ${f(busyFromFirst - sumStatements() - gcMs)} ms`,
  );
  console.log(
    `WAL at the instant: ${walAtInstant.mxFrame} frames, ${walAtInstant.backfill} checkpointed; after: ${walState().mxFrame} / ${walState().backfill}`,
  );
  const slow = [...inWindow].sort((a, b) => b.ms - a.ms).slice(0, 5);
  for (const t of slow) {
    console.log(
      `  slow transaction at +${f(t.at - instant)} ms: ${f(t.ms)} ms (statements ${f(t.statementsMs)}), WAL ${t.mxFrame} frames, ${t.backfill} checkpointed`,
    );
  }
  const byCost = [...statementMs.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14);
  for (const [sql, t] of byCost) {
    console.log(
      `  ${f((t.ms * 1000) / TASKS).padStart(6)} µs/fire ${String(t.count).padStart(6)}× ${sql.replace(/\s+/g, " ").slice(0, 90)}`,
    );
  }
  // Admissions: gaps between them are the JavaScript between rounds (launches, verdict writes).
  const gaps = admissions.slice(1).map((a, i) => a.at - (admissions[i]!.at + admissions[i]!.ms));
  const admissionMs = admissions.reduce((s, a) => s + a.ms, 0);
  console.log(
    `admissions ${admissions.length}: ${f(admissionMs)} ms in them, ${f(gaps.reduce((s, g) => s + g, 0))} ms between them (max gap ${f(Math.max(0, ...gaps))})`,
  );
  if (jsonOut !== undefined) {
    writeFileSync(
      jsonOut,
      JSON.stringify({
        instant,
        starts: Array.from(starts, (s) => s - instant),
        admissions: admissions.map((a) => ({ ...a, at: a.at - instant })),
        transactions: inWindow.map((t) => ({ ...t, at: t.at - instant })),
        gc: gcIn.map((g) => ({ ...g, at: g.at - instant })),
      }),
    );
  }
} finally {
  await scheduler.stop();
  await creator.stop();
  rmSync(folder, { recursive: true, force: true });
}

function sumStatements(): number {
  let total = 0;
  for (const t of statementMs.values()) total += t.ms;
  return total;
}
