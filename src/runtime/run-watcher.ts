/**
 * The run watcher (docs/semantics.md#launch, docs/semantics.md#completion): for targets whose server is the source of truth about a run (agent
 * servers), it asks about every running run at an interval. A run with a known target run id is observed
 * and its verdict recorded when it has finished; a run whose launch was uncertain (no target run id) is
 * reconciled once its request can no longer be in flight: found -> its id is recorded, absent -> queued
 * again. It never launches anything: a relaunch goes through the queue, the claim and its fencing.
 *
 * Webhooks from the target (the agent server's run webhook) only make this faster; polling stays the
 * safety net, since such webhooks are best-effort.
 */
import type { RecoverySweeps } from "../application/dispatch/recovery-sweeps.js";
import type { RunWrites } from "../application/dispatch/run-writes.js";
import type { Logger } from "../application/events/logger.js";
import { silentLogger } from "../application/events/logger.js";
import type { RunId } from "../domain/ids.js";
import type { ClaimedRun } from "../domain/ports/run-repository.js";
import type { RunLauncher } from "../domain/ports/run-launcher.js";
import type { TargetKind } from "../domain/target.js";
import type { Instant } from "../domain/time.js";
import type { Clock } from "./clock.js";

export interface RunWatcherOptions {
  /** How often the running runs are asked about. @default 5000 */
  readonly intervalMs?: number;
  /**
   * How long after an uncertain launch its target is searched, when the launcher does not say
   * (`reconcileDelayMs`). @default 10000
   */
  readonly reconcileDelayMs?: number;
  /** Questions to targets in flight at once. @default 8 */
  readonly concurrency?: number;
}

export interface RunWatcherDeps {
  /** Lists the running runs and records what an uncertain launch's target said. */
  readonly recovery: RecoverySweeps;
  /** Records the verdicts the targets give. */
  readonly runWrites: RunWrites;
  readonly launcher: RunLauncher;
  readonly clock: Clock;
  /** The target kinds whose runs are watched (those the launcher `watches`). */
  readonly targetKinds: readonly TargetKind[];
  readonly logger?: Logger;
  readonly options?: RunWatcherOptions;
  /** Called after a run changed (a verdict frees slots: the coordinator wakes to use them). */
  readonly changed?: () => void;
}

const PAGE = 200;

export class RunWatcher {
  readonly #deps: RunWatcherDeps;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #reconcileDelayMs: number;
  readonly #concurrency: number;
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #failing = false;

  constructor(deps: RunWatcherDeps) {
    this.#deps = deps;
    this.#log = deps.logger ?? silentLogger;
    this.#intervalMs = deps.options?.intervalMs ?? 5000;
    this.#reconcileDelayMs = deps.options?.reconcileDelayMs ?? 10_000;
    this.#concurrency = Math.max(1, deps.options?.concurrency ?? 8);
  }

  /** Starts watching (idempotent); nothing to do when no target kind is watched. */
  start(): void {
    if (this.#loop !== null || this.#deps.targetKinds.length === 0) return;
    this.#loop = this.#run();
  }

  /** Stops after the question in flight; no verdict is half-recorded (each is one store write). */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** One pass over every watched running run. Tests and the loop call it. */
  async pass(): Promise<void> {
    for (const kind of this.#deps.targetKinds) {
      let after: RunId | null = null;
      for (;;) {
        if (this.#stop.signal.aborted) return;
        const page: readonly ClaimedRun[] = await this.#deps.recovery.runningRuns(
          kind,
          after,
          PAGE,
        );
        await this.#each(page);
        if (page.length < PAGE) break;
        after = page[page.length - 1]?.run.id ?? null;
      }
    }
  }

  async #run(): Promise<void> {
    const { clock } = this.#deps;
    while (!this.#stop.signal.aborted) {
      try {
        await this.pass();
        if (this.#failing) this.#log.info({}, "the run watcher reads the store again");
        this.#failing = false;
      } catch (error) {
        if (!this.#failing) this.#log.warn({ err: error }, "the run watcher's pass failed");
        this.#failing = true;
      }
      await clock.sleepUntil((clock.now() + this.#intervalMs) as Instant, this.#stop.signal);
    }
  }

  /** Asks about each run, a few at a time. */
  async #each(items: readonly ClaimedRun[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length && !this.#stop.signal.aborted) {
        const item = items[next++];
        if (item !== undefined) await this.#ask(item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, items.length) }, worker));
  }

  async #ask({ run, task }: ClaimedRun): Promise<void> {
    const { recovery, runWrites, launcher, clock } = this.#deps;
    if (launcher.watches?.(task) !== true) return;
    try {
      if (run.targetRunId === null) {
        const delay = launcher.reconcileDelayMs?.(task) ?? this.#reconcileDelayMs;
        if (run.launchedAt === null || clock.now() - run.launchedAt < delay) return;
        const finding = await launcher.reconcile(run, task, this.#stop.signal);
        const change = await recovery.recordUncertainReconciliation(
          run.id,
          run.attempt,
          finding,
          clock.now(),
        );
        if (change !== null) {
          this.#deps.changed?.();
          this.#log.info(
            { runId: run.id, found: finding.kind, status: change.run.status },
            "reconciled an uncertain launch with its target",
          );
        }
        return;
      }
      if (launcher.observe === undefined) return;
      const seen = await launcher.observe(run, task, this.#stop.signal);
      if (seen.kind !== "finished") return;
      const change = await runWrites.recordTargetVerdict(
        run.id,
        run.targetRunId,
        seen.verdict,
        clock.now(),
      );
      if (change !== null) this.#deps.changed?.();
    } catch (error) {
      this.#log.warn({ err: error, runId: run.id }, "could not ask a target about a running run");
    }
  }
}
