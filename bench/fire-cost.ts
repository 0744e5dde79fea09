/**
 * `npx tsx bench/fire-cost.ts [--tasks N] [--replicas N] [--budget N] [--pairs N] [--checkout PATH]...`
 * (docs/benchmarks.md, the worker's side of a fire): what the replicas' JavaScript costs per fire on
 * PostgreSQL, for one or several source trees, alternated. For each pair and each `--checkout` (default:
 * this one; each is a tree with this project's `src/` and a `node_modules`), in turn: a child process
 * (`node --trace-gc-nvp --import tsx`) runs the set-up of bench/fire-profile.ts from that tree's `src/`
 * (replicas of the library in one process, N once tasks due at one instant on a fresh database) and
 * reports, from the first fire to the last verdict: the process's CPU (user + system, the collector's
 * threads included) and the heap allocated, summed from V8's trace of each collection (`allocated`
 * between collections) plus what is still uncollected at the end. Allocation is nearly deterministic,
 * CPU moves with the machine's load: compare the trees within a pair.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { queryOnce } from "./lib/databases.js";
import { option } from "./lib/argv-option.js";

const TASKS = Number(option("tasks", "10000"));
const REPLICAS = Number(option("replicas", "2"));
const BUDGET = Number(option("budget", "500"));
const PAIRS = Number(option("pairs", "3"));
const ADMIN =
  process.env["PUNCTUAL_BENCH_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";
const SELF = fileURLToPath(import.meta.url);

interface Window {
  readonly startMs: number;
  readonly endMs: number;
  readonly heapStart: number;
  readonly heapEnd: number;
  readonly cpuUs: number;
  readonly systemUs: number;
  /** The main thread's share of `cpuUs` (the rest: the collector's and the compiler's threads). */
  readonly mainUs: number;
  readonly fires: number;
}

function post(session: Session, method: string, params: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => {
      if (err) reject(err);
      else resolve(result);
    });
  });
}

/** The child: one burst on `checkout`'s library; prints its window as a JSON line. */
async function child(checkout: string): Promise<void> {
  const lib = (await import(pathToFileURL(resolve(checkout, "src/index.ts")).href)) as {
    createScheduler: (options: unknown) => {
      start(): Promise<void>;
      stop(): Promise<void>;
      tasks: { createMany(inputs: readonly unknown[]): Promise<unknown> };
    };
    postgres: (url: string) => unknown;
  };
  const name = `punctual_firecost_${randomBytes(4).toString("hex")}`;
  await queryOnce(ADMIN, `CREATE DATABASE ${name}`);
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  const db = url.toString();
  const schedulers: ReturnType<typeof lib.createScheduler>[] = [];
  try {
    for (let i = 0; i < REPLICAS; i++) {
      const scheduler = lib.createScheduler({
        store: lib.postgres(db),
        handlers: { noop: () => undefined },
        policy: { maxConcurrentRuns: BUDGET },
        replicaId: `cost-${i}`,
        logger: {
          debug: () => undefined,
          info: () => undefined,
          warn: (o: unknown, m?: string) => {
            console.error("warn", m, JSON.stringify(o));
          },
          error: (o: unknown, m?: string) => {
            console.error("error", m, o);
          },
        },
      });
      await scheduler.start();
      schedulers.push(scheduler);
    }
    const dueAt = Math.ceil((Date.now() + 8000) / 1000) * 1000;
    const inputs = Array.from({ length: TASKS }, () => ({
      title: "fire-cost",
      schedule: { type: "once", run_at: new Date(dueAt).toISOString() },
      target: { kind: "handler", name: "noop" },
    }));
    for (let i = 0; i < inputs.length; i += 1000) {
      await schedulers[0]!.tasks.createMany(inputs.slice(i, i + 1000));
    }
    if (Date.now() > dueAt - 1500) throw new Error("creation overran the due instant");
    await new Promise((r) => setTimeout(r, dueAt - 300 - Date.now()));
    const poll = new pg.Client({ connectionString: db });
    await poll.connect();
    const sampling = option("heap-sample", "");
    const session = sampling === "" ? null : new Session();
    if (session !== null) {
      session.connect();
      await post(session, "HeapProfiler.startSampling", {
        samplingInterval: 512,
        // FIRE_COST_LIVE: only what is still alive at the end (what survived the burst).
        includeObjectsCollectedByMajorGC: process.env["FIRE_COST_LIVE"] === undefined,
        includeObjectsCollectedByMinorGC: process.env["FIRE_COST_LIVE"] === undefined,
      });
    }
    const startMs = performance.now();
    const heapStart = process.memoryUsage().heapUsed;
    const cpuStart = process.cpuUsage();
    const mainStart = mainThreadUs();
    const threadsStart = threadsUs();
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const { rows } = await poll.query<{ done: number }>(
        "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM punctual.runs",
      );
      if (rows[0]!.done >= TASKS) break;
    }
    const cpu = process.cpuUsage(cpuStart);
    if (process.env["FIRE_COST_THREADS"] !== undefined) {
      for (const [name, us] of threadsUs()) {
        const spent = us - (threadsStart.get(name) ?? 0);
        if (spent > 0) console.error(`thread ${name}: ${(spent / TASKS).toFixed(1)} µs per fire`);
      }
    }
    const window: Window = {
      startMs,
      endMs: performance.now(),
      heapStart,
      heapEnd: process.memoryUsage().heapUsed,
      cpuUs: cpu.user + cpu.system,
      systemUs: cpu.system,
      mainUs: mainThreadUs() - mainStart,
      fires: TASKS,
    };
    await poll.end();
    if (session !== null) {
      const { profile } = (await post(session, "HeapProfiler.stopSampling", {})) as {
        profile: unknown;
      };
      writeFileSync(sampling, JSON.stringify(profile));
      session.disconnect();
    }
    console.log(`FIRE-COST ${JSON.stringify(window)}`);
  } finally {
    await Promise.all(schedulers.map((s) => s.stop()));
    await queryOnce(ADMIN, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** Each thread's user + system CPU (µs, to the clock tick) by its name, from /proc. */
function threadsUs(): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
      byName.set(`${name} ${tid}`, us);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return byName;
}

/** The main thread's user + system CPU (µs, to the clock tick), from /proc. */
function mainThreadUs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/** Bytes allocated in the window: V8's `allocated` of each collection in it, and the tail. */
function allocatedIn(trace: string, window: Window): number {
  let total = 0;
  let lastAfter = window.heapStart;
  for (const line of trace.split("\n")) {
    const at = /\]\s+(\d+) ms: pause=/.exec(line);
    if (at === null) continue;
    const ms = Number(at[1]);
    if (ms < window.startMs || ms > window.endMs) continue;
    const before = Number(/ total_size_before=(\d+)/.exec(line)?.[1] ?? NaN);
    const after = Number(/ total_size_after=(\d+)/.exec(line)?.[1] ?? NaN);
    total += before - lastAfter;
    lastAfter = after;
  }
  return total + (window.heapEnd - lastAfter);
}

if (process.argv.includes("--child")) {
  await child(option("child", "."));
} else {
  const checkouts = process.argv.flatMap((a, i) =>
    a === "--checkout" ? [resolve(process.argv[i + 1]!)] : [],
  );
  if (checkouts.length === 0) checkouts.push(resolve(SELF, "../.."));
  console.log(
    `${TASKS} tasks, ${REPLICAS} replicas, budget ${BUDGET}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`,
  );
  for (let pair = 0; pair < PAIRS; pair++) {
    const order = pair % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const checkout of order) {
      const out = spawnSync(
        process.execPath,
        [
          "--trace-gc-nvp",
          // Any other flags for the child's node (`--trace-deopt`, say), space-separated.
          ...(process.env["FIRE_COST_NODE_FLAGS"] ?? "").split(" ").filter((f) => f !== ""),
          ...(option("cpu-prof", "") === ""
            ? []
            : ["--cpu-prof", `--cpu-prof-dir=${option("cpu-prof", "")}`]),
          "--import",
          "tsx",
          SELF,
          "--child",
          checkout,
          ...process.argv.slice(2),
        ],
        { encoding: "utf8", maxBuffer: 1 << 30, cwd: checkout },
      );
      if (process.env["FIRE_COST_KEEP"] !== undefined) {
        writeFileSync(
          `${process.env["FIRE_COST_KEEP"]}-${pair}-${order.indexOf(checkout)}.out`,
          out.stdout,
        );
      }
      const line = out.stdout.split("\n").find((l) => l.startsWith("FIRE-COST "));
      if (process.env["FIRE_COST_THREADS"] !== undefined) console.log(out.stderr.trim());
      if (line === undefined) {
        console.log(`${checkout}: no result\n${out.stderr.slice(-2000)}`);
        continue;
      }
      const window = JSON.parse(line.slice("FIRE-COST ".length)) as Window;
      const bytes = allocatedIn(out.stdout, window);
      console.log(
        `pair ${pair + 1} ${checkout}: ${((window.cpuUs / 1e6) * (1000 / window.fires)).toFixed(3)} s CPU per 1,000 fires (main thread ${((window.mainUs / 1e6) * (1000 / window.fires)).toFixed(3)}, system ${((window.systemUs / 1e6) * (1000 / window.fires)).toFixed(3)}), ${Math.round(bytes / window.fires)} B allocated per fire, ${Math.round(window.endMs - window.startMs)} ms; load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
  }
}
