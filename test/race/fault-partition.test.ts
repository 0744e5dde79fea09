/**
 * A replica partitioned from PostgreSQL (issue 33 item 2, docs/operations.md#a-partitioned-replica):
 * three `punctual worker` processes share a database, each through a TCP proxy of its own that the test
 * controls (all three, so that the proxy's latency favours none of them: behind a proxy alone, the victim
 * lost every race for due work to the two direct replicas on a loaded host and never executed anything
 * to partition). While the first replica holds claims, its proxy blackholes it (no reset: what it sends is held,
 * and delivered at the heal as TCP would retransmit it). The test waits for the events that matter, each
 * bounded: the partitioned replica notices (a pass or a heartbeat fails), another replica takes its
 * work over after the liveness timeout; then the proxy heals, and the partitioned replica executes
 * runs again (handlers hold their runs up to 0.8 s, so that a cut finds the replica holding some). The ledger check (crash/ledger-check.ts) then shows every
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
import type { LedgerSource } from "./crash/ledger-source.js";
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

/** The proxy of replica slot `slot`. */
function proxyOf(proxies: readonly TcpProxy[], slot: number): TcpProxy {
  const proxy = proxies[slot];
  if (proxy === undefined) throw new Error(`no proxy for replica slot ${slot}`);
  return proxy;
}

/** How many of `output`'s log lines carry `msg`. */
function countLogged(output: string, msg: string): number {
  return output.split("\n").filter((line) => line.includes(`"${msg}`)).length;
}

/**
 * How many times the replica said it lost the database: a failed pass, or a failed heartbeat (a pass
 * can wait longer than the statement timeout, on a connection attempt, before it fails; the heartbeat
 * loop's failure is what stops its cover, docs/operations.md#a-partitioned-replica).
 */
function noticed(output: string): number {
  return countLogged(output, "coordinator tick failed") + countLogged(output, "a heartbeat failed");
}

/**
 * How many runs other replicas have said they took over from `replicaId` ("a replica went silent"
 * lines naming it, their `runs` summed): work the replica held when it was cut off.
 */
function runsTakenOver(outputs: readonly string[], replicaId: string): number {
  let runs = 0;
  for (const output of outputs) {
    for (const line of output.split("\n")) {
      if (!line.includes('"a replica went silent') || !line.includes(replicaId)) continue;
      try {
        const entry = JSON.parse(line) as { runs?: unknown };
        if (typeof entry.runs === "number") runs += entry.runs;
      } catch {
        // Not a whole log line: not counted.
      }
    }
  }
  return runs;
}

/** Cuts tried at most before the test gives up finding the replica with launched work at a cut. */
const MAX_CUTS = 5;

async function partitionOnce(
  fleet: ReplicaFleet,
  proxy: TcpProxy,
  ledger: LedgerSource,
  dir: string,
  timings: PartitionTimings,
): Promise<void> {
  const victim = fleet.member(0);
  if (victim === null) throw new Error("no replica behind the proxy");
  const others = fleet.live.filter((m) => m !== victim);
  // Whether the database shows the replica holding a launched run: work another replica must take over.
  let lastActive: string = "not read yet";
  const holdsWork = async (): Promise<boolean> => {
    const { active } = await ledger.progress();
    lastActive = JSON.stringify(active);
    return active.some((a) => a.claimedBy === victim.replicaId && a.status !== "queued");
  };
  // What a timeout prints: every replica's log tail, the runs each executed, the last active runs read.
  const why = (): string => {
    const executed = new Map<string, number>();
    for (const e of readExecutions(dir))
      executed.set(e.replica, (executed.get(e.replica) ?? 0) + 1);
    return (
      `${fleet.tails()}\nexecutions by replica: ${JSON.stringify([...executed])}` +
      `\nvictim ${victim.label} is ${victim.replicaId}; last active runs read: ${lastActive}`
    );
  };
  // Whether it executed a run after `at`: it is back at work.
  const executedSince = (at: number): boolean =>
    readExecutions(dir).some((e) => e.replica === victim.label && e.at > at);
  let cutAt: number;
  // The runs other replicas had said they took over from it before the last cut.
  let takenBefore = 0;
  const takenOverSinceCut = (): boolean =>
    runsTakenOver(
      others.map((m) => m.cli.output()),
      victim.replicaId,
    ) > takenBefore;
  for (let cut = 1; ; cut++) {
    // Partition it mid-work: cut it off while the ledger shows it holding a launched run.
    await waitFor(async () => ((await holdsWork()) ? true : undefined), {
      timeoutMs: 60_000,
      what: "the proxied replica to hold a launched run",
      describe: why,
    });
    const failedBefore = noticed(victim.cli.output());
    takenBefore = runsTakenOver(
      others.map((m) => m.cli.output()),
      victim.replicaId,
    );
    proxy.blackhole();
    cutAt = Date.now();
    // Its runs may end replica_lost: the ledger check accepts that only for replicas it was told of.
    fleet.killed.add(victim.replicaId);
    await waitFor(() => (noticed(victim.cli.output()) > failedBefore ? true : undefined), {
      timeoutMs: (STATEMENT_TIMEOUT_S + 2) * 1000 + 10_000,
      what: "the partitioned replica to notice",
      describe: why,
    });
    timings.noticedMs = Date.now() - cutAt;
    // Seconds after the cut, whatever it sent before has committed: does the ledger still show it
    // holding work, or has another replica already taken some over (on a loaded host the takeover can
    // come before the replica notices)? If its last verdicts got through just before the cut, there is
    // nothing to take over: heal, let it recover, and cut again.
    if (takenOverSinceCut() || (await holdsWork())) break;
    if (cut === MAX_CUTS) {
      throw new Error(`${MAX_CUTS} cuts each found the replica holding no launched run`);
    }
    const healedAt = Date.now();
    proxy.heal();
    await waitFor(() => (executedSince(healedAt) ? true : undefined), {
      timeoutMs: 30_000,
      what: "the replica to execute runs again before the next cut",
      describe: why,
    });
  }
  // Taken over since this cut (a line from an earlier cut's takeover does not count).
  await waitFor(() => (takenOverSinceCut() ? true : undefined), {
    // A sweep every 5 s after a 3 s liveness timeout: 15 s was seen at load 15 on 2 cores.
    timeoutMs: 40_000,
    what: "another replica to take its work over",
    describe: why,
  });
  timings.takenOverMs = Date.now() - cutAt;
  const healedAt = Date.now();
  proxy.heal();
  // It rejoins: it launches runs again.
  await waitFor(() => (executedSince(healedAt) ? true : undefined), {
    timeoutMs: 45_000,
    what: "the partitioned replica to rejoin",
    describe: why,
  });
  timings.rejoinedMs = Date.now() - healedAt;
}

describe.skipIf(!runnable)("a PostgreSQL replica partitioned from the database", () => {
  let dir = "";
  let database: PostgresTestDatabase;
  /** One proxy per replica slot; the first one's replica is the one partitioned. */
  let proxies: TcpProxy[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "punctual-partition-"));
    database = await createPostgresTestDatabase();
    const url = new URL(database.url ?? "");
    const target = { host: url.hostname, port: Number(url.port || 5432) };
    proxies = await Promise.all([0, 1, 2].map(() => startTcpProxy(target)));
    await ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    for (const proxy of proxies) {
      proxy.heal();
      await proxy.close();
    }
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "has its work taken over, notices, launches nothing it no longer owns, and rejoins",
    { timeout: 240_000 },
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
          slotArgs: (slot) => ["--database", proxyOf(proxies, slot).url(url)],
          replicas: 3,
          onceTasks: 300,
          intervalTasks: 20,
          handlerMaxMs: 800,
          disturb: (fleet) => partitionOnce(fleet, proxyOf(proxies, 0), ledger, dir, timings),
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
