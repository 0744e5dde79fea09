/**
 * Scenario failover (docs/benchmarks.md#failover): a PostgreSQL burst on 2 replicas during which the
 * replica that holds the most claims is killed with SIGKILL once about a third of the burst has run (at
 * the first moment after that when one holds at least 1% of the burst, up to 50). Measured: how long
 * until the work it had claimed is running elsewhere or has been reconciled (no claim of the dead
 * replica left open), what became of that work, and the burst's total time against the same burst
 * undisturbed in the same run. The replicas run with the defaults: a 60 s lease and a 10 s liveness
 * timeout, so the dead replica's claims are taken over once it has been silent for the liveness timeout
 * (docs/operations.md#what-happens-on-a-crash), not when their lease expires.
 */
import pg from "pg";
import type { BenchConfig } from "../lib/config.js";
import { burstWaitMs } from "../lib/config.js";
import { checkLedger, readLedgers } from "../lib/ledger.js";
import { progress } from "../lib/progress.js";
import { burstLedger, punctualBurst, setUpBurstRetrying } from "../lib/punctual-burst.js";
import type { BurstPlan } from "../lib/punctual-burst.js";
import { countDecided, countUnfinished, readRuns, statusCounts } from "../lib/punctual-runs.js";
import type { BurstFigures } from "../lib/results.js";
import { sleepUntil, waitUntil } from "../lib/wait.js";
import { bestCreation, onceInput } from "./due-burst.js";

export const FAILOVER = "failover";
/** The share of the burst executed before the kill. */
const KILL_AT_SHARE = 0.3;
/** The lease a replica's claims hold by default (`leaseSeconds`): recovery no longer waits for it. */
const DEFAULT_LEASE_MS = 60_000;
/** The silence after which a replica is lost by default (`livenessTimeoutSeconds`): recovery's bound. */
const DEFAULT_LIVENESS_MS = 10_000;

export interface FailoverFigures {
  readonly system: "punctual";
  readonly target: "pg2";
  readonly label: string;
  readonly tasks: number;
  /** Due instant to the kill. */
  readonly killedAfterMs: number;
  readonly victim: string;
  /** The victim's claims (launching or running) at the kill. */
  readonly heldAtKill: number;
  /** Kill to the moment no claim of the victim was left open (null: not within the wait). */
  readonly recoveredMs: number | null;
  /** What became of the claims it held (status, or status:reason). */
  readonly heldOutcome: Record<string, number>;
  /** Due instant until every occurrence of the burst had ended (null: not within the wait). */
  readonly totalMs: number | null;
  readonly undisturbedTotalMs: number | null;
  readonly executions: number;
  readonly duplicates: number;
  /**
   * Occurrences no ledger recorded and the runs table does not hold as succeeded on the killed replica:
   * never executed, as far as anything can tell.
   */
  readonly notExecuted: number;
  /**
   * Occurrences no ledger recorded whose run the killed replica finished as succeeded: executed, but in
   * the last 100 ms of its ledger, which died unwritten with it (bench/lib/ledger.ts). A run is recorded
   * succeeded only after its handler returned, so these are executions the bench's own record lost.
   */
  readonly ledgerLost: number;
  readonly statuses: Record<string, number>;
  readonly leaseMs: number;
  readonly livenessMs: number;
  readonly timedOut: boolean;
}

const OPEN = "('launching', 'running')";

async function claimsBy(url: string): Promise<Map<string, number>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const result = await db.query<{ by: string; n: string }>(
      `SELECT claimed_by AS by, count(*) AS n FROM punctual.runs
        WHERE status IN ${OPEN} AND claimed_by IS NOT NULL GROUP BY claimed_by`,
    );
    return new Map(result.rows.map((r) => [r.by, Number(r.n)]));
  } finally {
    await db.end();
  }
}

async function openClaimsOf(
  url: string,
  replica: string,
  ids?: readonly string[],
): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const result = await db.query<{ id: string }>(
      `SELECT id FROM punctual.runs WHERE claimed_by = $1 AND status IN ${OPEN}
          AND ($2::text[] IS NULL OR id = ANY($2::text[]))`,
      [replica, ids ?? null],
    );
    return result.rows.map((r) => r.id);
  } finally {
    await db.end();
  }
}

async function killedBurst(
  config: BenchConfig,
  plan: BurstPlan,
  undisturbed: BurstFigures,
): Promise<FailoverFigures> {
  const scope = `${FAILOVER} pg2 kill -9`;
  const setUp = await setUpBurstRetrying(config, "pg2", plan, scope);
  const { cluster, dueAt } = setUp;
  const store = cluster.store;
  if (store.kind !== "postgres") throw new Error("failover runs on PostgreSQL");
  try {
    await sleepUntil(dueAt);
    const window = { from: dueAt, to: dueAt + 1 };
    const liveExecuted = async (): Promise<number> =>
      (await cluster.stats(false, 5000)).reduce((sum, s) => sum + (s?.executed ?? 0), 0);
    await waitUntil(async () => (await liveExecuted()) >= plan.count * KILL_AT_SHARE, {
      timeoutMs: burstWaitMs(config, plan.count),
      everyMs: 50,
    });
    // No-op runs hold their claims for milliseconds: look until a replica holds a good number of them.
    let claims = new Map<string, number>();
    const enough = Math.max(1, Math.min(50, Math.floor(plan.count / 100)));
    await waitUntil(
      async () => {
        claims = await claimsBy(store.url);
        return Math.max(0, ...claims.values()) >= enough;
      },
      { timeoutMs: burstWaitMs(config, plan.count), everyMs: 10 },
    );
    const most = Math.max(0, ...claims.values());
    const index = cluster.replicas.findIndex((r) => (claims.get(r.label) ?? 0) === most);
    const victim = cluster.replicas[Math.max(0, index)];
    if (victim === undefined) throw new Error("failover: no replica");
    victim.kill();
    const killedAt = Date.now();
    const held = await openClaimsOf(store.url, victim.label);
    progress(
      scope,
      `killed ${victim.label} ${killedAt - dueAt} ms after the instant, holding ${held.length} claims`,
    );
    let recoveredAt: number | null = null;
    const deadline = burstWaitMs(config, plan.count) + 2 * DEFAULT_LEASE_MS;
    const done = await waitUntil(
      async () => {
        if (
          recoveredAt === null &&
          (await openClaimsOf(store.url, victim.label, held)).length === 0
        ) {
          recoveredAt = Date.now();
          progress(
            scope,
            `its claims were taken over or reconciled after ${recoveredAt - killedAt} ms`,
          );
        }
        // Every occurrence decided and none unfinished: the survivor admits the rest in rounds.
        return (
          recoveredAt !== null &&
          (await countDecided(store, window)) >= plan.count &&
          (await countUnfinished(store, window)) === 0
        );
      },
      {
        timeoutMs: deadline,
        everyMs: 250,
        onTick: () => {
          const seconds = Math.floor((Date.now() - killedAt) / 1000);
          if (seconds % 10 === 0) progress(scope, `${seconds} s after the kill`);
        },
      },
    );
    await cluster.stopReplicas();
    const runs = await readRuns(store, window);
    const finished = runs.flatMap((r) => (r.finishedAt === null ? [] : [r.finishedAt]));
    const expected = new Set(setUp.ids.map((id) => `${id}@${dueAt}`));
    const entries = burstLedger(readLedgers(cluster.ledgers), expected, dueAt);
    const check = checkLedger(entries, expected);
    const recorded = new Set(entries.map((e) => e.occurrence));
    const ledgerLost = runs.filter(
      (r) =>
        r.status === "succeeded" &&
        r.claimedBy === victim.label &&
        !recorded.has(`${r.taskId}@${r.scheduledFor}`) &&
        expected.has(`${r.taskId}@${r.scheduledFor}`),
    ).length;
    const heldTasks = await taskIdsOf(store.url, held);
    return {
      system: "punctual",
      target: "pg2",
      label: "punctual, PostgreSQL, 2 replicas, one killed mid-burst",
      tasks: plan.count,
      killedAfterMs: killedAt - dueAt,
      victim: victim.label,
      heldAtKill: held.length,
      recoveredMs: recoveryMs(
        runs.filter((r) => heldTasks.has(r.taskId)),
        killedAt,
        recoveredAt,
      ),
      heldOutcome: statusCounts(runs.filter((r) => heldTasks.has(r.taskId))),
      totalMs: done && finished.length > 0 ? Math.max(...finished) - dueAt : null,
      undisturbedTotalMs: undisturbed.allCompletedMs,
      executions: check.executions,
      duplicates: check.extraExecutions,
      notExecuted: check.losses - ledgerLost,
      ledgerLost,
      statuses: statusCounts(runs),
      leaseMs: DEFAULT_LEASE_MS,
      livenessMs: DEFAULT_LIVENESS_MS,
      timedOut: !done,
    };
  } finally {
    await cluster.dispose();
  }
}

/**
 * Kill to the end of the last of the victim's claims, from the runs table (the poll that noticed it
 * runs every 250 ms through a loaded machine); the poll's time when some are still open.
 */
function recoveryMs(
  held: readonly { readonly finishedAt: number | null }[],
  killedAt: number,
  noticedAt: number | null,
): number | null {
  if (noticedAt === null) return null;
  const ends = held.map((r) => r.finishedAt);
  if (ends.length === 0 || ends.some((t) => t === null)) return noticedAt - killedAt;
  return Math.max(...(ends as number[])) - killedAt;
}

/** The task ids of the given runs (a run record names its task, and a once task has one run). */
async function taskIdsOf(url: string, runIds: readonly string[]): Promise<Set<string>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const result = await db.query<{ task_id: string }>(
      "SELECT task_id FROM punctual.runs WHERE id = ANY($1::text[])",
      [runIds],
    );
    return new Set(result.rows.map((r) => r.task_id));
  } finally {
    await db.end();
  }
}

export async function failover(config: BenchConfig): Promise<FailoverFigures[]> {
  const plan: BurstPlan = {
    scenario: FAILOVER,
    count: config.failoverTasks,
    input: onceInput,
    creation: bestCreation(config),
    variant: "as-created",
  };
  const undisturbed = await punctualBurst(config, "pg2", plan);
  progress(
    FAILOVER,
    `undisturbed: all ended ${undisturbed.allCompletedMs ?? "–"} ms after the instant`,
  );
  return [await killedBurst(config, plan, undisturbed)];
}
