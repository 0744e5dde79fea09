/**
 * Recovery in seconds (docs/operations.md#what-happens-on-a-crash): two `punctual worker` processes with
 * the default 60 s lease and a 2 s liveness timeout; once tasks come due together, each handler holding
 * its run for a few seconds; the worker holding the most claims is SIGKILLed mid-burst. Every run it held
 * must be executed again by the survivor (a retry of the lost attempt) and succeed, found by a bounded
 * wait on the ledger and the executions that ends long before any lease could expire. The figure it
 * prints, kill to the last stranded run executing on the survivor, is the one docs/operations.md quotes.
 */
import { createScheduler } from "../../../src/composition.js";
import type { StoreFactory } from "../../../src/domain/ports/store.js";
import { waitFor } from "../../e2e/process.js";
import type { LedgerRun } from "./ledger-check.js";
import type { LedgerSource } from "./ledger-source.js";
import {
  RECORDING_HANDLER_NAMES,
  readExecutions,
  writeRecordingHandlers,
} from "./recording-handlers.js";
import type { Execution } from "./recording-handlers.js";
import { ReplicaFleet } from "./replica-fleet.js";

/** The liveness timeout the workers get, in seconds. */
export const FAILOVER_LIVENESS_SECONDS = 2;

/** The lease the workers keep (the default): recovery must not wait for it. */
const LEASE_MS = 60_000;

export interface FailoverOptions {
  readonly title: string;
  readonly dir: string;
  readonly store: StoreFactory;
  readonly ledger: LedgerSource;
  readonly workerArgs: readonly string[];
  readonly tasks: number;
}

export interface FailoverResult {
  /** Runs the killed worker held (launching or running) when it died. */
  readonly stranded: number;
  /** From the SIGKILL to the last stranded run's execution on the survivor, in ms. */
  readonly recoveryMs: number;
  /** Executions grouped by run and attempt that happened more than once. */
  readonly duplicates: number;
  /** Once tasks whose run did not succeed. */
  readonly notSucceeded: readonly LedgerRun[];
  readonly exits: Awaited<ReturnType<ReplicaFleet["stop"]>>;
}

async function createTasks(store: StoreFactory, count: number): Promise<void> {
  const client = createScheduler({ store, handlers: RECORDING_HANDLER_NAMES });
  // One batch, so that a loaded host cannot spend the 3 s lead creating them one by one (the first
  // run_at would then be in the past for the last ones, and refused).
  const runAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000).toISOString();
  try {
    await client.tasks.createMany(
      Array.from({ length: count }, (_, i) => ({
        title: `failover ${i}`,
        schedule: { type: "once", run_at: runAt },
        target: { kind: "handler", name: "record" },
        // A lost attempt is retried (after about a second) on whichever replica is alive.
        options: { retry: { max_attempts: 2, initial: "PT1S" } },
      })),
    );
  } finally {
    await client.stop();
  }
}

function activeOf(runs: readonly LedgerRun[], replicaId: string): LedgerRun[] {
  return runs.filter(
    (run) =>
      run.claimedBy === replicaId && (run.status === "launching" || run.status === "running"),
  );
}

/** Runs the scenario; the caller asserts on the result. */
export async function runFailoverScenario(options: FailoverOptions): Promise<FailoverResult> {
  const handlers = writeRecordingHandlers(options.dir);
  const fleet = new ReplicaFleet({
    size: 2,
    args: [
      "--handlers",
      handlers,
      ...options.workerArgs,
      "--liveness-timeout",
      String(FAILOVER_LIVENESS_SECONDS),
      "--tick",
      "250ms",
      "--sweep-period",
      "250ms",
    ],
    cwd: options.dir,
    env: { CRASH_OUT: options.dir, CRASH_HANDLER_MAX_MS: "4000" },
  });
  try {
    await fleet.start();
    await createTasks(options.store, options.tasks);
    // Mid-burst: wait until claims are held, then kill the worker holding the most (on SQLite one
    // process often claims the whole budget; the other is then the idle survivor).
    const members = fleet.live;
    const held = await waitFor(
      async () => {
        const runs = (await options.ledger.read()).runs;
        const counts = members.map((m) => activeOf(runs, m.replicaId).length);
        return counts.some((n) => n > 0) ? counts : undefined;
      },
      { timeoutMs: 20_000, what: `${options.title}: a worker to hold claims` },
    );
    const slot = held[0]! >= held[1]! ? 0 : 1;
    const victim = (await fleet.kill(slot))!;
    const killedAt = Date.now();
    const stranded = activeOf((await options.ledger.read()).runs, victim.replicaId);
    const strandedIds = new Set(stranded.map((run) => run.id));
    // The observable event: each stranded run executed by the survivor, then succeeded.
    const elsewhere = await waitFor(
      async () => {
        const executions = readExecutions(options.dir).filter(
          (e) => strandedIds.has(e.run_id) && e.replica !== victim.label,
        );
        const runs = (await options.ledger.read()).runs.filter((run) => strandedIds.has(run.id));
        const done = runs.every((run) => run.status === "succeeded");
        return done && new Set(executions.map((e) => e.run_id)).size === strandedIds.size
          ? executions
          : undefined;
      },
      {
        // Bounded well under the lease: waiting out a 60 s lease cannot pass.
        timeoutMs: LEASE_MS / 2,
        what: `${options.title}: the killed worker's runs to run elsewhere`,
        describe: () => fleet.tails(),
      },
    );
    const recoveryMs = Math.max(...firstPerRun(elsewhere).map((e) => e.at - killedAt));
    // Nothing lost: the rest of the burst drains on the survivor too (within its owner's share of the
    // budget, so it may take a few handler lengths) before the fleet stops.
    await waitFor(
      async () => {
        const runs = (await options.ledger.read()).runs;
        return runs.length >= options.tasks && runs.every((run) => run.status === "succeeded")
          ? true
          : undefined;
      },
      {
        timeoutMs: LEASE_MS / 2,
        what: `${options.title}: every run of the burst to succeed`,
        describe: () => fleet.tails(),
      },
    );
    const exits = await fleet.stop();
    const ledger = await options.ledger.read();
    const all = readExecutions(options.dir);
    const perAttempt = new Map<string, number>();
    for (const e of all) {
      const key = `${e.run_id}#${String(e.attempt)}`;
      perAttempt.set(key, (perAttempt.get(key) ?? 0) + 1);
    }
    const result: FailoverResult = {
      stranded: stranded.length,
      recoveryMs,
      duplicates: [...perAttempt.values()].filter((n) => n > 1).length,
      notSucceeded: ledger.runs.filter((run) => run.status !== "succeeded"),
      exits,
    };
    console.log(
      `[failover] ${options.title}: ${String(options.tasks)} once tasks, lease 60 s, liveness ` +
        `${String(FAILOVER_LIVENESS_SECONDS)} s: SIGKILL of the worker holding ${String(stranded.length)} ` +
        `runs; all ran elsewhere ${(recoveryMs / 1000).toFixed(1)} s after the kill; ` +
        `duplicates ${String(result.duplicates)}, not succeeded ${String(result.notSucceeded.length)}`,
    );
    return result;
  } catch (error) {
    console.error(`[failover] ${options.title} failed; worker output:\n${fleet.tails(40)}`);
    throw error;
  } finally {
    await fleet.destroy();
  }
}

/** The first execution of each run among `executions`. */
function firstPerRun(executions: readonly Execution[]): Execution[] {
  const first = new Map<string, Execution>();
  for (const e of executions) {
    const seen = first.get(e.run_id);
    if (seen === undefined || e.at < seen.at) first.set(e.run_id, e);
  }
  return [...first.values()];
}
