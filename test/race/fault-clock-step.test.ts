/**
 * Replicas whose clocks are wrong (issue 33 item 3, docs/operations.md#clock-skew): four `punctual
 * worker` processes share a PostgreSQL database under the crash scenario's workload. Under Debian's
 * libfaketime, one runs an hour ahead, one an hour behind, and one starts right and has its wall clock
 * stepped an hour ahead while it works; the fourth is right throughout. The monotonic clock is left alone
 * (`FAKETIME_DONT_FAKE_MONOTONIC`), as an NTP step or a restored VM leaves it. Every replica must decide
 * on the database's time: nothing executes before its nominal time (read on the real clock, from the
 * known fake offsets), nothing twice, nothing is lost (the ledger check), no replica is judged silent,
 * and the skews and the step are logged at warn with their size.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { waitFor } from "../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";
import { readExecutions } from "./crash/recording-handlers.js";
import type { ReplicaFleet } from "./crash/replica-fleet.js";

const HOUR = 3_600_000;

/** Debian's libfaketime (`apt-get install faketime`; .ci/run installs it), or `PUNCTUAL_LIBFAKETIME`. */
const LIBFAKETIME =
  process.env.PUNCTUAL_LIBFAKETIME ??
  ["x86_64-linux-gnu", "aarch64-linux-gnu"]
    .map((arch) => `/usr/lib/${arch}/faketime/libfaketime.so.1`)
    .find((path) => existsSync(path)) ??
  "";

const runnable = await (async () => {
  if (!(await raceTestsRunnable("test/race/fault-clock-step.test.ts"))) return false;
  if (LIBFAKETIME !== "" && existsSync(LIBFAKETIME)) return true;
  const message = "test/race/fault-clock-step.test.ts needs libfaketime (apt-get install faketime)";
  if ((process.env.CI ?? "") !== "") throw new Error(message);
  console.warn(`[punctual] SKIPPED ${message}`);
  return false;
})();

/** Ms precision of the real-time reading of an execution (process start, timers, log writes). */
const EARLY_TOLERANCE_MS = 250;

/** The first line of `output` (pino JSON) whose message starts with `msg`. */
function logged(output: string, msg: string): Record<string, unknown> | undefined {
  for (const line of output.split("\n")) {
    if (!line.includes(`"msg":"${msg}`)) continue;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      // A line not yet complete: read again later.
    }
  }
  return undefined;
}

describe.skipIf(!runnable)("PostgreSQL replicas with clocks an hour off, and one stepped", () => {
  let dir = "";
  let database: PostgresTestDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-clock-step-"));
    database = await createPostgresTestDatabase();
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "decides on the database's time: nothing early, twice or lost, and logs the skew and the step",
    { timeout: 200_000 },
    async () => {
      const url = database.url ?? "";
      const ledger = postgresLedger(url);
      const stepFile = join(dir, "stepped-clock");
      writeFileSync(stepFile, "+0\n");
      const faked = { LD_PRELOAD: LIBFAKETIME, FAKETIME_DONT_FAKE_MONOTONIC: "1" };
      // Slot 0 an hour ahead, slot 1 an hour behind, slot 2 stepped during the run, slot 3 right.
      const slotEnv = (slot: number): Record<string, string> =>
        slot === 0
          ? { ...faked, FAKETIME: "+1h" }
          : slot === 1
            ? { ...faked, FAKETIME: "-1h" }
            : slot === 2
              ? { ...faked, FAKETIME_TIMESTAMP_FILE: stepFile, FAKETIME_CACHE_DURATION: "1" }
              : {};
      let steppedAt = 0;
      const seen: { fleet: ReplicaFleet | null } = { fleet: null };
      try {
        const result = await runCrashScenario({
          title: "postgres clocks off",
          dir,
          store: postgres(url),
          ledger,
          workerArgs: ["--database", url],
          slotEnv,
          replicas: 4,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 200,
          disturb: async (fleet) => {
            seen.fleet = fleet;
            const stepped = fleet.member(2);
            if (stepped === null) throw new Error("no replica in slot 2");
            // Step it while it works: once it has executed runs.
            await waitFor(
              () =>
                readExecutions(dir).some((e) => e.replica === stepped.label) ? true : undefined,
              // Four replicas race for each second's due work; on a loaded host one of them can
              // lose every race for a while (CI's full suite: none in 20 s).
              {
                timeoutMs: 60_000,
                what: "slot 2 to execute runs",
                describe: () =>
                  `${fleet.tails()}\nexecutions by replica: ${JSON.stringify(
                    [...new Set(readExecutions(dir).map((e) => e.replica))].map((r) => [
                      r,
                      readExecutions(dir).filter((e) => e.replica === r).length,
                    ]),
                  )}`,
              },
            );
            writeFileSync(stepFile, "+1h\n");
            steppedAt = Date.now();
            await waitFor(
              () =>
                logged(stepped.cli.output(), "this machine's clock stepped") === undefined
                  ? undefined
                  : true,
              { timeoutMs: 15_000, what: "the step to be noticed", describe: () => fleet.tails() },
            );
          },
        });
        const { report, exits, fleet } = result;
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
        const outputs = new Map([0, 1, 2, 3].map((slot) => [slot, fleet.tailsOf(slot)] as const));
        // The skews at start, with their size.
        for (const [slot, sign] of [
          [0, -1],
          [1, 1],
        ] as const) {
          const warning = logged(outputs.get(slot) ?? "", "this machine's clock differs");
          expect(warning?.level).toBe(40);
          expect(Math.abs(Number(warning?.offsetMs) - sign * HOUR)).toBeLessThan(5000);
        }
        const step = logged(outputs.get(2) ?? "", "this machine's clock stepped");
        expect(step?.level).toBe(40);
        expect(Math.abs(Number(step?.stepMs) - HOUR)).toBeLessThan(5000);
        // No replica was judged silent: every heartbeat was on the database's time.
        for (const output of outputs.values()) {
          expect(output).not.toContain("a replica went silent");
        }
        // Nothing early, on the real clock: each execution's time less its process's fake offset.
        const labels = new Map(fleet.labels());
        const early = readExecutions(dir).filter((e) => {
          const slot = labels.get(e.replica);
          const offset =
            slot === 0
              ? HOUR
              : slot === 1
                ? -HOUR
                : slot === 2 && e.at - HOUR >= steppedAt - 2000
                  ? HOUR
                  : 0;
          return e.at - offset < Date.parse(e.scheduled_for) - EARLY_TOLERANCE_MS;
        });
        expect(early).toEqual([]);
        console.log(
          `[clock] replicas an hour ahead, an hour behind, and one stepped an hour ahead: ` +
            `skews logged ${String(logged(outputs.get(0) ?? "", "this machine's clock differs")?.offsetMs)} ` +
            `and ${String(logged(outputs.get(1) ?? "", "this machine's clock differs")?.offsetMs)} ms, ` +
            `step logged ${String(step?.stepMs)} ms; early executions ${String(early.length)}`,
        );
      } catch (error) {
        if (seen.fleet !== null) console.error(seen.fleet.tails(20));
        throw error;
      } finally {
        await ledger.close();
      }
    },
  );
});
