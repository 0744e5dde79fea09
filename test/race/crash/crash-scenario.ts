/**
 * One crash scenario end to end: worker processes on a shared database, once and interval tasks created
 * through the library from the test process, a disturbance (SIGKILLs, a database restart), a bounded
 * wait on the ledger until everything due is decided and settled, a graceful stop, and the ledger check.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { createScheduler } from "../../../src/composition.js";
import type { StoreFactory } from "../../../src/domain/ports/store.js";
import { ROOT } from "../../e2e/build.js";
import { waitFor } from "../../e2e/process.js";
import { checkLedger, formatReport } from "./ledger-check.js";
import type { LedgerReport, Workload } from "./ledger-check.js";
import type { LedgerProgress, LedgerSource } from "./ledger-source.js";
import {
  RECORDING_HANDLER_NAMES,
  readExecutions,
  writeRecordingHandlers,
} from "./recording-handlers.js";
import { ReplicaFleet } from "./replica-fleet.js";

/** The lease the workers are given when the CLI has a knob for it (`--lease-seconds`). */
const LEASE_SECONDS = 3;

/** Runs queued for less than this at the stop are pending for the next replica, not stuck. */
const PENDING_WINDOW_MS = 5000;

export interface ScenarioOptions {
  readonly title: string;
  /** A temporary directory: the handlers module and the executions files go there. */
  readonly dir: string;
  /** The database, for the client that creates the tasks. */
  readonly store: StoreFactory;
  readonly ledger: LedgerSource;
  /** `--database ...` and any other worker flags. */
  readonly workerArgs: readonly string[];
  readonly replicas: number;
  readonly onceTasks: number;
  readonly intervalTasks: number;
  /** Each handler holds its run for a random 0..this many ms. */
  readonly handlerMaxMs: number;
  /** Arguments for one slot only (replica-fleet.ts). */
  readonly slotArgs?: (slot: number) => readonly string[];
  /** Environment for one slot only (replica-fleet.ts). */
  readonly slotEnv?: (slot: number) => Readonly<Record<string, string>>;
  /** Runs after the tasks are created, while the workers work. */
  readonly disturb: (fleet: ReplicaFleet) => Promise<void>;
  /**
   * How long the ledger may take to settle after the disturbance: every occurrence decided by then, on a
   * quiet host and in the loaded pass alike (docs/operations.md#on-a-loaded-host). @default 25000
   */
  readonly settleTimeoutMs?: number;
  /**
   * Give the workers a short lease when the CLI can (`--lease-seconds`), so killed replicas' claims
   * expire within the test. A test that silences every replica longer than that (a database outage)
   * keeps the default, or live replicas would be declared lost. @default true
   */
  readonly shortLease?: boolean;
}

export interface ScenarioResult {
  readonly report: LedgerReport;
  readonly fleet: ReplicaFleet;
  readonly exits: Awaited<ReturnType<ReplicaFleet["stop"]>>;
  readonly workload: Workload;
  /** Whether the workers ran with a short lease (else killed replicas' claims stay in doubt). */
  readonly shortLease: boolean;
  readonly timings: Readonly<Record<string, number>>;
}

let leaseFlag: Promise<boolean> | null = null;

/** Whether `punctual worker` takes `--lease-seconds` (asked once). */
export function workerHasLeaseFlag(): Promise<boolean> {
  leaseFlag ??= promisify(execFile)(process.execPath, [
    join(ROOT, "bin", "punctual.js"),
    "worker",
    "--help",
  ]).then(({ stdout }) => stdout.includes("--lease-seconds"));
  return leaseFlag;
}

function wholeSecondIn(ms: number): string {
  return new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString();
}

/** Creates the interval tasks (every second), then the once tasks due 2..12 s after each creation. */
export async function createWorkload(
  store: StoreFactory,
  counts: { readonly once: number; readonly interval: number },
): Promise<Workload> {
  const client = createScheduler({ store, handlers: RECORDING_HANDLER_NAMES });
  const target = { kind: "handler", name: "record" };
  const once = new Map<string, number>();
  const interval = new Map<string, { firstAt: number; everyMs: number }>();
  try {
    for (let i = 0; i < counts.interval; i++) {
      const { task } = await client.tasks.create({
        title: `interval ${i}`,
        schedule: { type: "interval", every: "PT1S" },
        target,
      });
      if (task.next_run_at === null) throw new Error(`interval task ${task.id} has no next run`);
      interval.set(task.id, { firstAt: Date.parse(task.next_run_at), everyMs: 1000 });
    }
    const chunk = 20;
    for (let from = 0; from < counts.once; from += chunk) {
      const size = Math.min(chunk, counts.once - from);
      await Promise.all(
        Array.from({ length: size }, async (_, k) => {
          const runAt = wholeSecondIn(2000 + ((from + k) % 10) * 1000);
          const { task } = await client.tasks.create({
            title: `once ${from + k}`,
            schedule: { type: "once", run_at: runAt },
            target,
          });
          once.set(task.id, Date.parse(runAt));
        }),
      );
    }
  } finally {
    await client.stop();
  }
  return { once, interval };
}

/** What still keeps the ledger from being settled, or null when nothing does. */
function unsettled(
  progress: LedgerProgress,
  expect: {
    once: number;
    decidedThrough: number;
    killed: ReadonlySet<string>;
    shortLease: boolean;
  },
): string | null {
  if (progress.onceDecided < expect.once) {
    return `${expect.once - progress.onceDecided} once tasks undecided`;
  }
  if (
    progress.intervalDecidedThrough !== null &&
    progress.intervalDecidedThrough < expect.decidedThrough
  ) {
    return `interval tasks decided through ${new Date(progress.intervalDecidedThrough).toISOString()} only`;
  }
  const waiting = progress.active.filter(
    (a) =>
      a.status !== "queued" &&
      !(!expect.shortLease && a.claimedBy !== null && expect.killed.has(a.claimedBy)),
  );
  if (waiting.length > 0) return `active runs: ${JSON.stringify(waiting)}`;
  // A run queued longer than the check's pending window is one the fleet has not got to yet.
  if (progress.oldestQueued !== null && progress.oldestQueued < Date.now() - PENDING_WINDOW_MS) {
    return `a run queued since ${new Date(progress.oldestQueued).toISOString()}`;
  }
  return null;
}

/** Runs the scenario and checks the ledger; the caller asserts on the result. */
export async function runCrashScenario(given: ScenarioOptions): Promise<ScenarioResult> {
  // The loaded pass (vitest.loaded.config.ts) runs the same scenario with busy loops taking the CPU.
  const options =
    (process.env.PUNCTUAL_LOADED_PASS ?? "") === ""
      ? given
      : { ...given, title: `${given.title} (loaded: busy loops on every core)` };
  const timings: Record<string, number> = {};
  let mark = Date.now();
  const lap = (name: string): void => {
    timings[name] = Date.now() - mark;
    mark = Date.now();
  };
  const shortLease = (options.shortLease ?? true) && (await workerHasLeaseFlag());
  const handlers = writeRecordingHandlers(options.dir);
  const fleet = new ReplicaFleet({
    size: options.replicas,
    args: [
      "--handlers",
      handlers,
      ...options.workerArgs,
      // Room for the claims that die with killed replicas until their leases expire.
      "--max-concurrent-runs",
      "1000",
      // The same 3 s for the liveness timeout: a killed replica's handler runs are lost after it.
      ...(shortLease
        ? ["--lease-seconds", String(LEASE_SECONDS), "--liveness-timeout", String(LEASE_SECONDS)]
        : []),
    ],
    cwd: options.dir,
    env: { CRASH_OUT: options.dir, CRASH_HANDLER_MAX_MS: String(options.handlerMaxMs) },
    ...(options.slotArgs === undefined ? {} : { slotArgs: options.slotArgs }),
    ...(options.slotEnv === undefined ? {} : { slotEnv: options.slotEnv }),
    isBusy: async (replicaId) =>
      (await options.ledger.progress()).active.some(
        (a) => a.claimedBy === replicaId && a.status !== "queued",
      ),
  });
  try {
    await fleet.start();
    lap("start");
    const workload = await createWorkload(options.store, {
      once: options.onceTasks,
      interval: options.intervalTasks,
    });
    lap("create");
    await options.disturb(fleet);
    lap("disturb");
    const disturbedUntil = Date.now();
    let last: string | null = null;
    await waitFor(
      async () => {
        last = unsettled(await options.ledger.progress(), {
          once: options.onceTasks,
          decidedThrough: disturbedUntil,
          killed: fleet.killed,
          shortLease,
        });
        return last === null ? true : undefined;
      },
      {
        timeoutMs: options.settleTimeoutMs ?? 25_000,
        what: `${options.title}: the ledger to settle`,
        describe: () => `${String(last)}\n${fleet.tails()}`,
      },
    );
    lap("settle");
    const stopAt = Date.now();
    const exits = await fleet.stop();
    lap("stop");
    const report = checkLedger(await options.ledger.read(), {
      workload,
      executions: readExecutions(options.dir),
      killedReplicas: fleet.killed,
      allowInDoubt: !shortLease,
      // Runs admitted in the last moments before the stop wait for the next replica: pending, not lost.
      pendingAfter: stopAt - PENDING_WINDOW_MS,
    });
    lap("check");
    const timing = Object.entries(timings)
      .map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s`)
      .join(", ");
    console.log(
      `${formatReport(
        `${options.title}: ${options.replicas} replicas, ${options.onceTasks} once + ${options.intervalTasks} interval tasks, ${fleet.kills} SIGKILLs, lease ${shortLease ? `${LEASE_SECONDS} s` : "60 s (no --lease-seconds)"}`,
        report,
      )}\n  timings: ${timing}`,
    );
    return { report, fleet, exits, workload, shortLease, timings };
  } catch (error) {
    console.error(`[crash] ${options.title} failed; worker output:\n${fleet.tails(40)}`);
    throw error;
  } finally {
    await fleet.destroy();
  }
}
