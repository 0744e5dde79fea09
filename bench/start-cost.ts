/**
 * `npx tsx bench/start-cost.ts [--runs N] [--postgres URL] [--bin PATH]...`
 * (docs/benchmarks.md#start-cost): the CPU a replica spends from its spawn to its first claim, for
 * `node bin/punctual.js worker` and `serve`, on SQLite and PostgreSQL. Each run creates one handler task,
 * spawns the process once it is due, waits until its handler has run (the first claim launched it), and
 * reads the process's own utime + stime from /proc: CPU time, not wall time, which a machine loaded by
 * others moves less (but moves). Needs the build (`npm run build`). Prints a markdown table of the
 * median and the range over the runs. Each `--bin` (default: this checkout's bin/punctual.js) is a build
 * to measure; several are started one after the other in each run, so that all see the same load.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { option } from "./lib/argv-option.js";
import { createScheduler } from "../src/composition.js";
import { storeFromDatabaseUrl } from "../src/composition-stores.js";
import { processCpuSeconds } from "./lib/proc-cpu.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "punctual.js");

const RUNS = Number(option("runs", "5"));
/** Every `--bin PATH` given, else this checkout's. */
const BINS = process.argv.flatMap((arg, at) =>
  arg === "--bin" && process.argv[at + 1] !== undefined
    ? [resolve(process.argv[at + 1] ?? "")]
    : [],
);
if (BINS.length === 0) BINS.push(BIN);
const ADMIN_URL = option(
  "postgres",
  process.env.PUNCTUAL_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
);

/** The handler writes a marker file: the first claim has launched it. */
const HANDLERS = `
import { writeFileSync } from "node:fs";
export default { mark: async () => { writeFileSync(process.env.MARK_FILE, String(Date.now())); } };
`;

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One spawn: CPU seconds from spawn to the first claim's launch. */
async function once(
  command: "worker" | "serve",
  database: string,
  dir: string,
  bin: string,
): Promise<number> {
  const mark = join(dir, `mark-${String(Date.now())}`);
  const scheduler = createScheduler({
    store: storeFromDatabaseUrl(database),
    handlers: { mark: () => Promise.resolve() },
  });
  // The store opened first: on a loaded machine opening it can outlast the second ahead the task is due.
  await scheduler.runtime();
  const runAt = Math.ceil((Date.now() + 1000) / 1000) * 1000;
  await scheduler.tasks.create({
    title: "first claim",
    schedule: { type: "once", run_at: new Date(runAt).toISOString() },
    target: { kind: "handler", name: "mark" },
  });
  await scheduler.stop();
  // The process starts once the task is due, as a replica restarted into a backlog does: its first
  // claim comes from its first pass, not from a wait for the due time (during which a process would
  // spend CPU on whatever it does after that pass, counted as if the claim had needed it).
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, runAt + 50 - Date.now())));
  const args =
    command === "worker"
      ? ["worker", "--handlers", join(dir, "handlers.js"), "--database", database]
      : ["serve", "--handlers", join(dir, "handlers.js"), "--database", database, "--port", "0"];
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: { ...process.env, MARK_FILE: mark, PUNCTUAL_LOG_LEVEL: "warn" },
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    await waitUntil(() => existsSync(mark), 60_000, `${command} to launch its first claim`);
    const cpu = processCpuSeconds(child.pid ?? 0);
    if (cpu === null) throw new Error("could not read the process's CPU time");
    return cpu;
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "punctual-start-cost-"));
  writeFileSync(join(dir, "handlers.js"), HANDLERS);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const name = `start_cost_${String(process.pid)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const pgUrl = new URL(ADMIN_URL);
  pgUrl.pathname = `/${name}`;
  const rows: string[] = [];
  try {
    for (const [label, database] of [
      ["SQLite", join(dir, "punctual.db")],
      ["PostgreSQL", pgUrl.toString()],
    ] as const) {
      for (const command of ["worker", "serve"] as const) {
        // One start first: migrations and the OS's file cache are not what is measured.
        for (const bin of BINS) await once(command, database, dir, bin);
        const cpu: number[][] = BINS.map(() => []);
        for (let i = 0; i < RUNS; i++) {
          for (const [at, bin] of BINS.entries()) {
            cpu[at]?.push(await once(command, database, dir, bin));
          }
        }
        for (const [at, bin] of BINS.entries()) {
          const runs = cpu[at] ?? [];
          const build = BINS.length === 1 ? "" : ` ${bin} |`;
          rows.push(
            `| \`${command}\` | ${label} |${build} ${median(runs).toFixed(2)} s | ` +
              `${Math.min(...runs).toFixed(2)}-${Math.max(...runs).toFixed(2)} s |`,
          );
          console.error(
            `${command} on ${label}${build}: ${runs.map((c) => c.toFixed(2)).join(", ")} s`,
          );
        }
      }
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `${new Date().toISOString()}, ${String(cpus().length)} x ${cpus()[0]?.model ?? "?"}, node ` +
      `${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}, ${String(RUNS)} runs each\n\n` +
      (BINS.length === 1
        ? `| command | database | CPU to first claim (median) | range |\n| --- | --- | --- | --- |\n`
        : `| command | database | bin | CPU to first claim (median) | range |\n| --- | --- | --- | --- | --- |\n`) +
      rows.join("\n"),
  );
}

await main();
