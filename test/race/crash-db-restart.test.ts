/**
 * Database restart (issue 6, docs/architecture.md#cadence): two `punctual worker` processes run against a PostgreSQL cluster of
 * this test's own; the cluster is stopped mid-run (`pg_ctl stop -m fast`) and started again once both
 * replicas have logged the failure and backed off. The replicas must reconnect on their own, and the run
 * ledger must show one decision per nominal time, no launch twice in one attempt, and nothing lost.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { waitFor } from "../e2e/process.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";
import { readExecutions } from "./crash/recording-handlers.js";
import type { ReplicaFleet } from "./crash/replica-fleet.js";
import { postgresBinDir, startThrowawayCluster } from "./crash/throwaway-cluster.js";
import type { ThrowawayCluster } from "./crash/throwaway-cluster.js";

const binDir = postgresBinDir();
if (binDir === null) {
  const message =
    "test/race/crash-db-restart.test.ts needs initdb and pg_ctl (set PUNCTUAL_PG_BIN)";
  if ((process.env.CI ?? "") !== "") throw new Error(`CI: ${message}; it must not be skipped`);
  console.warn(`[punctual] SKIPPED ${message}`);
}

/** The database stays down at least this long, so occurrences fall due while it is. */
const MIN_OUTAGE_MS = 5000;

/** Waits until every live worker has written `text` after the output it had in `since`. */
function allLogged(
  fleet: ReplicaFleet,
  since: ReadonlyMap<string, number>,
  text: string,
  timeoutMs: number,
): Promise<true> {
  const logged = (output: string, label: string): boolean =>
    output.slice(since.get(label) ?? 0).includes(text);
  return waitFor(
    () => {
      for (const { label, cli } of fleet.live) {
        const { exitCode, signalCode } = cli.child;
        if (exitCode !== null || signalCode !== null) {
          throw new Error(
            `worker ${label} died (exit ${String(exitCode)}, signal ${String(signalCode)}) ` +
              `instead of logging "${text}":\n${cli.output().slice(-3000)}`,
          );
        }
      }
      return fleet.live.every(({ label, cli }) => logged(cli.output(), label)) ? true : undefined;
    },
    { timeoutMs, what: `every replica to log "${text}"`, describe: () => fleet.tails() },
  );
}

function outputLengths(fleet: ReplicaFleet): Map<string, number> {
  return new Map(fleet.live.map((m) => [m.label, m.cli.output().length]));
}

describe.skipIf(binDir === null)("two PostgreSQL replicas across a database restart", () => {
  let dir = "";
  let cluster: ThrowawayCluster | null = null;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-crash-restart-"));
    cluster = await startThrowawayCluster(binDir ?? "");
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "reconnects after the database restarts and loses or doubles nothing",
    { timeout: 150_000 },
    async () => {
      const db = cluster!;
      const ledger = postgresLedger(db.url);
      let outageMs = 0;
      try {
        const { report, exits } = await runCrashScenario({
          title: "postgres restart",
          // The outage itself lasts several seconds and every lease is the default 60 s.
          settleTimeoutMs: 60_000,
          dir,
          store: postgres(db.url),
          ledger,
          workerArgs: ["--database", db.url],
          replicas: 2,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 300,
          // The outage silences both replicas longer than a short lease would allow.
          shortLease: false,
          disturb: async (fleet) => {
            await waitFor(() => (readExecutions(dir).length >= 30 ? true : undefined), {
              timeoutMs: 30_000,
              what: "the first executions",
              describe: () => fleet.tails(),
            });
            const beforeStop = outputLengths(fleet);
            const stoppedAt = Date.now();
            await db.stop();
            await allLogged(fleet, beforeStop, "backing off", 30_000);
            const remaining = stoppedAt + MIN_OUTAGE_MS - Date.now();
            if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
            const beforeStart = outputLengths(fleet);
            await db.start();
            outageMs = Date.now() - stoppedAt;
            await allLogged(fleet, beforeStart, "coordinator recovered", 60_000);
          },
        });
        console.log(`[crash] postgres restart: the database was down ${outageMs} ms`);
        expect(exits.map((e) => e.exit)).toEqual(exits.map(() => ({ code: 0, signal: null })));
        expect(report.problems).toEqual([]);
        expect(report.duplicates).toBe(0);
        expect(report.losses).toBe(0);
      } finally {
        await ledger.close();
      }
    },
  );
});
