/**
 * SQLite on a full disk (issue 33 item 4, docs/operations.md#faults-and-recovery): two `punctual worker`
 * processes share a database file on a small tmpfs of the test's own (mounting needs root, which CI
 * has). While they work through the crash scenario's burst, the test fills the disk. Each worker must
 * report the failure with its cause once per streak (not once per retry), record nothing as launched that
 * was not (the ledger check: every run that says it ran has an execution), and once the filler is
 * deleted, carry on by itself and decide every occurrence. The file passes `PRAGMA integrity_check`.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlite } from "../../src/adapters/storage/sqlite/sqlite-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { waitFor } from "../e2e/process.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { sqliteLedger } from "./crash/ledger-source.js";
import type { LedgerSource } from "./crash/ledger-source.js";
import { readExecutions } from "./crash/recording-handlers.js";
import type { ReplicaFleet } from "./crash/replica-fleet.js";

const root = typeof process.getuid === "function" && process.getuid() === 0;
if (!root) {
  const message = "test/race/fault-disk-full.test.ts mounts a tmpfs and needs root";
  if ((process.env.CI ?? "") !== "") throw new Error(message);
  console.warn(`[punctual] SKIPPED ${message}`);
}

/** What SQLite says when a write finds no space (SQLITE_FULL). */
const FULL = "database or disk is full";

/** Fills the file system of `path`'s folder: writes until there is no space left. */
function fill(path: string): void {
  const fd = openSync(path, "w");
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The log lines (pino JSON) of `output` whose error says the disk is full, by message. */
function fullReports(output: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of output.split("\n")) {
    if (!line.includes(FULL)) continue;
    const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? "?";
    counts.set(msg, (counts.get(msg) ?? 0) + 1);
  }
  return counts;
}

describe.skipIf(!root)("two SQLite processes on a disk that fills up", () => {
  let dir = "";
  let mount = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-disk-full-"));
    const folder = join(dir, "db");
    mkdirSync(folder);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", folder]);
    mount = folder;
    await ensureBuilt();
  }, 240_000);

  afterAll(() => {
    if (mount !== "") execFileSync("umount", ["-l", mount]);
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "reports each failure once with its cause, records nothing it did not launch, and carries on once space is freed",
    { timeout: 150_000 },
    async () => {
      const file = join(mount, "punctual.db");
      const filler = join(mount, "filler");
      let ledger: LedgerSource | null = null;
      const source: LedgerSource = {
        read: () => (ledger ??= sqliteLedger(file)).read(),
        progress: () => (ledger ??= sqliteLedger(file)).progress(),
        close: () => ledger?.close() ?? Promise.resolve(),
      };
      const timings = { reportedMs: 0, recoveredMs: 0 };
      try {
        const { report, exits, fleet } = await runCrashScenario({
          title: "sqlite disk full",
          dir,
          store: sqlite(file),
          ledger: source,
          workerArgs: ["--database", file],
          replicas: 2,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 200,
          disturb: async (f: ReplicaFleet) => {
            await waitFor(() => (readExecutions(dir).length > 0 ? true : undefined), {
              timeoutMs: 20_000,
              what: "executions to flow",
              describe: () => f.tails(),
            });
            fill(filler);
            const fullAt = Date.now();
            const members = f.live;
            // Every worker meets the full disk and says so.
            await waitFor(
              () => (members.every((m) => m.cli.output().includes(FULL)) ? true : undefined),
              {
                timeoutMs: 20_000,
                what: "each worker to report the full disk",
                describe: () => f.tails(),
              },
            );
            timings.reportedMs = Date.now() - fullAt;
            unlinkSync(filler);
            const freedAt = Date.now();
            const recovered = (output: string): boolean =>
              !output.includes("coordinator tick failed") ||
              output.includes("coordinator recovered");
            await waitFor(
              () => (members.every((m) => recovered(m.cli.output())) ? true : undefined),
              { timeoutMs: 30_000, what: "the workers to recover", describe: () => f.tails() },
            );
            timings.recoveredMs = Date.now() - freedAt;
          },
        });
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        // Reported once per streak and message, with SQLite's cause in the error.
        const reports = [0, 1].map((slot) => fullReports(fleet.tailsOf(slot)));
        for (const counts of reports) {
          expect(counts.size).toBeGreaterThan(0);
          for (const [msg, count] of counts) expect(count, msg).toBe(1);
        }
        await source.close();
        ledger = null;
        const db = new Database(file, { readonly: true });
        const integrity = db.pragma("integrity_check", { simple: true });
        db.close();
        expect(integrity).toBe("ok");
        console.log(
          `[disk full] reported by every worker ${(timings.reportedMs / 1000).toFixed(1)} s after the ` +
            `disk filled, recovered ${(timings.recoveredMs / 1000).toFixed(1)} s after space was freed; ` +
            `reports ${JSON.stringify(reports.map((counts) => [...counts]))}; integrity ${String(integrity)}`,
        );
      } finally {
        await source.close();
      }
    },
  );
});
