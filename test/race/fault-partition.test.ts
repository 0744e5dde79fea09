/**
 * A replica partitioned from PostgreSQL (issue 33 item 2, docs/operations.md#a-partitioned-replica):
 * three `punctual worker` processes share a database; one reaches it through a TCP proxy the test
 * controls. While that replica holds claims, the proxy blackholes it (no reset: what it sends is held,
 * and delivered at the heal as TCP would retransmit it). The test waits for the events that matter, each
 * bounded: the partitioned replica notices (its pass fails within the statement timeout), another
 * replica takes its work over after the liveness timeout; then the proxy heals, and the partitioned
 * replica recovers and executes runs again. The ledger check (crash/ledger-check.ts) then shows every
 * occurrence decided once and no attempt launched twice: nothing it no longer owned was launched.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgres } from "../../src/adapters/storage/postgres/postgres-store.js";
import { ensureBuilt } from "../e2e/build.js";
import { waitFor } from "../e2e/process.js";
import { createPostgresTestDatabase, raceTestsRunnable } from "../helpers/postgres.js";
import type { PostgresTestDatabase } from "../helpers/postgres.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";
import { runCrashScenario } from "./crash/crash-scenario.js";
import { postgresLedger } from "./crash/ledger-source.js";
import { readExecutions } from "./crash/recording-handlers.js";
import type { ReplicaFleet } from "./crash/replica-fleet.js";

const runnable = await raceTestsRunnable("test/race/fault-partition.test.ts");

/** The statement timeout every worker gets: the partitioned one notices within it plus 2 s. */
const STATEMENT_TIMEOUT_S = 2;

/** What the test measured, for docs/operations.md#faults-and-recovery. */
interface PartitionTimings {
  noticedMs: number;
  takenOverMs: number;
  rejoinedMs: number;
}

/** The first log line of `cli` (pino JSON) with `msg`, or undefined. */
function logged(output: string, msg: string): Record<string, unknown> | undefined {
  for (const line of output.split("\n")) {
    if (!line.includes(`"${msg}`)) continue;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      // A line cut at the end of the buffer: read again later.
    }
  }
  return undefined;
}

async function partitionOnce(
  fleet: ReplicaFleet,
  proxy: TcpProxy,
  dir: string,
  timings: PartitionTimings,
): Promise<void> {
  const victim = fleet.member(0);
  if (victim === null) throw new Error("no replica behind the proxy");
  // Partition it mid-work: once executions flow through it.
  await waitFor(
    () => (readExecutions(dir).some((e) => e.replica === victim.label) ? true : undefined),
    {
      timeoutMs: 20_000,
      what: "the proxied replica to execute runs",
      describe: () => fleet.tails(),
    },
  );
  const others = fleet.live.filter((m) => m !== victim);
  proxy.blackhole();
  const cutAt = Date.now();
  // Its runs may end replica_lost: the ledger check accepts that only for replicas it was told of.
  fleet.killed.add(victim.replicaId);
  await waitFor(
    () => (logged(victim.cli.output(), "coordinator tick failed") === undefined ? undefined : true),
    {
      timeoutMs: (STATEMENT_TIMEOUT_S + 2) * 1000 + 10_000,
      what: "the partitioned replica to notice",
      describe: () => fleet.tails(),
    },
  );
  timings.noticedMs = Date.now() - cutAt;
  await waitFor(
    () =>
      others.some((m) =>
        m.cli
          .output()
          .split("\n")
          .some(
            (line) => line.includes('"a replica went silent') && line.includes(victim.replicaId),
          ),
      )
        ? true
        : undefined,
    {
      timeoutMs: 20_000,
      what: "another replica to take its work over",
      describe: () => fleet.tails(),
    },
  );
  timings.takenOverMs = Date.now() - cutAt;
  const healedAt = Date.now();
  proxy.heal();
  // It rejoins: its loop recovers, and it executes runs again.
  await waitFor(
    () =>
      logged(victim.cli.output(), "coordinator recovered") !== undefined &&
      readExecutions(dir).some((e) => e.replica === victim.label && e.at > healedAt)
        ? true
        : undefined,
    { timeoutMs: 30_000, what: "the partitioned replica to rejoin", describe: () => fleet.tails() },
  );
  timings.rejoinedMs = Date.now() - healedAt;
}

describe.skipIf(!runnable)("a PostgreSQL replica partitioned from the database", () => {
  let dir = "";
  let database: PostgresTestDatabase;
  let proxy: TcpProxy;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-partition-"));
    database = await createPostgresTestDatabase();
    const url = new URL(database.url ?? "");
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    proxy.heal();
    await proxy.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "has its work taken over, notices, launches nothing it no longer owns, and rejoins",
    { timeout: 150_000 },
    async () => {
      const url = database.url ?? "";
      const ledger = postgresLedger(url);
      const timings: PartitionTimings = { noticedMs: 0, takenOverMs: 0, rejoinedMs: 0 };
      try {
        const result = await runCrashScenario({
          title: "postgres partition",
          dir,
          store: postgres(url),
          ledger,
          workerArgs: ["--pg-statement-timeout", `${STATEMENT_TIMEOUT_S}s`],
          slotArgs: (slot) => ["--database", slot === 0 ? proxy.url(url) : url],
          replicas: 3,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 200,
          disturb: (fleet) => partitionOnce(fleet, proxy, dir, timings),
        });
        console.log(
          `[partition] noticed ${(timings.noticedMs / 1000).toFixed(1)} s after the cut, taken over ` +
            `after ${(timings.takenOverMs / 1000).toFixed(1)} s, rejoined ` +
            `${(timings.rejoinedMs / 1000).toFixed(1)} s after the heal`,
        );
        const { report, exits } = result;
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
