/**
 * The coordinator's shutdown drain (docs/architecture.md#cadence): launches in flight and handlers
 * running in this process get the shutdown timeout to finish; handlers still running then are handed
 * back (aborted, recorded lost with this replica) and get a short while more for their verdicts. Claims
 * are never released early: launches left in flight keep theirs until they expire and are reconciled.
 */
import type { Logger } from "../application/events/logger.js";
import type { Instant } from "../domain/time.js";
import type { Clock } from "./clock.js";

/** How long handlers aborted at shutdown get to stop and have their verdicts recorded. */
const HAND_BACK_MS = 2000;

export interface ShutdownDrainDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Runs this process executes itself (the coordinator's `InProcessRuns`), when it has any. */
  readonly inProcess:
    { readonly running: number; settled(): Promise<void>; abandon(): void } | undefined;
  /** How long launches in flight and running handlers get to finish. */
  readonly timeoutMs: number;
  /** Resolves once every launch in flight and every background write has settled. */
  readonly settle: () => Promise<void>;
  /** Launches in flight now. */
  readonly inFlight: () => number;
}

/** Waits for the work in flight within the timeout, then hands back the handlers still running. */
export async function drainForShutdown(deps: ShutdownDrainDeps): Promise<void> {
  const { clock, inProcess } = deps;
  // Launches in flight and handlers running here get the shutdown timeout to finish.
  const deadline = (clock.now() + deps.timeoutMs) as Instant;
  await until(clock, deadline, Promise.all([deps.settle(), inProcess?.settled()]));
  if (inProcess !== undefined && inProcess.running > 0) {
    // docs/architecture.md#cadence: handed back per their signal; a handler that stops is recorded lost with this replica.
    deps.log.warn(
      { handlers: inProcess.running },
      "handing back handler runs still running at the shutdown timeout",
    );
    inProcess.abandon();
    const handBack = inProcess.settled().then(() => deps.settle());
    await until(clock, (clock.now() + HAND_BACK_MS) as Instant, handBack);
  }
  if (deps.inFlight() > 0) {
    deps.log.warn(
      { launches: deps.inFlight() },
      "stopped with launches in flight; their claims will expire and be reconciled",
    );
  }
}

/** Waits for `work`, or until `deadline` on the clock, whichever comes first. */
async function until(clock: Clock, deadline: Instant, work: Promise<unknown>): Promise<void> {
  const timeout = new AbortController();
  await Promise.race([work, clock.sleepUntil(deadline, timeout.signal)]);
  timeout.abort();
}
