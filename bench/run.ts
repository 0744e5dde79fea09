/**
 * `npm run bench`: punctual's benchmark (docs/benchmarks.md, issue 6). Runs the due-burst, the 1,000-cron, the
 * steady and the idle scenarios on SQLite and PostgreSQL (1 and 2 replicas), the due-burst and the
 * 1,000-cron workload through pg-boss and graphile-worker on the same server, and reports: progress on
 * stderr, JSON per scenario in bench/results/, a markdown table on stdout (and in docs/benchmarks.md
 * with `--write-docs`). Every database and file it makes is dropped at the end.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseConfig } from "./lib/config.js";
import type { BenchConfig, ScenarioName } from "./lib/config.js";
import {
  createDatabase,
  createFolder,
  dropAll,
  serverVersion,
  setAdminUrl,
} from "./lib/databases.js";
import { describeMachine, loadAverage } from "./lib/machine.js";
import type { Machine } from "./lib/machine.js";
import { elapsedSeconds, progress } from "./lib/progress.js";
import { renderMarkdown, writeDocs } from "./lib/report.js";
import type { BenchResults } from "./lib/report.js";
import { checkSeeder } from "./lib/seed-check.js";
import { killAllWorkers } from "./lib/workers.js";
import { ensurePeersInstalled } from "./peers/peer-setup.js";
import { cronSecond } from "./scenarios/cron-second.js";
import { dueBurst } from "./scenarios/due-burst.js";
import { idle } from "./scenarios/idle.js";
import { steady } from "./scenarios/steady.js";

const here = dirname(fileURLToPath(import.meta.url));
const RESULTS_DIR = join(here, "results");
const DOCS = join(here, "..", "docs", "benchmarks.md");

function stamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", "-").replaceAll(":", "");
}

function saveJson(runStamp: string, scenario: string, body: unknown): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${runStamp}-${scenario}.json`);
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
  progress(scenario, `results in ${path}`);
}

async function preflight(config: BenchConfig): Promise<void> {
  progress("preflight", "checking that bulk-seeded tasks equal tasks made by the library");
  if (config.targets.includes("sqlite"))
    await checkSeeder({ kind: "sqlite", path: "" }, createFolder("seed-check"));
  if (config.targets.some((t) => t !== "sqlite")) {
    const database = await createDatabase("seed_check");
    await checkSeeder({ kind: "postgres", url: database.url }, createFolder("seed-check"));
  }
  progress("preflight", "seeder rows match the library's");
}

async function main(): Promise<void> {
  const config = parseConfig(process.argv.slice(2));
  if (config === null) return;
  setAdminUrl(config.adminUrl);
  const startedAt = new Date();
  const runStamp = stamp(startedAt);
  progress(
    "bench",
    `${config.quick ? "quick" : "full"} run; scenarios ${config.scenarios.join(", ")}; targets ${config.targets.join(", ")}`,
  );
  if (config.peers) ensurePeersInstalled();
  const machine: Machine = describeMachine(await serverVersion());
  progress("bench", `load average ${machine.loadAtStart.join(" / ")} on ${machine.nproc} cores`);
  await preflight(config);
  const results: Record<ScenarioName, unknown[]> = {
    "due-burst": [],
    "cron-second": [],
    steady: [],
    idle: [],
  };
  const runners: Record<ScenarioName, (c: BenchConfig) => Promise<unknown[]>> = {
    "due-burst": dueBurst,
    "cron-second": cronSecond,
    steady,
    idle,
  };
  for (const scenario of config.scenarios) {
    progress(scenario, "starting");
    const rows = await runners[scenario](config);
    results[scenario] = rows;
    saveJson(runStamp, scenario, {
      scenario,
      mode: config.quick ? "quick" : "full",
      machine,
      config,
      rows,
    });
  }
  machine.loadAtEnd = loadAverage();
  const report: BenchResults = {
    machine,
    mode: config.quick ? "quick" : "full",
    durationSeconds: elapsedSeconds(),
    dueBurst: results["due-burst"] as BenchResults["dueBurst"],
    cronSecond: results["cron-second"] as BenchResults["cronSecond"],
    steady: results.steady as BenchResults["steady"],
    idle: results.idle as BenchResults["idle"],
  };
  const markdown = renderMarkdown(report, config);
  process.stdout.write(`\n${markdown}\n`);
  if (config.writeDocs) {
    await writeDocs(DOCS, markdown);
    progress("bench", `table written into ${DOCS}`);
  }
  progress("bench", `done in ${elapsedSeconds().toFixed(0)} s`);
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    progress("bench", `${signal}: stopping workers and dropping the bench databases`);
    killAllWorkers();
    void dropAll().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
} finally {
  killAllWorkers();
  await dropAll();
}
